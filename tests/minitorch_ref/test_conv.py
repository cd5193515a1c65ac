"""Conv2d, MaxPool2d, AvgPool2d, im2col and col2im: gradients against finite differences,
the errors a student meets, and the properties the unit teaches (weight layout, ties,
adjointness). PyTorch parity is in ``parity/test_parity_conv.py``."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn
from minitorch_ref.gradcheck import check_module

from helpers import assert_gradients_ok, build, randn

CONV_PARAMS = ("weight", "bias")

# (id, factory, input shape, parameters to check)
CASES = [
    ("conv", lambda: nn.Conv2d(2, 3, 3), (2, 2, 5, 5), CONV_PARAMS),
    ("conv_stride_padding", lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1), (2, 2, 5, 7),
     CONV_PARAMS),
    ("conv_rectangular", lambda: nn.Conv2d(3, 2, (2, 3), stride=(1, 2), padding=(1, 0)),
     (1, 3, 4, 7), CONV_PARAMS),
    ("conv_no_bias", lambda: nn.Conv2d(1, 2, 2, bias=False), (3, 1, 4, 4), ("weight",)),
    ("maxpool", lambda: nn.MaxPool2d(2), (2, 3, 4, 6), ()),
    ("maxpool_overlapping", lambda: nn.MaxPool2d(3, stride=1), (2, 2, 5, 5), ()),
    ("avgpool", lambda: nn.AvgPool2d(2), (2, 3, 4, 6), ()),
    ("avgpool_overlapping", lambda: nn.AvgPool2d((3, 2), stride=1), (1, 2, 5, 5), ()),
    ("cnn", lambda: nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3, padding=1), nn.Tanh(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(4, 3)),
     (3, 1, 4, 4), ("0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias")),
]


@pytest.mark.parametrize("name, factory, shape, params", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(name, factory, shape, params):
    model = build(factory)
    assert_gradients_ok(check_module(model, randn(*shape, seed=3)), params)


def test_a_1x1_convolution_is_a_linear_layer_at_every_pixel():
    """The weight layout (in, out, kH, kW): weight[:, :, 0, 0] is a Linear's (in, out)."""
    conv = build(lambda: nn.Conv2d(3, 4, 1))
    linear = nn.Linear(3, 4)
    linear.weight.data, linear.bias.data = conv.weight.data[:, :, 0, 0], conv.bias.data
    x = randn(2, 3, 5, 6)
    rows = x.transpose(0, 2, 3, 1).reshape(-1, 3)
    expected = linear(rows).reshape(2, 5, 6, 4).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(conv(x), expected, rtol=1e-12)


def test_the_output_is_a_cross_correlation_not_a_flipped_convolution():
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 0, 0] = 1.0                                   # one lit pixel, top left
    conv = nn.Conv2d(1, 1, 3, padding=1, bias=False)
    conv.weight.data = np.arange(9.0).reshape(1, 1, 3, 3)
    # The window at output (i, j) covers input (i - 1 + p, j - 1 + q): the lit pixel meets
    # W[p, q] = W[1 - i, 1 - j], so the output shows the filter rotated by 180 degrees.
    np.testing.assert_array_equal(conv(x)[0, 0], [[4, 3, 0], [1, 0, 0], [0, 0, 0]])


def test_initialisation_is_uniform_within_one_over_root_fan_in():
    conv = build(lambda: nn.Conv2d(8, 16, (3, 5)))
    bound = 1 / np.sqrt(8 * 3 * 5)
    assert conv.weight.shape == (8, 16, 3, 5) and conv.bias.shape == (16,)
    for values in (conv.weight.data, conv.bias.data):
        assert np.abs(values).max() <= bound
    assert abs(conv.weight.data.std() - bound / np.sqrt(3)) < 0.05 * bound
    np.testing.assert_array_equal(conv.weight.grad, 0.0)


def test_max_pool_sends_a_tied_gradient_to_the_first_maximum_only():
    x = np.array([[[[1.0, 3.0], [3.0, 3.0]]]])
    pool = nn.MaxPool2d(2)
    assert pool(x).item() == 3.0
    np.testing.assert_array_equal(pool.backward(np.ones((1, 1, 1, 1)))[0, 0], [[0, 1], [0, 0]])


