"""First names for the character-level language models of units 14-16: real text, offline.

``names.txt`` (next to this file, in ``data/``) holds 4,654 of the 5,163 distinct first names
of the US Census Bureau's 1990 lists, lowercase letters only, as the PyPI package ``names``
0.3.0 (MIT License) ships them; the other 509, a tenth chosen by a hash of the name, are the
grader's, which measures language models on names no notebook has.
``data/names-LICENSE.txt`` says how the file was derived and carries the licence. Nothing is
downloaded.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from course.datasets._checks import check_fraction

NAMES_FILE = Path(__file__).parent / "data" / "names.txt"


class NameSplits(NamedTuple):
    """Disjoint lists of names: train, validation and test."""
    train: list[str]
    val: list[str]
    test: list[str]


@lru_cache(maxsize=1)
def _all_names() -> tuple[str, ...]:
    return tuple(NAMES_FILE.read_text(encoding="ascii").split())


def load_names(seed: int = 0, val_size: float = 0.1, test_size: float = 0.1) -> NameSplits:
    """The names, shuffled by ``seed`` and split into train, validation and test.

    The same arguments always give the same three lists; every name is in exactly one of
    them. The sizes are ``round(val_size * N)`` and ``round(test_size * N)`` of the
    ``N = 4,654`` names, the rest for training (3,724, 465 and 465 with the defaults).

    Args:
        seed: seed of the shuffle.
        val_size: fraction of the names for validation, strictly between 0 and 1.
        test_size: fraction of the names for the test split, strictly between 0 and 1.

    Returns:
        ``NameSplits(train, val, test)``, lists of lowercase ``str`` in shuffled order.
    """
    val_size, test_size = check_fraction("val_size", val_size), check_fraction("test_size", test_size)
    if val_size + test_size >= 1:
        raise ValueError(
            f"val_size + test_size must leave names for training, got {val_size} + {test_size}"
        )
    names = _all_names()
    order = np.random.default_rng(seed).permutation(len(names))
    n_val, n_test = round(val_size * len(names)), round(test_size * len(names))
    shuffled = [names[i] for i in order]
    return NameSplits(train=shuffled[n_val + n_test:], val=shuffled[:n_val],
                      test=shuffled[n_val:n_val + n_test])
