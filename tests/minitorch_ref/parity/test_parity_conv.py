"""PyTorch parity of the spatial layers in float64: Conv2d (strides, padding, rectangular
kernels, no bias), MaxPool2d with ties as torch routes them, AvgPool2d, im2col and col2im
against torch's ``unfold`` and ``fold``, and a small CNN end to end."""
import numpy as np
import pytest

from minitorch_ref import nn as mnn

from .conftest import assert_close, needs_torch, to_torch, torch, twin
from .test_parity_nn import SEEDS, check_forward_backward

pytestmark = needs_torch

# (in, out, kernel, stride, padding, input height and width)
CONVS = [
    pytest.param((3, 4, 3, 1, 0, (7, 7)), id="3x3"),
    pytest.param((1, 2, 3, 1, 1, (5, 5)), id="same-padding"),
    pytest.param((2, 5, 3, 2, 1, (9, 7)), id="stride2-padding1"),
    pytest.param((2, 3, (3, 2), (2, 1), (1, 0), (7, 6)), id="rectangular"),
    pytest.param((4, 2, 1, 1, 0, (3, 4)), id="1x1"),
    pytest.param((1, 1, 5, 1, 2, (5, 5)), id="kernel-the-size-of-the-input"),
    pytest.param((2, 3, 2, 2, 0, (6, 8)), id="stride-equals-kernel"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("config", CONVS)
def test_conv2d(config, bias, n, seed):
    c_in, c_out, kernel, stride, padding, size = config
    rng = np.random.default_rng(seed)
    module = mnn.Conv2d(c_in, c_out, kernel, stride, padding, bias=bias, rng=rng)
    check_forward_backward(module, twin(module), rng.standard_normal((n, c_in, *size)), rng)


def test_conv2d_default_init_has_torchs_bounds():
    ours = mnn.Conv2d(6, 4, (3, 5))
    theirs = torch.nn.Conv2d(6, 4, (3, 5), dtype=torch.float64)
    bound = 1 / np.sqrt(6 * 3 * 5)
    for name in ("weight", "bias"):
        expected = getattr(theirs, name).detach().abs().max().item()
        assert np.abs(getattr(ours, name).data).max() <= bound and expected <= bound


POOLS = [
    pytest.param((2, None), id="k2"),
    pytest.param((3, 1), id="k3-stride1-overlapping"),
    pytest.param(((2, 3), (2, 1)), id="rectangular"),
    pytest.param((3, 3), id="k3"),
]


def small_integers(rng, shape):
    """Values in {0, 1, 2}: most windows hold tied maxima, as after a ReLU or in images."""
    return rng.integers(0, 3, shape).astype(np.float64)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("values", ["normal", "ties"])
@pytest.mark.parametrize("pool", [mnn.MaxPool2d, mnn.AvgPool2d], ids=["max", "avg"])
@pytest.mark.parametrize("config", POOLS)
def test_pooling(config, pool, values, seed):
    rng = np.random.default_rng(seed)
    module = pool(*config)
    shape = (3, 2, 6, 6)
    x = small_integers(rng, shape) if values == "ties" else rng.standard_normal(shape)
    check_forward_backward(module, twin(module), x, rng)


def test_max_pool_routes_ties_to_the_first_maximum_row_by_row():
    x = np.array([[[[0.0, 2.0, 1.0], [2.0, 2.0, 0.0], [1.0, 0.0, 2.0]]]])
    module = mnn.MaxPool2d(2, stride=1)
    check_forward_backward(module, twin(module), x, np.random.default_rng(0))
    module(x)
    grad = module.backward(np.ones((1, 1, 2, 2)))
    np.testing.assert_array_equal(grad[0, 0], [[0, 2, 0], [1, 1, 0], [0, 0, 0]])


UNFOLDS = [((2, 3, 7, 9), (3, 2), (2, 1)), ((1, 2, 5, 5), 3, 1), ((3, 1, 6, 4), 2, 2)]


@pytest.mark.parametrize("shape, kernel, stride", UNFOLDS)
def test_im2col_is_unfold_transposed_and_col2im_is_fold(shape, kernel, stride):
    x = np.random.default_rng(1).standard_normal(shape)
    cols = mnn.im2col(x, kernel, stride)
    functional = torch.nn.functional
    unfolded = functional.unfold(to_torch(x), kernel, stride=stride)          # (N, C*kH*kW, L)
    expected = unfolded.transpose(1, 2).reshape(-1, unfolded.shape[1])
    assert_close(cols, expected, "im2col")
    rows = np.random.default_rng(2).standard_normal(cols.shape)
    folded = functional.fold(to_torch(rows).reshape(shape[0], -1, rows.shape[1]).transpose(1, 2),
                             shape[2:], kernel, stride=stride)
    assert_close(mnn.col2im(rows, shape, kernel, stride), folded, "col2im")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_small_cnn_end_to_end(seed):
    rng = np.random.default_rng(seed)
    model = mnn.Sequential(
        mnn.Conv2d(1, 4, 3, padding=1, rng=rng), mnn.ReLU(), mnn.MaxPool2d(2),
        mnn.Conv2d(4, 6, 3, padding=1, rng=rng), mnn.ReLU(), mnn.AvgPool2d(2),
        mnn.Flatten(), mnn.Linear(6 * 2 * 2, 3, rng=rng))
    check_forward_backward(model, twin(model), rng.standard_normal((5, 1, 8, 8)), rng)
