"""One graded class for the pipeline tests, built once per session.

A scratch course with units 01-03 (the units that are finished; later units are
left out on purpose), a class of made-up students (the reference solutions, the
untouched release, catalogued bugs, every bad submission), graded by the parallel
grader with two workers, with feedback generated. Everything that starts kernels
is marked ``pipeline``; the student-bundle test, which builds a virtual
environment, is also marked ``slow``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.pipeline import feedback
from autograder.pipeline.demo.mutations import MUTATIONS
from autograder.pipeline.demo.scenario import Student, make_class, make_course, submit
from autograder.pipeline.grade import Summary, grade
from autograder.pipeline.job import Limits
from classroom import CELL_TIMEOUT, FEEDBACK_STUDENTS, FIRST_MUTANTS, UNITS, tree_hash

JUPYTER_STATE = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "MPLCONFIGDIR")


def pytest_configure(config):
    config.addinivalue_line("markers", "pipeline: grades notebooks with the parallel grader")
    config.addinivalue_line("markers", "slow: builds a virtual environment (about a minute or more)")


@dataclass
class GradedClass:
    root: Path
    students: list[Student]
    summary: Summary
    source_hash: str

    def student(self, name: str) -> Student:
        return next(s for s in self.students if s.name == name)


@pytest.fixture(scope="session")
def pipeline_env(tmp_path_factory):
    """Jupyter's and matplotlib's state in a temporary folder for the session."""
    state = tmp_path_factory.mktemp("pipeline-jupyter")
    saved = {name: os.environ.get(name) for name in JUPYTER_STATE}
    for name in JUPYTER_STATE:
        os.environ[name] = str(state / name.lower())
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def scratch_course(tmp_path_factory, pipeline_env) -> Path:
    root = tmp_path_factory.mktemp("pipeline") / "course"
    assert make_course(root, UNITS) == UNITS
    return root


@pytest.fixture(scope="session")
def graded(scratch_course) -> GradedClass:
    root = scratch_course
    mutations = tuple(m for m in MUTATIONS if m.mutant in FIRST_MUTANTS)
    students = make_class(root, UNITS, mutations=mutations)
    submit(root, students)
    source_hash = tree_hash(root / "source")
    summary = grade(root, workers=2, limits=Limits(cell_timeout=CELL_TIMEOUT), progress=False)
    feedback.generate(root, workers=2, students=FEEDBACK_STUDENTS)
    return GradedClass(root, students, summary, source_hash)
