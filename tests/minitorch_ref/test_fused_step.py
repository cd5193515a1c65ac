"""The optional fused training step (nn.fused.forward_backward) gives the plain classes' numbers."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch_ref as mt
from minitorch_ref import nn, optim
from minitorch_ref.nn.fused import forward_backward

TOL = {np.float64: 1e-10, np.float32: 2e-5}


def mlp(dtype, sizes=(6, 8, 5, 3)) -> nn.Sequential:
    mt.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(fan_in, fan_out, dtype=dtype), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def batch(dtype, n=7, features=6, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, features)).astype(dtype), rng.integers(0, classes, n)


def plain_step(model, criterion, x, target) -> float:
    model.zero_grad()
    loss = criterion(model(x), target)
    model.backward(criterion.backward())
    return loss


def assert_same(plain_model, fused_model, tol, what="grad"):
    for (name, a), (_, b) in zip(plain_model.named_parameters(), fused_model.named_parameters()):
        np.testing.assert_allclose(getattr(b, what), getattr(a, what), rtol=tol, atol=tol,
                                   err_msg=f"{what} of {name}")
        assert getattr(b, what).dtype == getattr(a, what).dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_one_step_gives_the_plain_loss_and_gradients(dtype, reduction):
    x, y = batch(dtype)
    plain, fused = mlp(dtype), mlp(dtype)
    criterion = nn.CrossEntropyLoss(reduction=reduction)
    for param in fused.parameters():
        param.grad[...] = 7.0   # stale gradients are replaced, as after zero_grad()
    expected = plain_step(plain, criterion, x, y)
    loss = forward_backward(fused, criterion, x, y)
    assert loss == pytest.approx(expected, rel=TOL[dtype])
    assert_same(plain, fused, TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trajectory_with_fused_adam_follows_the_plain_one(dtype):
    plain, fused = mlp(dtype), mlp(dtype)
    criterion = nn.CrossEntropyLoss()
    plain_opt = optim.Adam(plain.parameters(), lr=1e-2)
    fused_opt = optim.Adam(fused.parameters(), lr=1e-2, fused=True)
    for step in range(25):
        x, y = batch(dtype, seed=step)
        expected = plain_step(plain, criterion, x, y)
        plain_opt.step()
        assert forward_backward(fused, criterion, x, y) == pytest.approx(expected, rel=50 * TOL[dtype])
        fused_opt.step()
    assert_same(plain, fused, 50 * TOL[dtype], what="data")


def fallback_model() -> nn.Sequential:
    mt.manual_seed(1)
    return nn.Sequential(nn.Flatten(), nn.Linear(6, 5), nn.Tanh(), nn.BatchNorm1d(5),
                         nn.ReLU(), nn.Linear(5, 2))


@pytest.mark.parametrize("criterion, target", [
    (nn.MSELoss(), np.random.default_rng(1).standard_normal((8, 2))),
    (nn.CrossEntropyLoss(label_smoothing=0.1), np.arange(8) % 2),
])
def test_other_modules_and_losses_run_through_their_own_backward(criterion, target):
    plain, fused = fallback_model(), fallback_model()
    x = np.random.default_rng(0).standard_normal((8, 2, 3))
    expected = plain_step(plain, criterion, x, target)
    assert forward_backward(fused, criterion, x, target) == pytest.approx(expected, rel=1e-12)
    assert_same(plain, fused, 1e-10)


def test_the_input_batch_is_left_unchanged():
    x, y = batch(np.float64)
    model = nn.Sequential(nn.ReLU(), *mlp(np.float64))   # a ReLU straight on the data
    before = x.copy()
    forward_backward(model, nn.CrossEntropyLoss(), x, y)
    np.testing.assert_array_equal(x, before)


def test_a_wrong_input_shape_gets_the_plain_error():
    with pytest.raises(ValueError, match=r"expected input of shape \(N, 6\)"):
        forward_backward(mlp(np.float64), nn.CrossEntropyLoss(), np.zeros(6), np.zeros(1, int))
