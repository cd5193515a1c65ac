"""Toy datasets for the course, generated deterministically from a seed.

Every classifier dataset here returns ``X`` of shape ``(N, 2)`` (float64) and
integer labels ``y`` of shape ``(N,)``, ordered by class (shuffle with
``train_test_split`` or a shuffling DataLoader). The same ``seed`` always gives
the same arrays; ``noise`` is the standard deviation of Gaussian jitter.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from course.datasets._checks import check_count, check_fraction, check_noise

Dataset = tuple[np.ndarray, np.ndarray]


def _balanced_labels(n_samples: int, n_classes: int) -> np.ndarray:
    """``(n_samples,)`` labels in ``[0, n_classes)``, sorted, class sizes differing by at most 1."""
    return np.sort(np.arange(n_samples) % n_classes)


def _jitter(rng: np.random.Generator, points: np.ndarray, noise: float) -> np.ndarray:
    return points + noise * rng.standard_normal(points.shape)


def spiral(n_per_class: int = 100, n_classes: int = 3, noise: float = 0.2,
           seed: int = 0) -> Dataset:
    """Interleaved spiral arms in 2-D, one per class (CS231n's classic).

    Arm ``k`` sweeps the radius from 0 to 1 while its angle turns by 4 radians,
    starting at ``2*pi*k/n_classes``; ``noise`` jitters the angle.

    Returns:
        ``X`` of shape ``(n_per_class * n_classes, 2)`` (float64) and integer labels
        ``y`` of shape ``(n_per_class * n_classes,)``.
    """
    n_per_class = check_count("n_per_class", n_per_class, 1)
    n_classes, noise = check_count("n_classes", n_classes, 1), check_noise(noise)
    rng = np.random.default_rng(seed)
    radius = np.tile(np.linspace(0.0, 1.0, n_per_class), n_classes)
    y = np.repeat(np.arange(n_classes), n_per_class)
    angle = (
        2 * np.pi * y / n_classes
        + 4 * radius
        + noise * rng.standard_normal(n_per_class * n_classes)
    )
    X = np.column_stack([radius * np.sin(angle), radius * np.cos(angle)])
    return X, y


def circles(n_samples: int = 200, noise: float = 0.1, factor: float = 0.5,
            seed: int = 0) -> Dataset:
    """A ring of radius 1 (class 0) around a ring of radius ``factor`` (class 1).

    Not linearly separable: a network needs a hidden layer (or the feature x1² + x2²).

    Returns:
        ``X`` of shape ``(n_samples, 2)``, ``y`` of shape ``(n_samples,)`` in {0, 1}.
    """
    n_samples, noise = check_count("n_samples", n_samples, 2), check_noise(noise)
    factor = check_fraction("factor", factor)
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n_samples, 2)
    radius = np.where(y == 0, 1.0, factor)
    angle = rng.uniform(0, 2 * np.pi, n_samples)
    ring = radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    return _jitter(rng, ring, noise), y


def moons(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> Dataset:
    """Two interleaving half circles, centred on the origin.

    Returns:
        ``X`` of shape ``(n_samples, 2)``, ``y`` of shape ``(n_samples,)`` in {0, 1}.
    """
    n_samples, noise = check_count("n_samples", n_samples, 2), check_noise(noise)
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n_samples, 2)
    t = rng.uniform(0, np.pi, n_samples)
    upper = np.column_stack([np.cos(t), np.sin(t)])
    lower = np.column_stack([1 - np.cos(t), 0.5 - np.sin(t)])
    X = np.where((y == 0)[:, None], upper, lower) - [0.5, 0.25]
    return _jitter(rng, X, noise), y


def xor(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> Dataset:
    """Points in the square [-1, 1]²; class 1 where the two coordinates differ in sign.

    Coordinates keep a margin of 0.1 from the axes before jitter, so without
    noise the classes are separable (by two lines, never by one).

    Returns:
        ``X`` of shape ``(n_samples, 2)``, ``y`` of shape ``(n_samples,)`` in {0, 1}.
    """
    n_samples, noise = check_count("n_samples", n_samples, 2), check_noise(noise)
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n_samples, 2)
    first_sign = rng.choice([-1.0, 1.0], n_samples)
    signs = np.column_stack([first_sign, np.where(y == 1, -first_sign, first_sign)])
    X = signs * rng.uniform(0.1, 1.0, (n_samples, 2))
    return _jitter(rng, X, noise), y


def blobs(n_samples: int = 300, n_classes: int = 3, noise: float = 0.3,
          seed: int = 0) -> Dataset:
    """Gaussian blobs of standard deviation ``noise``, centred evenly on the unit circle.

    Returns:
        ``X`` of shape ``(n_samples, 2)``, ``y`` of shape ``(n_samples,)`` in ``[0, n_classes)``.
    """
    n_samples = check_count("n_samples", n_samples, 1)
    n_classes, noise = check_count("n_classes", n_classes, 1), check_noise(noise)
    if n_samples < n_classes:
        raise ValueError(f"n_samples={n_samples} gives some of the {n_classes} classes no sample")
    rng = np.random.default_rng(seed)
    y = _balanced_labels(n_samples, n_classes)
    angle = np.pi / 2 + 2 * np.pi * np.arange(n_classes) / n_classes
    centres = np.column_stack([np.cos(angle), np.sin(angle)])
    return _jitter(rng, centres[y], noise), y


def regression_curve(n_samples: int = 100, noise: float = 0.1, seed: int = 0) -> Dataset:
    """A 1-D regression task: ``y = sin(3x) + noise * eps`` with ``x`` uniform in [-1, 1].

    Returns:
        ``X`` of shape ``(n_samples, 1)`` sorted ascending (so ``plot(X, y)`` draws a
        curve), ``y`` of shape ``(n_samples, 1)`` (float64), the shape of a one-output
        network's prediction, as ``MSELoss`` requires.
    """
    n_samples, noise = check_count("n_samples", n_samples, 1), check_noise(noise)
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(-1.0, 1.0, (n_samples, 1)), axis=0)
    return X, _jitter(rng, np.sin(3 * X), noise)


def _spiral_of(n_samples: int, noise: float, seed: int) -> Dataset:
    return spiral(n_per_class=max(1, n_samples // 3), n_classes=3, noise=noise, seed=seed)


TOY_2D: dict[str, Callable[[int, float, int], Dataset]] = {
    "circles": lambda n, noise, seed: circles(n, noise, seed=seed),
    "xor": xor,
    "moons": moons,
    "spiral": _spiral_of,
    "blobs": lambda n, noise, seed: blobs(n, 3, noise, seed),
}
"""The 2-D classification datasets by name, each called as ``f(n_samples, noise, seed)``
(the spiral has 3 arms of ``n_samples // 3`` points, the blobs 3 classes)."""


def make_2d(name: str, n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> Dataset:
    """The 2-D classification dataset called ``name`` (a key of ``TOY_2D``)."""
    if name not in TOY_2D:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(TOY_2D)}")
    return TOY_2D[name](n_samples, noise, seed)
