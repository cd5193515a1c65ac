"""Gradient checking: compare backward passes with central finite differences.

The numerical gradient of a scalar function f at x is, entry by entry,
``(f(x + h e_i) - f(x - h e_i)) / (2h)``, with error O(h^2). In float64 with
``h = 1e-5`` a correct backward typically agrees to a relative error near 1e-10;
anything above ~1e-6 is a bug. Use float64: in float32 the rounding error
(about 1e-7 / h) swamps the comparison.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from minitorch_ref import _random
from minitorch_ref.nn.loss import Loss
from minitorch_ref.nn.module import Module


# Finite differences cannot resolve gradients smaller than their own rounding
# noise (~1e-11 per entry with h=1e-5), so norms below this count as this much:
# a gradient that is exactly zero (a bias before BatchNorm) then compares as 0.
FD_NORM_FLOOR = 1e-4


def rel_error(expected: np.ndarray, actual: np.ndarray, floor: float = 1e-300) -> float:
    """``||a - b|| / max(||a|| + ||b||, floor)``: 0 when equal, about 1 when unrelated."""
    expected, actual = np.asarray(expected, dtype=float), np.asarray(actual, dtype=float)
    if expected.shape != actual.shape:
        raise ValueError(f"rel_error: shapes differ, {expected.shape} vs {actual.shape}")
    scale = np.linalg.norm(expected) + np.linalg.norm(actual)
    return float(np.linalg.norm(expected - actual) / max(scale, floor))


def numerical_gradient(f: Callable[[], float], x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central-difference gradient of ``f()`` with respect to the array ``x``.

    ``f`` takes no arguments and reads ``x``, which is perturbed in place one
    entry at a time and restored afterwards.

    Shape:
        - x: any; returns: the same shape as x.
    """
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"numerical_gradient needs a floating array, got dtype {x.dtype}")
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        saved = x[i]
        x[i] = saved + h
        f_plus = f()
        x[i] = saved - h
        f_minus = f()
        x[i] = saved
        grad[i] = (f_plus - f_minus) / (2 * h)
    return grad


def check_module(module: Module, x: np.ndarray, h: float = 1e-5, seed: int = 0) -> dict[str, float]:
    """Relative error of ``module``'s input gradient and of each parameter gradient.

    The scalar checked is ``L = sum(module(x) * G)`` for a fixed random ``G``, so
    ``dL/dY = G``. The package's default generator is reseeded with ``seed`` before
    every forward pass, so Dropout draws the same mask each time (and restored
    afterwards). Parameter gradients are zeroed first; the module's state (e.g.
    BatchNorm's running statistics) is restored afterwards.

    Returns:
        ``{'input': err, '<param name>': err, ...}``.
    """
    x = np.array(x, dtype=np.float64)
    saved_state = module.state_dict()

    def forward() -> np.ndarray:
        _random.manual_seed(seed)
        return module(x)

    with _random.preserved_default():
        grad_output = np.random.default_rng(seed + 1).standard_normal(forward().shape)

    def loss() -> float:
        return float(np.sum(forward() * grad_output))

    with _random.preserved_default():
        module.zero_grad()
        forward()
        analytic = {"input": module.backward(grad_output)}
        analytic.update((name, p.grad.copy()) for name, p in module.named_parameters())
        numeric = {"input": numerical_gradient(loss, x, h)}
        numeric.update(
            (name, numerical_gradient(loss, p.data, h)) for name, p in module.named_parameters()
        )
    module.load_state_dict(saved_state)
    return {name: rel_error(numeric[name], analytic[name], FD_NORM_FLOOR) for name in analytic}


def check_loss(loss: Loss, pred: np.ndarray, target: np.ndarray, h: float = 1e-5) -> dict[str, float]:
    """Relative error of ``loss.backward()`` against finite differences of ``loss(pred, target)``.

    Returns:
        ``{'pred': err}``.
    """
    pred = np.array(pred, dtype=np.float64)
    loss(pred, target)
    analytic = loss.backward()
    numeric = numerical_gradient(lambda: loss(pred, target), pred, h)
    return {"pred": rel_error(numeric, analytic, FD_NORM_FLOOR)}
