"""Sorting problems for unit 16's GPT (minGPT's demo): rows of random digits to be sorted.

A problem is ``PROBLEM_LENGTH`` digits, each drawn uniformly from 0-9; the model reads them
and writes them in ascending order. The same ``seed`` always gives the same problems.
"""
from __future__ import annotations

import numpy as np

from course.datasets._checks import check_count

PROBLEM_LENGTH = 6
DIGITS = 10


def sorting_problems(count: int, seed: int) -> np.ndarray:
    """``count`` problems of ``PROBLEM_LENGTH`` uniform digits, drawn with ``seed``.

    Returns:
        An int64 array of shape ``(count, 6)`` with values in ``[0, 10)``; a digit may repeat.
    """
    count = check_count("count", count, 1)
    return np.random.default_rng(seed).integers(0, DIGITS, size=(count, PROBLEM_LENGTH),
                                                dtype=np.int64)
