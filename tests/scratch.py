"""Scratch courses for the tests: each set of units generated once a session, then copied.

``make_course`` generates its units with nbgrader, several seconds of computing per unit,
often more than the test's own work; a dozen modules want a course of unit 01 alone.
``new_course(root, units)`` copies the course ``make_course`` made the first time the session
(an xdist worker) asked for those units, and returns the units it made, as ``make_course``
does. The scratch course of every unit, which the session grades, is tests/conftest.py's.
(Loaded as a plugin by tests/conftest.py: pytest puts tests/ on ``sys.path``.)
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.pipeline.demo.scenario import make_course


@pytest.fixture(scope="session")
def new_course(tmp_path_factory) -> Callable[[Path, list[str]], list[str]]:
    made: dict[tuple[str, ...], tuple[Path, list[str]]] = {}

    def new(root: Path, names: list[str]) -> list[str]:
        if tuple(names) not in made:
            template = tmp_path_factory.mktemp("generated") / "course"
            made[tuple(names)] = template, make_course(template, names)
        template, units = made[tuple(names)]
        shutil.copytree(template, root, symlinks=True)
        return units

    return new
