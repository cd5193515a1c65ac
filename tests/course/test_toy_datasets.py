"""course.datasets toy generators: determinism, shapes, ranges, class balance, errors."""
from __future__ import annotations

import numpy as np
import pytest

from course import datasets

GENERATORS = {
    "circles": datasets.circles,
    "moons": datasets.moons,
    "xor": datasets.xor,
    "blobs": datasets.blobs,
}


@pytest.mark.parametrize("name", GENERATORS)
def test_same_seed_same_arrays_other_seed_other_arrays(name):
    make = GENERATORS[name]
    X1, y1 = make(n_samples=60, noise=0.1, seed=3)
    X2, y2 = make(n_samples=60, noise=0.1, seed=3)
    X3, _ = make(n_samples=60, noise=0.1, seed=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.allclose(X1, X3)


@pytest.mark.parametrize("name", GENERATORS)
def test_shapes_dtypes_and_balanced_classes(name):
    X, y = GENERATORS[name](n_samples=61, noise=0.1, seed=0)
    assert X.shape == (61, 2) and X.dtype == np.float64
    assert y.shape == (61,) and np.issubdtype(y.dtype, np.integer)
    counts = np.bincount(y)
    assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize("name", GENERATORS)
def test_noise_free_points_are_centred_and_of_unit_scale(name):
    X, _ = GENERATORS[name](n_samples=200, noise=0.0, seed=0)
    assert np.abs(X).max() <= 1.5 + 1e-12
    assert np.abs(X.mean(axis=0)).max() < 0.2


def test_circles_radii_without_noise():
    X, y = datasets.circles(n_samples=100, noise=0.0, factor=0.3)
    radius = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(radius[y == 0], 1.0)
    np.testing.assert_allclose(radius[y == 1], 0.3)


def test_xor_label_is_the_sign_disagreement_without_noise():
    X, y = datasets.xor(n_samples=200, noise=0.0)
    np.testing.assert_array_equal(y, (np.sign(X[:, 0]) != np.sign(X[:, 1])).astype(int))


def test_blobs_centres_lie_on_the_unit_circle():
    X, y = datasets.blobs(n_samples=3000, n_classes=4, noise=0.05, seed=1)
    centres = np.array([X[y == k].mean(axis=0) for k in range(4)])
    np.testing.assert_allclose(np.linalg.norm(centres, axis=1), 1.0, atol=0.01)


def test_spiral_keeps_its_shape_and_class_order():
    X, y = datasets.spiral(n_per_class=50, n_classes=4, noise=0.2, seed=0)
    assert X.shape == (200, 2)
    np.testing.assert_array_equal(y, np.repeat(np.arange(4), 50))


def test_regression_curve_is_sorted_sine_with_matching_shapes():
    X, y = datasets.regression_curve(n_samples=50, noise=0.0, seed=0)
    assert X.shape == y.shape == (50, 1)
    assert np.all(np.diff(X[:, 0]) >= 0) and np.abs(X).max() <= 1
    np.testing.assert_allclose(y, np.sin(3 * X))


@pytest.mark.parametrize("name", datasets.TOY_2D)
def test_make_2d_gives_every_named_dataset(name):
    X, y = datasets.make_2d(name, n_samples=90, noise=0.1, seed=0)
    assert X.shape == (90, 2) and y.shape == (90,)


@pytest.mark.parametrize("call, message", [
    (lambda: datasets.circles(n_samples=1), "n_samples must be an integer >= 2"),
    (lambda: datasets.moons(n_samples=10.5), "n_samples must be an integer"),
    (lambda: datasets.xor(noise=-0.1), "noise must be a finite number >= 0"),
    (lambda: datasets.circles(factor=1.0), "factor must be a fraction"),
    (lambda: datasets.blobs(n_samples=2, n_classes=3), "gives some of the 3 classes no sample"),
    (lambda: datasets.regression_curve(n_samples=0), "n_samples must be an integer >= 1"),
    (lambda: datasets.spiral(noise=float("nan")), "noise must be a finite number"),
    (lambda: datasets.make_2d("swiss roll"), "unknown dataset 'swiss roll'; choose one of circles"),
])
def test_bad_arguments_raise_a_value_error_that_says_what_to_pass(call, message):
    with pytest.raises(ValueError, match=message):
        call()
