"""The package's default random generator, like ``torch.manual_seed``'s global state.

Initialisation, Dropout and DataLoader shuffling draw from this generator unless
they are given an ``rng=`` of their own.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import numpy as np

_default = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator so that runs are reproducible; returns it."""
    global _default
    _default = np.random.default_rng(seed)
    return _default


def default_rng() -> np.random.Generator:
    """The current default generator (changes after every ``manual_seed``)."""
    return _default


def resolve_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` if one was given, else the default generator at the time of the call."""
    return _default if rng is None else rng


@contextlib.contextmanager
def preserved_default() -> Iterator[None]:
    """Restore the default generator on exit, whatever reseeding happened inside."""
    global _default
    saved = _default
    try:
        yield
    finally:
        _default = saved
