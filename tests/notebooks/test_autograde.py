"""nbgrader autogrades every unit: the source notebook (the solutions) earns full points and the
release notebook (the stubs) earns zero, cell by cell.

The zero for the stubs proves that the hidden tests run: in a release notebook a hidden
test cell holds only a comment, which would pass (and earn its points) if nbgrader did
not put the hidden tests back before grading. The grading is the session's
(``graded_units``: ``reference`` hands in the source notebooks, ``release`` the
release notebooks; the instructor pipeline runs ``nbgrader autograde`` with the
course's ``nbgrader_config.py``), which the pipeline tests share.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.notebooks.lint import BEGIN_HIDDEN
from autograder.notebooks.units import Unit, is_grade, nbgrader, points, read

pytestmark = pytest.mark.notebooks


def grades(root: Path, unit: Unit, student: str) -> dict[str, float]:
    """The autograded score of every grade cell, by grade id."""
    source = read(unit.source)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {nbgrader(cell)["grade_id"]: gb.find_grade(nbgrader(cell)["grade_id"], unit.name,
                                                          unit.name, student).score
                for cell in source.cells if is_grade(cell)}


def test_solutions_earn_full_points(unit, graded_units):
    scores = grades(graded_units.root, unit, "reference")
    expected = {nbgrader(c)["grade_id"]: nbgrader(c)["points"] for c in read(unit.source).cells
                if is_grade(c)}
    assert scores == expected
    print(f"{unit}: {sum(scores.values()):g}/{points(read(unit.source)):g} points")


def test_stubs_earn_nothing_even_in_hidden_test_cells(unit, graded_units):
    scores = grades(graded_units.root, unit, "release")
    assert scores and all(score == 0 for score in scores.values()), scores
    hidden = [nbgrader(c)["grade_id"] for c in read(unit.source).cells
              if is_grade(c) and BEGIN_HIDDEN in c.source]
    assert all(scores[grade_id] == 0 for grade_id in hidden)
