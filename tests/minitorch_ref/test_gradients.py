"""Finite-difference checks of every backward pass, and of gradcheck itself."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch_ref
from minitorch_ref import nn
from minitorch_ref.gradcheck import check_loss, check_module, numerical_gradient, rel_error

from helpers import (
    GRAD_TOL, LOSS_CASES, assert_gradients_ok, build, case_ids, loss_inputs, randn, set_mode,
    warm_up,
)

LINEAR_PARAMS = ("weight", "bias")

# (id, factory, input shape, names of the parameters whose gradients must be checked)
MODULE_CASES = [
    ("linear", lambda: nn.Linear(4, 3), (5, 4), LINEAR_PARAMS),
    ("linear_no_bias", lambda: nn.Linear(4, 3, bias=False), (5, 4), ("weight",)),
    ("relu", nn.ReLU, (5, 4), ()),
    ("leaky_relu", lambda: nn.LeakyReLU(0.1), (5, 4), ()),
    ("sigmoid", nn.Sigmoid, (5, 4), ()),
    ("tanh", nn.Tanh, (5, 4), ()),
    ("gelu_exact", lambda: nn.GELU("none"), (5, 4), ()),
    ("gelu_tanh", lambda: nn.GELU("tanh"), (5, 4), ()),
    ("softmax_dim-1", lambda: nn.Softmax(dim=-1), (5, 4), ()),
    ("softmax_dim0", lambda: nn.Softmax(dim=0), (5, 4), ()),
    ("log_softmax_dim-1", lambda: nn.LogSoftmax(dim=-1), (5, 4), ()),
    ("log_softmax_dim0", lambda: nn.LogSoftmax(dim=0), (5, 4), ()),
    ("identity", nn.Identity, (5, 4), ()),
    ("flatten", nn.Flatten, (5, 2, 3), ()),
    ("flatten_middle_dims", lambda: nn.Flatten(1, 2), (4, 2, 3, 2), ()),
    ("dropout", lambda: nn.Dropout(0.5), (5, 4), ()),
    ("batchnorm", lambda: nn.BatchNorm1d(4), (6, 4), LINEAR_PARAMS),
    ("batchnorm_no_affine", lambda: nn.BatchNorm1d(4, affine=False), (6, 4), ()),
    ("batchnorm_momentum_none", lambda: nn.BatchNorm1d(4, momentum=None), (6, 4), LINEAR_PARAMS),
    (
        "mlp_relu_dropout",
        lambda: nn.Sequential(
            nn.Linear(4, 6), nn.ReLU(), nn.Dropout(0.5), nn.Linear(6, 3), nn.LogSoftmax()
        ),
        (5, 4),
        ("0.weight", "0.bias", "3.weight", "3.bias"),
    ),
    (
        "mlp_batchnorm",
        lambda: nn.Sequential(
            nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(),
            nn.Linear(6, 5), nn.BatchNorm1d(5, affine=False, momentum=None), nn.GELU("tanh"),
            nn.Linear(5, 3), nn.Softmax(),
        ),
        (6, 4),
        ("0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias", "6.weight", "6.bias"),
    ),
    (
        "mlp_flatten",
        lambda: nn.Sequential(
            nn.Flatten(), nn.Linear(6, 5, bias=False), nn.LeakyReLU(0.2), nn.Identity(),
            nn.Linear(5, 2), nn.Sigmoid(),
        ),
        (5, 2, 3),
        ("1.weight", "4.weight", "4.bias"),
    ),
    (
        "nested_sequential",
        lambda: nn.Sequential(
            nn.Sequential(nn.Linear(4, 5), nn.GELU()),
            nn.Sequential(nn.BatchNorm1d(5), nn.ReLU()),
            nn.Linear(5, 2),
        ),
        (6, 4),
        ("0.0.weight", "0.0.bias", "1.0.weight", "1.0.bias", "2.weight", "2.bias"),
    ),
]


# ----------------------------------------------------------------------------- modules
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, factory, shape, param_names", MODULE_CASES,
                         ids=case_ids(MODULE_CASES))
def test_module_gradients_match_finite_differences(name, factory, shape, param_names, mode):
    model = build(factory)
    x = randn(*shape, seed=3)
    warm_up(model, x)  # BatchNorm eval then uses non-trivial running statistics
    set_mode(model, mode)

    assert_gradients_ok(check_module(model, x), param_names)


def test_linear_bias_before_batchnorm_gets_zero_gradient():
    """BatchNorm subtracts the batch mean, so a preceding bias cannot change the output."""
    model = build(lambda: nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5)))
    errors = check_module(model, randn(6, 4))

    assert_gradients_ok(errors, ("0.weight", "0.bias", "1.weight", "1.bias"))
    np.testing.assert_allclose(model[0].bias.grad, 0.0, atol=1e-12)
    assert np.abs(model[0].weight.grad).max() > 1e-3


def test_dropout_gradient_check_uses_a_nontrivial_mask():
    dropout = nn.Dropout(0.5).train()
    errors = check_module(dropout, randn(5, 4))

    assert_gradients_ok(errors, ())
    dropped = np.count_nonzero(dropout.mask == 0)
    assert 0 < dropped < dropout.mask.size


# ----------------------------------------------------------------------------- losses
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("name, factory, kind", LOSS_CASES, ids=case_ids(LOSS_CASES))
def test_loss_gradient_matches_finite_differences(name, factory, kind, reduction):
    pred, target = loss_inputs(kind, 5, 4, seed=1)
    errors = check_loss(factory(reduction, 4), pred, target)

    assert set(errors) == {"pred"}
    assert errors["pred"] < GRAD_TOL


# ----------------------------------------------------------------------------- gradcheck itself
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2)])
@pytest.mark.parametrize(
    "f, df",
    [
        (lambda x: np.sum(x**2), lambda x: 2 * x),
        (lambda x: np.sum(np.sin(x)), np.cos),
        (lambda x: np.sum(x) ** 2, lambda x: 2 * np.sum(x) * np.ones_like(x)),
    ],
    ids=["sum_of_squares", "sum_of_sines", "square_of_sum"],
)
def test_numerical_gradient_of_known_functions(f, df, shape):
    x = randn(*shape, seed=4)
    np.testing.assert_allclose(numerical_gradient(lambda: f(x), x), df(x), rtol=1e-7, atol=1e-8)


def test_numerical_gradient_restores_its_input_exactly():
    x = randn(3, 4, seed=5)
    original = x.copy()
    numerical_gradient(lambda: float(np.sum(np.exp(x))), x)
    np.testing.assert_array_equal(x, original)


def test_numerical_gradient_error_is_second_order_in_h():
    x = randn(6, seed=6)
    exact = 3 * x**2
    errors = [
        np.abs(numerical_gradient(lambda: float(np.sum(x**3)), x, h) - exact).max()
        for h in (1e-2, 1e-3)
    ]
    assert errors[0] / errors[1] == pytest.approx(100, rel=0.05)


def test_numerical_gradient_rejects_integer_arrays():
    x = np.arange(4)
    with pytest.raises(ValueError, match="floating"):
        numerical_gradient(lambda: float(np.sum(x)), x)


A, B = randn(4, 3, seed=7), randn(4, 3, seed=8)


@pytest.mark.parametrize(
    "expected, actual, error",
    [
        (A, A, 0.0),
        (A, -A, 1.0),
        (A, np.zeros_like(A), 1.0),
        (np.zeros(3), np.zeros(3), 0.0),
        (np.array([3.0, 0.0]), np.array([0.0, 4.0]), 5.0 / 7.0),
    ],
    ids=["equal", "opposite", "against_zero", "both_zero", "hand_computed"],
)
def test_rel_error_values(expected, actual, error):
    assert rel_error(expected, actual) == pytest.approx(error, abs=1e-15)


def test_rel_error_is_symmetric_and_scale_invariant():
    assert rel_error(A, B) == rel_error(B, A)
    assert rel_error(1e-8 * A, 1e-8 * B) == pytest.approx(rel_error(A, B), rel=1e-12)
    assert rel_error(1e8 * A, 1e8 * B) == pytest.approx(rel_error(A, B), rel=1e-12)


def test_rel_error_floor_makes_tiny_noise_around_zero_small():
    noise = np.full(3, 1e-12)
    assert rel_error(np.zeros(3), noise) == pytest.approx(1.0)
    assert rel_error(np.zeros(3), noise, floor=1e-4) < 1e-7


def test_rel_error_rejects_different_shapes():
    with pytest.raises(ValueError, match="shape"):
        rel_error(np.zeros((2, 3)), np.zeros((3, 2)))


class LinearForgetsBias(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += self.input.T @ grad_output
        return grad_output @ self.weight.data.T


class LinearTransposesInputGrad(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += self.input.T @ grad_output
        self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data  # should be weight.T


class LinearTransposesWeightGrad(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += (self.input.T @ grad_output).T  # should not be transposed
        self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T


@pytest.mark.parametrize(
    "broken_cls, broken_key",
    [
        (LinearForgetsBias, "bias"),
        (LinearTransposesInputGrad, "input"),
        (LinearTransposesWeightGrad, "weight"),
    ],
)
def test_check_module_catches_a_broken_backward(broken_cls, broken_key):
    # Square, so the transposed gradients still have the right shapes.
    errors = check_module(build(lambda: broken_cls(4, 4)), randn(5, 4))

    assert errors[broken_key] > 1e-2
    assert all(err < GRAD_TOL for key, err in errors.items() if key != broken_key), errors


class MSEForgetsMean(nn.MSELoss):
    def backward(self):
        return 2 * self.diff  # missing the 1/M of the mean


def test_check_loss_catches_a_broken_backward():
    errors = check_loss(MSEForgetsMean(), randn(5, 3, seed=1), randn(5, 3, seed=2))
    assert errors["pred"] > 1e-2


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_check_module_leaves_batchnorm_state_unchanged(mode, momentum):
    model = build(lambda: nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5, momentum=momentum)))
    x = randn(6, 4)
    warm_up(model, x)
    set_mode(model, mode)
    before = model.state_dict()

    check_module(model, x)

    after = model.state_dict()
    assert list(after) == list(before)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)
    assert model.training == (mode == "train")


def test_check_module_leaves_package_rng_unchanged():
    model = build(lambda: nn.Sequential(nn.Linear(4, 5), nn.Dropout(0.5)))
    generator = minitorch_ref.manual_seed(1234)

    check_module(model, randn(6, 4))

    assert minitorch_ref.default_rng() is generator
    np.testing.assert_array_equal(generator.random(8), np.random.default_rng(1234).random(8))
