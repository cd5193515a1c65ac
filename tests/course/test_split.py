"""course.datasets.train_test_split: reproducible, disjoint, stratified, with clear errors."""
from __future__ import annotations

import numpy as np
import pytest

from course.datasets import train_test_split


def _data(n_per_class=(30, 60, 90)):
    y = np.repeat(np.arange(len(n_per_class)), n_per_class)
    X = np.arange(len(y) * 2, dtype=float).reshape(-1, 2)
    return X, y


def test_split_is_reproducible_and_a_partition():
    X, y = _data()
    first = train_test_split(X, y, test_size=0.2, seed=5)
    again = train_test_split(X, y, test_size=0.2, seed=5)
    other = train_test_split(X, y, test_size=0.2, seed=6)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], other[1])
    X_train, X_test, y_train, y_test = first
    rows = np.concatenate([X_train, X_test])[:, 0]
    assert sorted(rows) == sorted(X[:, 0])
    np.testing.assert_array_equal(y_train, y[(X_train[:, 0] / 2).astype(int)])


def test_integer_labels_are_stratified():
    X, y = _data()
    _, _, y_train, y_test = train_test_split(X, y, test_size=0.2, seed=0)
    np.testing.assert_array_equal(np.bincount(y_test), [6, 12, 18])
    np.testing.assert_array_equal(np.bincount(y_train), [24, 48, 72])


def test_regression_targets_are_split_without_stratifying():
    X = np.linspace(0, 1, 40).reshape(-1, 1)
    X_train, X_test, y_train, y_test = train_test_split(X, 2 * X, test_size=0.25, seed=0)
    assert len(X_test) == 10 and y_test.shape == (10, 1)
    np.testing.assert_allclose(y_train, 2 * X_train)


@pytest.mark.parametrize("kwargs, message", [
    ({"test_size": 0.0}, "test_size must be a fraction strictly between 0 and 1"),
    ({"test_size": 1.5}, "test_size must be a fraction"),
    ({"test_size": 0.01}, "leaves the training or the test set empty"),
])
def test_bad_test_sizes_raise(kwargs, message):
    X, y = _data((5, 5))
    with pytest.raises(ValueError, match=message):
        train_test_split(X, y, **kwargs)


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="same number of samples"):
        train_test_split(np.zeros((10, 2)), np.zeros(9, dtype=int))
