"""Every catalogued notebook bug, graded by nbgrader in the session's class, loses exactly the
hidden cells of the checks the mutation audit says catch it (and something).

The audit (tests/autograder) runs every catalogued bug through the checks in-process;
this proves the other half: a bug typed into a notebook reaches those checks through
the hidden test cells, and nbgrader takes exactly their points.
"""
from __future__ import annotations

import pytest

from autograder.pipeline.demo.mutations import MUTATIONS
from autograder.pipeline.demo.scenario import actual_lost, expected_lost

pytestmark = pytest.mark.pipeline


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.mutant for m in MUTATIONS])
def test_buggy_student_loses_exactly_the_checks_its_bug_breaks(graded, mutation):
    student = graded.student(mutation.student)
    lost = actual_lost(graded.root)[(student.name, mutation.unit)][0]
    assert lost == expected_lost(graded.root, mutation.unit, student.loses[mutation.unit])
    assert lost, "a catalogued bug must lose something"
