"""course.datasets.load_names: unit 14's first names, shipped in the package, split by a seed."""
from __future__ import annotations

import re

import pytest

from course.datasets import load_names
from course.datasets.names import NAMES_FILE


def test_the_file_holds_4654_distinct_lowercase_names_sorted():
    names = NAMES_FILE.read_text(encoding="ascii").split()
    assert len(names) == 4654 == len(set(names))
    assert names == sorted(names)
    assert all(re.fullmatch(r"[a-z]{2,}", name) for name in names)
    assert {"mary", "james", "emma"} <= set(names)


def test_the_licence_and_source_are_stated_next_to_the_file():
    notice = (NAMES_FILE.parent / "names-LICENSE.txt").read_text()
    assert "MIT License" in notice and "Copyright (c) 2013 Trey Hunner" in notice
    assert "names 0.3.0" in notice.replace("`", "") and "1990 census" in notice
    assert "509 names" in notice and "SHA-256" in notice      # the grader's, left out


def test_default_splits_are_disjoint_and_cover_every_name():
    train, val, test = load_names()
    assert (len(train), len(val), len(test)) == (3724, 465, 465)
    assert not set(train) & set(val) and not set(train) & set(test) and not set(val) & set(test)
    assert sorted(train + val + test) == NAMES_FILE.read_text(encoding="ascii").split()


def test_the_same_seed_gives_the_same_splits_and_another_seed_others():
    assert load_names(seed=3) == load_names(seed=3)
    assert load_names(seed=3).val != load_names(seed=4).val


def test_the_splits_are_shuffled_not_alphabetical():
    train = load_names().train
    assert train != sorted(train)


def test_fractions_set_the_sizes():
    splits = load_names(val_size=0.2, test_size=0.05)
    assert (len(splits.val), len(splits.test)) == (round(0.2 * 4654), round(0.05 * 4654))


@pytest.mark.parametrize("kwargs, fragment", [
    ({"val_size": 0}, "val_size"), ({"test_size": 1.0}, "test_size"),
    ({"val_size": 0.6, "test_size": 0.4}, "leave names for training"),
])
def test_bad_fractions_are_refused(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        load_names(**kwargs)
