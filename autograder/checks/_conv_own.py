"""How the Conv2d cells judge their own part: one mistake costs one cell.

A student's ``Conv2d`` is built on their ``im2col`` and ``col2im``, and its backward pass
differentiates their own forward. Each cell compares with the reference first; where the
value differs, it passes if the difference is another cell's mistake, carried faithfully:

- ``on_own_im2col`` / ``on_own_col2im``: the layer's output (its dL/dx) is what the notebook's
  formula gives with what the student's own ``im2col`` (``col2im``) returned to its own cell
  on this very input (that cell grades it there and keeps the answer, ``autograder.verdicts``;
  the excuse never asks the kernel again), when that is wrong and, for im2col, holds the
  right numbers in other places;
- ``own_forward_gradient``: a gradient equals the gradient of the student's own forward (a
  difference per entry: the forward is affine), when that forward is wrong (the forward cell
  judges it) and its gradient is not zero.

A trivial part earns nothing: each excuse applies only where the student's other part is
wrong and shows what it computes; otherwise the reference decides.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autograder.checks._conv_cases import ConvCase, filter_matrix, scatter_input, windows_input
from autograder.checks.conv_functions import kept_scatter, kept_windows
from course.testing._trusted import asarray
from course.testing.diagnose import close, finite
from course.testing.failure import CheckFailure
from minitorch_ref import nn
from minitorch_ref.gradcheck import rel_error

Excuse = Callable[[np.ndarray], bool]   # got -> whether another cell's mistake explains it
AGREES = 1e-6                            # rel_error of a gradient with finite differences


def passes(got: np.ndarray, expected: np.ndarray, excuses: tuple[Excuse, ...]) -> bool:
    """``got`` equals ``expected``, or one of ``excuses`` explains the difference."""
    got = asarray(got, dtype=float)
    if got.shape == np.shape(expected) and close(got, expected):
        return True
    return any(excuse(got) for excuse in excuses)


def _array(value: object) -> np.ndarray | None:
    """``value`` as a float array, or None when it is not one (the excuse does not apply)."""
    if value is None:
        return None
    try:
        array = asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if finite(array) else None


def _same_numbers(got: np.ndarray, expected: np.ndarray) -> bool:
    """The same numbers, in other places: a layout mistake, not made-up values."""
    return got.size == expected.size and close(np.sort(got, axis=None), np.sort(expected, axis=None))


# ---------------------------------------------------------------------------- own im2col, col2im
def on_own_im2col(im2col, case: ConvCase, weight: np.ndarray, bias: np.ndarray | None) -> Excuse:
    """The output the notebook's formula gives with the windows the student's im2col returned
    to its own cell on this case's input, when they are wrong there."""
    def excuse(got: np.ndarray) -> bool:
        right = nn.im2col(windows_input(case), case.kernel, case.stride)
        cols = _array(kept_windows(im2col, case))
        if cols is None or cols.shape != right.shape or close(cols, right) \
                or not _same_numbers(cols, right):
            return False
        y = cols @ filter_matrix(weight) + (0 if bias is None else bias)
        n, o, oh, ow = case.out_shape
        return close(got, y.reshape(n, oh, ow, o).transpose(0, 3, 1, 2))
    return excuse


def on_own_col2im(col2im, case: ConvCase) -> Excuse:
    """dL/dx as the notebook's formula gives it with what the student's col2im returned to its
    own cell on the rows of this case, when that is wrong there."""
    def excuse(got: np.ndarray) -> bool:
        rows, shape = scatter_input(case)
        right = nn.col2im(rows, shape, case.kernel, case.stride)
        scattered = _array(kept_scatter(col2im, case))
        if scattered is None or scattered.shape != shape or close(scattered, right) \
                or close(scattered, 0 * right):
            return False
        p, (h, w) = case.padding, case.shape[2:]
        return close(got, scattered[:, :, p:p + h, p:p + w])
    return excuse


# ---------------------------------------------------------------------------- own forward
def affine_gradient(loss: Callable[[], float], probe: np.ndarray) -> np.ndarray:
    """The gradient of ``loss()``, affine in ``probe`` (a convolution is affine in its input
    and in its filters), from one call per entry: ``loss(probe + e_i) - loss(probe)``, exact
    up to rounding for an affine loss, half the calls of central differences. For a loss that
    is not affine it is no derivative, and no student's gradient matches it."""
    grad = np.zeros_like(probe, dtype=float)
    base = loss()
    for i in np.ndindex(probe.shape):
        saved = probe[i]
        probe[i] = saved + 1.0
        grad[i] = loss() - base
        probe[i] = saved
    return grad


def own_forward_gradient(forward_wrong: Callable[[], bool], loss: Callable[[], float],
                         probe: np.ndarray) -> Excuse:
    """A gradient that equals the gradient of the student's own ``loss()`` with respect to
    ``probe`` (perturbed in place), when the student's forward is wrong (``forward_wrong``)
    and that gradient is not zero."""
    def excuse(got: np.ndarray) -> bool:
        if got.shape != probe.shape or not forward_wrong():
            return False
        try:
            with np.errstate(all="ignore"):
                numeric = affine_gradient(loss, probe)
        except CheckFailure:
            return False
        if not finite(numeric) or close(numeric, 0 * numeric):
            return False
        return rel_error(got, numeric) < AGREES
    return excuse
