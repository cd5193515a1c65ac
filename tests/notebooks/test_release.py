"""``release/`` is exactly what ``python -m autograder.notebooks release`` makes from ``source/``."""
from __future__ import annotations

import difflib

import pytest

from autograder.notebooks.units import Unit, dumps, normalise, read

pytestmark = pytest.mark.notebooks


def canonical(path) -> str:
    """The notebook's text without outputs and volatile metadata."""
    return dumps(normalise(read(path)))


def test_committed_release_matches_a_fresh_generation(unit, scratch_course):
    fresh = Unit(unit.name, scratch_course).release
    assert unit.release.exists(), "run: python -m autograder.notebooks release"
    committed, generated = canonical(unit.release), canonical(fresh)
    diff = "".join(list(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                             "committed", "regenerated"))[:60])
    assert committed == generated, f"release/ is stale; run python -m autograder.notebooks release\n{diff}"


def test_generation_is_byte_stable(unit, scratch_course):
    """The committed file is already in canonical form: regenerating changes no byte."""
    assert unit.release.read_text(encoding="utf-8") == \
        Unit(unit.name, scratch_course).release.read_text(encoding="utf-8")
