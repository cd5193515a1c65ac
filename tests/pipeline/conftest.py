"""One graded class for the pipeline tests, built once per session.

The session's course (``graded_units`` in tests/conftest.py: every unit, the
``reference`` and ``release`` students) plus a class of made-up students: every
catalogued notebook bug (units 02, 03, 04, 06, 13) and every bad submission (unit 03),
graded by the parallel grader with two workers, with feedback for a few of them. Everything
that starts kernels is marked ``pipeline``; the student-bundle test, which builds
a virtual environment, is also marked ``slow``.
"""
from __future__ import annotations

import pytest

from autograder.pipeline.term import feedback
from autograder.pipeline.demo.scenario import make_class
from classroom import FEEDBACK_STUDENTS, FEEDBACK_UNITS
from grading_cluster import make_credentials


def pytest_configure(config):
    config.addinivalue_line("markers", "pipeline: grades notebooks with the parallel grader")
    config.addinivalue_line("markers", "slow: builds a virtual environment (about a minute or more)")


# The class's cell time limit (the course's is 30 s). Two of its students loop forever in a cell,
# and each burns a core until the limit (at 30 s, 36 s of CPU between them). Its longest honest
# cell is unit 16's live run of the namer (`code-live`, an experiment that scores nothing): about
# 5 s of CPU time alone, but past 15 s on the clock for some of unit 16's students at the suite's
# load (2 of 6 in one run). It is then stopped, the job notes it, and the cells after it are
# graded as usual, so each student's score stands.
CLASS_CELL_TIMEOUT = 15


@pytest.fixture(scope="session")
def graded(graded_units):
    """The session's course with the buggy and bad students graded too."""
    graded_units.grade([s for s in make_class(graded_units.root, graded_units.units)
                        if s.name not in ("reference", "release")], CLASS_CELL_TIMEOUT)
    feedback.generate(graded_units.root, FEEDBACK_UNITS, workers=2, students=FEEDBACK_STUDENTS)
    return graded_units


@pytest.fixture(scope="session")
def credentials(tmp_path_factory):
    """TLS files for the tests' ``dask scheduler`` and ``dask worker`` processes, made with the
    openssl command of docs/deploying.md."""
    return make_credentials(tmp_path_factory.mktemp("tls"))


# One course hub for the term test and the attack test (tests/pipeline/hubs.py).
from hubs import chromium, hub  # noqa: E402,F401
