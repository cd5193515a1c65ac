"""Hand grading from a CSV (``python -m autograder manual-grades``): unit 11's reflection gets
its score in the gradebook, grades.csv, the class report and feedback; bad rows are named and
nothing is written; running it twice changes nothing."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.__main__ import main
from autograder.pipeline.term import feedback, report
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits

pytestmark = pytest.mark.pipeline
UNIT = "11_capstone"
HEADER = "student,assignment,grade_id,score,comment\n"


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter, new_course) -> Path:
    root = tmp_path_factory.mktemp("manual") / "course"
    new_course(root, [UNIT])
    for student, folder in (("ada", "source"), ("bo", "release")):
        (root / "submitted" / student / UNIT).mkdir(parents=True)
        shutil.copy(root / folder / UNIT / f"{UNIT}.ipynb", root / "submitted" / student / UNIT)
    grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    return root


def _reflection(root: Path, student: str) -> tuple[float | None, str | None, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        submission = gb.find_submission(UNIT, student)
        nb = submission.notebooks[0]
        grade_ = next(g for g in nb.grades if g.name == "reflection")
        comment = next(c for c in nb.comments if c.name == "reflection")
        return grade_.manual_score, comment.manual_comment, submission.score


def _csv(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "marks.csv"
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("row, says", [
    ("zoe,11_capstone,reflection,8,", "line 3 (zoe, 11_capstone, reflection): no submission"),
    ("ada,11_capstone,reflexion,8,", "has no graded cell 'reflexion'"),
    ("ada,11_capstone,grade-accuracy,8,", "grade-accuracy is graded automatically"),
    ("ada,11_capstone,reflection,11,", "the score 11 is outside 0..10"),
    ("ada,11_capstone,reflection,eight,", "the score 'eight' is not a number"),
    ("ada,12_autograd,reflection,8,", "no submission of 12_autograd by ada"),
])
def test_a_bad_row_is_named_and_nothing_is_written(course, tmp_path, capsys, row, says):
    before = _reflection(course, "bo")
    path = _csv(tmp_path, "bo,11_capstone,reflection,7,fine", row)
    assert main(["--course", str(course), "manual-grades", str(path)]) == 2
    assert says in capsys.readouterr().err
    assert _reflection(course, "bo") == before


def test_manual_scores_reach_the_gradebook_export_report_and_feedback(course, tmp_path, capsys):
    path = _csv(tmp_path, "ada,11_capstone,reflection,8,Clear about the confusions 4/9.",
                "bo,11_capstone,reflection,0,")
    assert main(["--course", str(course), "manual-grades", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 manual grade(s)" in out and "2 changed" in out
    assert _reflection(course, "ada") == (8.0, "Clear about the confusions 4/9.", 28.0)
    assert main(["--course", str(course), "manual-grades", str(path)]) == 0
    assert "0 changed" in capsys.readouterr().out                       # idempotent
    rows = {r["student_id"]: r for r in csv.DictReader(open(feedback.export(course)))}
    assert float(rows["ada"]["raw_score"]) == 28.0
    assert sorted(report.collect(course).scores[UNIT]) == pytest.approx([0, 100 * 28 / 30])
    feedback.generate(course, [UNIT], workers=1, students=["ada"])
    page = (course / "feedback" / "ada" / UNIT / f"{UNIT}.html").read_text(encoding="utf-8")
    assert "Clear about the confusions 4/9." in page and "28.0 / 30.0" in page


def test_a_code_cell_the_grader_failed_on_takes_a_manual_score(course, tmp_path, capsys):
    """A cell left without a score by the grader's fault (``flags``) waits for an instructor:
    the CSV may give it its score; a code cell the grader did score stays refused."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        cell = gb.find_grade("grade-accuracy", UNIT, UNIT, "bo")
        before = cell.auto_score
        cell.auto_score, cell.needs_manual_grade = None, True       # as merge leaves it
        gb.db.commit()
    try:
        path = _csv(tmp_path, "bo,11_capstone,grade-accuracy,4,graded by hand: the grader failed")
        assert main(["--course", str(course), "manual-grades", str(path)]) == 0
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            cell = gb.find_grade("grade-accuracy", UNIT, UNIT, "bo")
            assert (cell.manual_score, cell.needs_manual_grade) == (4.0, False)
    finally:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            cell = gb.find_grade("grade-accuracy", UNIT, UNIT, "bo")
            cell.auto_score, cell.manual_score, cell.needs_manual_grade = before, None, False
            gb.db.commit()
    capsys.readouterr()
