"""The rest of the catalogued bugs, graded in a second run on the session's course: each
buggy student loses exactly the hidden cells of the checks the mutation audit says catch it."""
from __future__ import annotations

import pytest

from autograder.pipeline.demo.mutations import MUTATIONS
from autograder.pipeline.demo.scenario import actual_lost, expected_lost, make_class, submit
from autograder.pipeline.grade import grade
from autograder.pipeline.job import Limits
from classroom import CELL_TIMEOUT, FIRST_MUTANTS, UNITS

pytestmark = pytest.mark.pipeline
REST = tuple(m for m in MUTATIONS if m.mutant not in FIRST_MUTANTS)


@pytest.fixture(scope="module")
def rest_graded(graded):
    students = [s for s in make_class(graded.root, UNITS, with_bad=False, mutations=REST)
                if s.name.startswith("bug-")]
    submit(graded.root, students)
    summary = grade(graded.root, workers=2, limits=Limits(cell_timeout=CELL_TIMEOUT), progress=False,
                    students=[s.name for s in students])
    assert len(summary.results) == len(REST)
    return {s.name: s for s in students}


@pytest.mark.parametrize("mutation", REST, ids=[m.mutant for m in REST])
def test_buggy_student_loses_exactly_the_checks_its_bug_breaks(graded, rest_graded, mutation):
    student = rest_graded[mutation.student]
    lost = actual_lost(graded.root)[(student.name, mutation.unit)][0]
    assert lost == expected_lost(graded.root, mutation.unit, student.loses[mutation.unit])
    assert lost, "a catalogued bug must lose something"
