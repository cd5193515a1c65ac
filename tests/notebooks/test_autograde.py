"""nbgrader autogrades every unit: the source notebook (the solutions) earns full points and the
release notebook (the stubs) earns zero, cell by cell.

The zero for the stubs proves that the hidden tests run: in a release notebook a hidden
test cell holds only a comment, which would pass (and earn its points) if nbgrader did
not put the hidden tests back before grading.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.notebooks.lint import BEGIN_HIDDEN
from autograder.notebooks.release import nbgrader_env
from autograder.notebooks.units import Unit, is_grade, nbgrader, points, read, units

pytestmark = pytest.mark.notebooks

STUDENTS = {"solutions": "source", "stubs": "release"}   # student id: which notebook they hand in


@pytest.fixture(scope="session")
def gradebook(course_copy: Path) -> Path:
    """Every unit submitted by both students and autograded (one nbgrader run); the course."""
    with Gradebook(f"sqlite:///{course_copy / 'gradebook.db'}") as gb:
        for student in STUDENTS:
            gb.update_or_create_student(student)
    for student, version in STUDENTS.items():
        for unit in units(course_copy):
            folder = course_copy / "submitted" / student / unit.name
            folder.mkdir(parents=True)
            shutil.copy(getattr(unit, version), folder / f"{unit.name}.ipynb")
            (folder / "timestamp.txt").write_text("2026-01-05 09:00:00.000000 UTC")
    command = [sys.executable, "-m", "nbgrader", "autograde", "[0-9][0-9]_*"]
    done = subprocess.run(command, cwd=course_copy, env=nbgrader_env(), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return course_copy


def grades(root: Path, unit: Unit, student: str) -> dict[str, float]:
    """The autograded score of every grade cell, by grade id."""
    source = read(unit.source)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {nbgrader(cell)["grade_id"]: gb.find_grade(nbgrader(cell)["grade_id"], unit.name,
                                                          unit.name, student).score
                for cell in source.cells if is_grade(cell)}


def test_solutions_earn_full_points(unit, gradebook):
    scores = grades(gradebook, unit, "solutions")
    expected = {nbgrader(c)["grade_id"]: nbgrader(c)["points"] for c in read(unit.source).cells
                if is_grade(c)}
    assert scores == expected
    print(f"{unit}: {sum(scores.values()):g}/{points(read(unit.source)):g} points")


def test_stubs_earn_nothing_even_in_hidden_test_cells(unit, gradebook):
    scores = grades(gradebook, unit, "stubs")
    assert scores and all(score == 0 for score in scores.values()), scores
    hidden = [nbgrader(c)["grade_id"] for c in read(unit.source).cells
              if is_grade(c) and BEGIN_HIDDEN in c.source]
    assert all(scores[grade_id] == 0 for grade_id in hidden)
