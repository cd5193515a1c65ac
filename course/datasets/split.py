"""Reproducible train/test splits, stratified by class for classification labels."""
from __future__ import annotations

import numpy as np

from course.datasets._checks import check_fraction


def _test_indices(y: np.ndarray, test_size: float, stratify: bool,
                  rng: np.random.Generator) -> np.ndarray:
    """Indices of the test samples; with ``stratify``, ``round(test_size * n_c)`` of each class."""
    if not stratify:
        return rng.permutation(len(y))[: round(test_size * len(y))]
    groups = [np.flatnonzero(y == label) for label in np.unique(y)]
    return np.concatenate([rng.permutation(g)[: round(test_size * len(g))] for g in groups])


def train_test_split(X: np.ndarray, y: np.ndarray, test_size: float = 0.25, seed: int = 0,
                     stratify: bool | None = None) -> tuple[np.ndarray, ...]:
    """Split samples at random into a training and a test set, the same way for the same seed.

    Args:
        X: samples, shape ``(N, *)``.
        y: targets, shape ``(N, *)``.
        test_size: the fraction of samples in the test set, strictly between 0 and 1.
        seed: seed of the shuffle.
        stratify: keep each class's share in both sets; ``None`` (the default)
            stratifies exactly when ``y`` holds integer class labels.

    Returns:
        ``X_train, X_test, y_train, y_test``, each set in shuffled order.
    """
    X, y = np.asarray(X), np.asarray(y)
    test_size = check_fraction("test_size", test_size)
    if X.ndim == 0 or y.ndim == 0 or len(X) != len(y):
        raise ValueError(f"X and y need the same number of samples, got shapes {X.shape} and {y.shape}")
    if stratify is None:
        stratify = y.ndim == 1 and np.issubdtype(y.dtype, np.integer)
    rng = np.random.default_rng(seed)
    is_test = np.zeros(len(y), dtype=bool)
    is_test[_test_indices(y, test_size, stratify, rng)] = True
    if is_test.all() or not is_test.any():
        raise ValueError(
            f"test_size={test_size} of {len(y)} samples leaves the training or the test set "
            "empty; use more samples or a test_size nearer 0.5"
        )
    train, test = rng.permutation(np.flatnonzero(~is_test)), rng.permutation(np.flatnonzero(is_test))
    return X[train], X[test], y[train], y[test]
