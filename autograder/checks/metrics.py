"""Check of unit 11's ``confusion_matrix``: counts of (true, predicted) pairs.

Compared with a loop over the samples on labels where pairs repeat (the trap of
fancy-indexed ``+=``), with classes that never occur, and with ``n_classes``
other than the default 10.
"""
from __future__ import annotations

import numpy as np

from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, transposed, when
from course.testing.failure import expect
from autograder.registry import check
from autograder.sandbox import call


def _by_loop(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    counts = np.zeros((n_classes, n_classes))
    for i, j in zip(y_true.tolist(), y_pred.tolist()):
        counts[i, j] += 1
    return counts


def _signatures(y_true: np.ndarray, y_pred: np.ndarray, n: int) -> tuple[Signature, ...]:
    once = np.zeros((n, n))
    once[y_true, y_pred] = 1
    return (
        transposed("rows and columns are swapped: C[i, j] counts samples of TRUE class i "
                   "predicted as j, so index C[y_true, y_pred]."),
        when("once", lambda g, e: close(g, once), "each (true, predicted) pair was counted "
             "once however often it occurs: C[y_true, y_pred] += 1 adds 1 once per distinct "
             "index pair. Use np.add.at(C, (y_true, y_pred), 1) or a loop."),
    )


CASES = (
    (np.array([0, 0, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 0, 2]), 3),
    (np.array([1, 1, 4, 4]), np.array([1, 3, 3, 3]), 6),  # classes 0, 2 and 5 never occur
)


@check
def confusion_matrix_counts(confusion_matrix):
    """C[i, j] = #(true i, predicted j), integer (K, K), for several n_classes and 500 labels."""
    rng = np.random.default_rng(0)
    cases = CASES + ((rng.integers(0, 10, 500), rng.integers(0, 10, 500), 10),)
    for y_true, y_pred, n in cases:
        what = f"confusion_matrix(y_true, y_pred, n_classes={n})"
        got = call(what, confusion_matrix, y_true.copy(), y_pred.copy(), n_classes=n)
        got = as_array(what, got)
        expect(got.shape == (n, n), f"{what} should be an array of shape ({n}, {n}), got "
               f"{got.shape}.")
        expect(np.issubdtype(got.dtype, np.integer), f"{what} has dtype {got.dtype}: counts are "
               "integers; create C with np.zeros((n_classes, n_classes), dtype=np.int64).")
        expect_close(what, got, _by_loop(y_true, y_pred, n), f"{len(y_true)} samples, "
                     "row = true class, column = predicted class", _signatures(y_true, y_pred, n))
