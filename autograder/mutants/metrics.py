"""confusion_matrix with one classic bug each."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant


def fancy_index_increment(y_true, y_pred, n_classes=10):
    counts = np.zeros((n_classes, n_classes), dtype=np.int64)
    counts[np.asarray(y_true), np.asarray(y_pred)] += 1
    return counts


def rows_predicted(y_true, y_pred, n_classes=10):
    counts = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(counts, (np.asarray(y_pred), np.asarray(y_true)), 1)
    return counts


def float_counts(y_true, y_pred, n_classes=10):
    counts = np.zeros((n_classes, n_classes))
    np.add.at(counts, (np.asarray(y_true), np.asarray(y_pred)), 1)
    return counts


def classes_seen(y_true, y_pred, n_classes=10):
    k = int(max(np.max(y_true), np.max(y_pred))) + 1
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, (np.asarray(y_true), np.asarray(y_pred)), 1)
    return counts


MUTANTS = [
    Mutant("confusion_fancy_index_increment", "confusion_matrix", fancy_index_increment,
           "np.add.at", "C[y_true, y_pred] += 1 counts repeated pairs once"),
    Mutant("confusion_rows_predicted", "confusion_matrix", rows_predicted, "swapped",
           "rows are the predicted class"),
    Mutant("confusion_float_counts", "confusion_matrix", float_counts, "integers",
           "a float matrix"),
    Mutant("confusion_classes_seen", "confusion_matrix", classes_seen,
           "should be an array of shape", "n_classes ignored, size from the labels"),
]
