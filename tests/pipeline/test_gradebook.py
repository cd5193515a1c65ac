"""The course gradebook has one writer: re-running changes nothing, manual grades survive,
and a tampered job gradebook cannot give more than a cell's points."""
from __future__ import annotations

import shutil

import pytest
from nbgrader.api import Gradebook

from autograder.__main__ import main
from autograder.notebooks.units import units
from autograder.pipeline import flags, gradebook
from autograder.pipeline.demo.scenario import actual_lost

UNIT, CELL = "03_module_linear", "hidden-linear-forward"


def _grade(root, student):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        grade = gb.find_grade(CELL, UNIT, UNIT, student)
        comment = gb.find_comment("linear", UNIT, UNIT, student)
        return grade.auto_score, grade.manual_score, grade.needs_manual_grade, comment.manual_comment


@pytest.mark.pipeline
def test_rerun_is_idempotent_and_keeps_manual_grades(graded, capsys):
    root = graded.root
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.find_grade(CELL, UNIT, UNIT, "reference").manual_score = 2.5
        gb.find_comment("linear", UNIT, UNIT, "reference").manual_comment = "Nice derivation."
        gb.db.commit()
    before = actual_lost(root)

    assert main(["--course", str(root), "grade", "--workers", "2"]) == 0
    assert "graded 0 submission(s)" in capsys.readouterr().out   # all unchanged: skipped
    assert actual_lost(root) == before

    assert main(["--course", str(root), "grade", UNIT, "--student", "reference", "--force",
                 "--timeout", "30"]) == 0
    assert "graded 1 submission(s)" in capsys.readouterr().out
    assert _grade(root, "reference") == (3.0, 2.5, True, "Nice derivation.")
    after = actual_lost(root)
    assert {k: v for k, v in after.items() if k != ("reference", UNIT)} == \
        {k: v for k, v in before.items() if k != ("reference", UNIT)}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:   # as it was, for other tests
        grade = gb.find_grade(CELL, UNIT, UNIT, "reference")
        grade.manual_score, grade.needs_manual_grade = None, False
        gb.find_comment("linear", UNIT, UNIT, "reference").manual_comment = None
        gb.db.commit()


def test_merge_clamps_scores_and_keeps_manual_work(scratch_course, tmp_path):
    db = tmp_path / "gradebook.db"
    gradebook.template(scratch_course / "gradebook.db", db)
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_student("alice")
        gb.add_submission(UNIT, "alice")
        gb.find_grade(CELL, UNIT, UNIT, "alice").manual_score = 1.0
        gb.db.commit()
        outcome = gradebook.Outcome("alice", UNIT, scores={UNIT: {CELL: 99.0, "hidden-linear-init": -5.0}})
        gradebook.merge(gb, outcome)
        forward = gb.find_grade(CELL, UNIT, UNIT, "alice")
        assert (forward.auto_score, forward.manual_score, forward.needs_manual_grade) == (3.0, 1.0, True)
        assert gb.find_grade("hidden-linear-init", UNIT, UNIT, "alice").auto_score == 0.0
        gradebook.merge(gb, gradebook.Outcome("alice", UNIT, review=True))
        grades = [g for nb in gb.find_submission(UNIT, "alice").notebooks for g in nb.grades]
        assert all(g.auto_score == 0 and g.needs_manual_grade for g in grades)


def test_a_cell_the_grader_failed_on_has_no_score_and_waits_for_an_instructor(scratch_course,
                                                                            tmp_path):
    """nbgrader's "needs manual grade": no auto_score (not earned, not a failed test), flagged;
    a manual score already given stays and decides the cell."""
    db = tmp_path / "gradebook.db"
    gradebook.template(scratch_course / "gradebook.db", db)
    why = flags.Unscored(flags.Flag.GRADER_FAULT, "the grader could not listen")
    with Gradebook(f"sqlite:///{db}") as gb:
        gb.add_student("bob")
        gb.add_submission(UNIT, "bob")
        gb.find_grade("hidden-linear-init", UNIT, UNIT, "bob").manual_score = 1.0
        gb.db.commit()
        gradebook.merge(gb, gradebook.Outcome(
            "bob", UNIT, scores={UNIT: {CELL: 0.0, "hidden-linear-init": 0.0, "hidden-xavier": 0.0}},
            unscored={UNIT: {CELL: why, "hidden-linear-init": why}}))
        forward, init, backward = (gb.find_grade(name, UNIT, UNIT, "bob") for name in
                                   (CELL, "hidden-linear-init", "hidden-xavier"))
        assert (forward.auto_score, forward.needs_manual_grade, forward.failed_tests) == (None, True, None)
        assert (init.auto_score, init.manual_score, init.score, init.needs_manual_grade) == \
            (None, 1.0, 1.0, True)
        assert (backward.auto_score, backward.needs_manual_grade) == (0.0, False)
        assert gb.find_submission(UNIT, "bob").needs_manual_grade


def test_template_holds_the_assignments_and_no_student(scratch_course, tmp_path):
    copy = tmp_path / "course.db"
    shutil.copy(scratch_course / "gradebook.db", copy)
    with Gradebook(f"sqlite:///{copy}") as gb:
        gb.update_or_create_student("someone-private", email="someone@example.org")
        gb.add_submission(UNIT, "someone-private")
        gb.find_comment("linear", UNIT, UNIT, "someone-private").manual_comment = "private words"
        gb.db.commit()
        expected = [assignment.name for assignment in gb.assignments]
    assignments = gradebook.template(copy, tmp_path / "template.db")
    assert assignments == expected and set(assignments) == {u.name for u in units(scratch_course)}
    with Gradebook(f"sqlite:///{tmp_path / 'template.db'}") as gb:
        assert gb.students == [] and gb.find_assignment(UNIT).notebooks
    held = (tmp_path / "template.db").read_bytes()
    assert not any(word in held for word in (b"someone", b"private words"))   # vacuumed
