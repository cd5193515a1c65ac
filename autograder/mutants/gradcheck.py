"""numerical_gradient and rel_error with one classic student bug each."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant


def forward_difference(f, x, h=1e-5):
    grad, base = np.zeros_like(x), f()
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        grad[i] = (f() - base) / h
        x[i] = saved
    return grad


def not_restoring_x(f, x, h=1e-5):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += h
        f_plus = f()
        x[i] -= 2 * h
        grad[i] = (f_plus - f()) / (2 * h)  # x[i] is left at x - h
    return grad


def restores_by_arithmetic(f, x, h=1e-5):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += h
        f_plus = f()
        x[i] -= 2 * h
        grad[i] = (f_plus - f()) / (2 * h)
        x[i] += h                           # back by arithmetic: off by rounding
    return grad


def divides_by_h(f, x, h=1e-5):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        f_plus = f()
        x[i] = saved - h
        grad[i] = (f_plus - f()) / h
        x[i] = saved
    return grad


def loops_first_axis(f, x, h=1e-5):
    grad = np.zeros_like(x)
    for i in range(len(x)):
        saved = x[i].copy()
        x[i] = saved + h
        f_plus = f()
        x[i] = saved - h
        grad[i] = (f_plus - f()) / (2 * h)
        x[i] = saved
    return grad


def rel_error_elementwise(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))


def rel_error_broadcasts(a, b):
    """No shape check: numpy broadcasts (3,) against (3, 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a) + np.linalg.norm(b), 1e-300))


def rel_error_array(a, b):
    """Returns a 0-d array, not a float."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"shapes {a.shape} and {b.shape} differ")
    return np.array(np.linalg.norm(a - b) / max(np.linalg.norm(a) + np.linalg.norm(b), 1e-300))


def rel_error_no_floor(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(all="ignore"):
        return float(np.linalg.norm(a - b) / (np.linalg.norm(a) + np.linalg.norm(b)))


MUTANTS = [
    Mutant("numerical_gradient_one_sided", "numerical_gradient", forward_difference,
           "one-sided difference", "(f(x + h) - f(x)) / h"),
    Mutant("numerical_gradient_not_restoring_x", "numerical_gradient", not_restoring_x,
           "not restored", "x[i] left at x - h"),
    Mutant("numerical_gradient_restores_by_arithmetic", "numerical_gradient",
           restores_by_arithmetic, "by arithmetic", "x[i] += h, -= 2h, += h: off by rounding"),
    Mutant("numerical_gradient_divides_by_h", "numerical_gradient", divides_by_h, "divide by 2h",
           "(f(x + h) - f(x - h)) / h"),
    Mutant("numerical_gradient_first_axis_only", "numerical_gradient", loops_first_axis,
           "only the first axis", "for i in range(len(x)) perturbs whole rows"),
    Mutant("rel_error_elementwise", "rel_error", rel_error_elementwise, "largest elementwise",
           "CS231n's max elementwise relative error"),
    Mutant("rel_error_broadcasts", "rel_error", rel_error_broadcasts, "should raise a ValueError",
           "no shape check, numpy broadcasts"),
    Mutant("rel_error_array", "rel_error", rel_error_array, "Python float",
           "returns a 0-d array"),
    Mutant("rel_error_no_floor", "rel_error", rel_error_no_floor, "two zero arrays must be 0",
           "0 / 0 = nan for two zero arrays"),
]