def test_an_all_zero_window_sends_the_gradient_to_one_pixel():
    """After a ReLU whole windows are 0: the gradient must not be copied to all of them."""
    pool = nn.MaxPool2d(2, stride=1)
    pool(np.zeros((1, 1, 3, 3)))
    np.testing.assert_array_equal(pool.backward(np.ones((1, 1, 2, 2)))[0, 0],
                                  [[1, 1, 0], [1, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("shape, kernel, stride", [((2, 3, 5, 6), 3, 1), ((1, 2, 7, 5), (3, 2), (2, 1)),
                                                    ((2, 1, 4, 4), 2, 2)])
def test_col2im_is_the_adjoint_of_im2col(shape, kernel, stride):
    """<im2col(x), C> == <x, col2im(C)> for every x and C: the backward of im2col."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    cols = nn.im2col(x, kernel, stride)
    other = rng.standard_normal(cols.shape)
    assert np.isclose((cols * other).sum(), (x * nn.col2im(other, shape, kernel, stride)).sum())


def test_im2col_rows_are_windows_and_columns_channel_major():
    x = np.arange(2 * 2 * 3 * 3, dtype=float).reshape(2, 2, 3, 3)
    cols = nn.im2col(x, 2)
    assert cols.shape == (2 * 2 * 2, 2 * 2 * 2)
    np.testing.assert_array_equal(cols[3], x[0, :, 1:3, 1:3].ravel())    # image 0, (1, 1)
    np.testing.assert_array_equal(cols[4], x[1, :, 0:2, 0:2].ravel())    # image 1, (0, 0)


def test_float32_stays_float32_and_repr_names_the_settings():
    conv = nn.Conv2d(1, 2, 3, padding=1, dtype=np.float32)
    x = np.ones((1, 1, 4, 4), np.float32)
    assert conv(x).dtype == np.float32 and conv.backward(np.ones((1, 2, 4, 4), np.float32)).dtype == np.float32
    assert repr(conv) == "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=(2, 2), stride=(2, 2))"


def test_a_cnn_reports_its_shapes_and_saves_its_state():
    model = build(lambda: nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                        nn.Flatten(), nn.Linear(4 * 4 * 4, 10)))
    table = model.summary((1, 1, 8, 8))
    assert [row.output_shape for row in table.rows][:4] == [(1, 4, 8, 8), (1, 4, 8, 8),
                                                           (1, 4, 4, 4), (1, 64)]
    assert table.total_params == 4 * 9 + 4 + 64 * 10 + 10
    assert set(model.state_dict()) == {"0.weight", "0.bias", "4.weight", "4.bias"}


def images(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape)


ERRORS = [
    pytest.param(lambda: nn.Conv2d(3, 4, 3)(images(3, 8, 8)),
                 "Conv2d expected input of shape (N, 3, H, W), got (3, 8, 8). Did you forget the "
                 "batch dimension?", id="conv-no-batch"),
    pytest.param(lambda: nn.Conv2d(3, 4, 3)(images(2, 1, 8, 8)),
                 "Conv2d expected input of shape (N, 3, H, W), got (2, 1, 8, 8).", id="conv-channels"),
    pytest.param(lambda: nn.Conv2d(1, 4, 3)(images(2, 784)), "x.reshape(N, 1, 28, 28)",
                 id="conv-rows-of-pixels"),
    pytest.param(lambda: nn.Conv2d(1, 4, 3)(np.ones((2, 1, 8, 8), np.int64)), "int64",
                 id="conv-integers"),
    pytest.param(lambda: nn.Conv2d(1, 1, 5, padding=1)(images(1, 1, 2, 8)),
                 "kernel height 5 is larger than the padded input's height 2 + 2*1 = 4",
                 id="conv-kernel-too-large"),
    pytest.param(lambda: nn.Conv2d(1, 1, 3, stride=2)(images(1, 1, 9, 8)),
                 "the output width (8 + 2*0 - 3) / 2 + 1 is not an integer: a stride of 2 would "
                 "skip the last 1 column of the padded input", id="conv-output-not-integer"),
    pytest.param(lambda: nn.Conv2d(1, 1, 3, stride=3)(images(1, 1, 8, 3)),
                 "skip the last 2 rows", id="conv-two-rows-lost"),
    pytest.param(lambda: nn.Conv2d(0, 1, 3), "positive channels", id="conv-no-channels"),
    pytest.param(lambda: nn.Conv2d(1, 1, 3, padding=-1), "padding of 0 or more",
                 id="conv-negative-padding"),
    pytest.param(lambda: nn.Conv2d(1, 1, (3, 3, 3)), "kernel_size must be an int or a pair",
                 id="conv-kernel-triple"),
    pytest.param(lambda: nn.Conv2d(1, 1, 2.5), "kernel_size must be an int or a pair",
                 id="conv-kernel-float"),
    pytest.param(lambda: nn.MaxPool2d(2)(images(3, 8, 8)),
                 "MaxPool2d expected input of shape (N, C, H, W), got (3, 8, 8). Did you forget",
                 id="maxpool-no-batch"),
    pytest.param(lambda: nn.AvgPool2d(2)(images(1, 1, 7, 8)),
                 "AvgPool2d: the output height (7 - 2) / 2 + 1 is not an integer", id="avgpool-odd"),
    pytest.param(lambda: nn.MaxPool2d(4)(images(1, 1, 3, 8)),
                 "kernel height 4 is larger than the input's height 3. Use a smaller kernel.",
                 id="maxpool-kernel-too-large"),
    pytest.param(lambda: nn.MaxPool2d(2, stride=0), "positive kernel_size and stride",
                 id="maxpool-stride-0"),
]


@pytest.mark.parametrize("action, fragment", ERRORS)
def test_bad_input_raises_a_value_error_that_says_what_to_fix(action, fragment):
    with pytest.raises(ValueError) as info:
        action()
    assert fragment in str(info.value)


@pytest.mark.parametrize("make", [lambda: nn.Conv2d(1, 2, 3), lambda: nn.MaxPool2d(2),
                                  lambda: nn.AvgPool2d(2)], ids=["Conv2d", "MaxPool2d", "AvgPool2d"])
def test_backward_checks_it_follows_a_forward_of_the_right_shape(make):
    layer = make()
    name = type(layer).__name__
    with pytest.raises(RuntimeError, match=rf"{name}.backward\(\) was called before forward"):
        layer.backward(images(1, 2, 2, 2))
    out = layer(images(2, 1, 4, 4))
    with pytest.raises(ValueError) as info:
        layer.backward(images(2, 1, 4, 4, 1))
    assert f"grad_output must have shape {out.shape}" in str(info.value)
