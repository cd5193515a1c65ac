"""course.datasets.spiral: the toy problem the course and the demo train on."""
from __future__ import annotations

import numpy as np
import pytest

from course.datasets import spiral


@pytest.mark.parametrize("n_per_class, n_classes", [(100, 3), (7, 2), (1, 1), (50, 5)])
def test_spiral_shapes_and_dtypes(n_per_class, n_classes):
    X, y = spiral(n_per_class=n_per_class, n_classes=n_classes)
    n = n_per_class * n_classes
    assert X.shape == (n, 2) and X.dtype == np.float64
    assert y.shape == (n,) and np.issubdtype(y.dtype, np.integer)


@pytest.mark.parametrize("n_per_class, n_classes", [(100, 3), (13, 4)])
def test_spiral_labels_are_balanced_class_indices(n_per_class, n_classes):
    _, y = spiral(n_per_class=n_per_class, n_classes=n_classes)
    assert set(np.unique(y)) == set(range(n_classes))
    np.testing.assert_array_equal(np.bincount(y), [n_per_class] * n_classes)


def test_spiral_points_lie_in_the_unit_disc():
    X, _ = spiral(noise=0.5, seed=3)
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)


def test_spiral_arms_are_rotated_copies_without_noise():
    # Without noise each arm is a deterministic curve: arm k is arm 0 rotated by 2*pi*k/3.
    X, y = spiral(n_per_class=50, n_classes=3, noise=0.0)
    angle = 2 * np.pi / 3
    # Rows are (r sin t, r cos t); adding `angle` to t multiplies a row by this matrix.
    rotate = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    np.testing.assert_allclose(X[y == 1], X[y == 0] @ rotate, atol=1e-12)


def test_spiral_is_deterministic_for_a_seed():
    a, b = spiral(seed=42), spiral(seed=42)
    for first, second in zip(a, b):
        np.testing.assert_array_equal(first, second)


def test_spiral_differs_between_seeds():
    (X0, y0), (X1, y1) = spiral(seed=0), spiral(seed=1)
    assert not np.allclose(X0, X1)
    np.testing.assert_array_equal(y0, y1, err_msg="only the jitter is random, not the labels")


def test_spiral_does_not_touch_numpys_global_random_state():
    np.random.seed(0)
    expected = np.random.random()
    np.random.seed(0)
    spiral(seed=5)
    assert np.random.random() == expected


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(n_per_class=0), "n_per_class"),
        (dict(n_per_class=-5), "n_per_class"),
        (dict(n_classes=0), "n_classes"),
        (dict(noise=-0.1), "noise"),
        (dict(n_per_class=2.5), "n_per_class"),
    ],
    ids=["no-points", "negative-points", "no-classes", "negative-noise", "fractional-points"],
)
def test_spiral_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        spiral(**kwargs)
