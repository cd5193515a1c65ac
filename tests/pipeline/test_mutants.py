"""Every catalogued notebook bug, graded by nbgrader in the session's class, loses exactly the
hidden cells of the checks the mutation audit says catch it (and something).

The audit (tests/autograder) runs every catalogued bug through the checks in-process;
this proves the other half: a bug typed into a notebook reaches those checks through
the hidden test cells, and nbgrader takes exactly their points. The class's student who
carries unit 14's held-out names keeps every point and is listed for review.
"""
from __future__ import annotations

import json

import pytest

from autograder.pipeline.course import RECORD
from autograder.pipeline.demo import carried
from autograder.pipeline.demo.mutations import MUTATIONS
from autograder.pipeline.demo.scenario import actual_lost, expected_lost

pytestmark = pytest.mark.pipeline


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.mutant for m in MUTATIONS])
def test_buggy_student_loses_exactly_the_checks_its_bug_breaks(graded, mutation):
    student = graded.student(mutation.student)
    lost = actual_lost(graded.root)[(student.name, mutation.unit)][0]
    assert lost == expected_lost(graded.root, mutation.unit, student.loses[mutation.unit])
    assert lost, "a catalogued bug must lose something"


def test_the_class_cheat_keeps_full_marks_and_only_its_run_is_listed_for_review(graded):
    """Through the sandboxed pipeline: the demo's student who trains on the held-out names
    scores every point of unit 14, and of the unit's submissions only its record lists a cell
    for review."""
    root = graded.root
    lost, score, most = actual_lost(root)[(carried.STUDENT, carried.UNIT)]
    assert lost == set() and score == most
    listed = {folder.parent.name: json.loads((folder / RECORD).read_text()).get("reviews")
              for folder in (root / "autograded").glob(f"*/{carried.UNIT}")}
    assert list(listed[carried.STUDENT]) == ["grade-language-model"]
    assert "carries the held-out names" in listed[carried.STUDENT]["grade-language-model"]
    assert not any(reviews for student, reviews in listed.items() if student != carried.STUDENT)
