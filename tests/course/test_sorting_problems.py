"""course.datasets.sorting_problems: unit 16's six-digit problems, drawn from a seed."""
from __future__ import annotations

import numpy as np
import pytest

from course.datasets import sorting_problems


def test_problems_are_six_digits_each_as_int64():
    problems = sorting_problems(1000, seed=0)
    assert problems.shape == (1000, 6) and problems.dtype == np.int64
    assert problems.min() == 0 and problems.max() == 9


def test_digits_are_uniform_and_problems_mostly_distinct():
    problems = sorting_problems(5000, seed=1)
    counts = np.bincount(problems.ravel(), minlength=10)
    assert counts.min() > 0.9 * 3000 and counts.max() < 1.1 * 3000
    assert len({tuple(row) for row in problems}) > 4900


def test_the_same_seed_gives_the_same_problems_and_another_seed_others():
    assert np.array_equal(sorting_problems(20, seed=3), sorting_problems(20, seed=3))
    assert not np.array_equal(sorting_problems(20, seed=3), sorting_problems(20, seed=4))


@pytest.mark.parametrize("count", [0, -1, 2.0, True])
def test_a_bad_count_is_refused(count):
    with pytest.raises(ValueError, match=r"count must be an integer >= 1"):
        sorting_problems(count, seed=0)
