"""A term through nbgrader's exchange, with our grader in the middle: release, fetch, submit
(twice for one student), collect --update, ``python -m autograder grade``, feedback,
release_feedback, fetch_feedback; three students, each graded as themselves."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from classroom import nbgrader

from autograder.pipeline import feedback
from autograder.pipeline.demo.scenario import make_course
from autograder.pipeline.grade import grade
from autograder.pipeline.job import Limits

pytestmark = pytest.mark.pipeline
UNIT = "01_setup"


@pytest.fixture(scope="module")
def term(tmp_path_factory, isolated_jupyter):
    base = tmp_path_factory.mktemp("term")
    root, exchange = base / "course", base / "exchange"
    make_course(root, [UNIT])
    exchange.mkdir(mode=0o777)
    as_student = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=minitorch"]
    nbgrader(root, "release_assignment", UNIT, f"--Exchange.root={exchange}")
    homes = {name: base / "home" / name for name in ("alice", "bob", "carol")}
    solution = root / "source" / UNIT / f"{UNIT}.ipynb"
    for name, home in homes.items():
        home.mkdir(parents=True)
        nbgrader(home, "fetch_assignment", UNIT, *as_student, home=home)
        if name == "carol":      # hands in the untouched notebook first, then her solution
            nbgrader(home, "submit", UNIT, f"--student={name}", *as_student, home=home)
            time.sleep(1.1)      # nbgrader's timestamps have a second's resolution in names
        if name != "bob":
            shutil.copy(solution, home / UNIT / f"{UNIT}.ipynb")
        nbgrader(home, "submit", UNIT, f"--student={name}", *as_student, home=home)
    nbgrader(root, "collect", UNIT, "--update", f"--Exchange.root={exchange}")
    for name in ("alice", "bob"):      # the class list, where carol is missing
        nbgrader(root, "db", "student", "add", name)
    summary = grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    feedback.generate(root, [UNIT], workers=2)
    nbgrader(root, "release_feedback", UNIT, f"--Exchange.root={exchange}")
    for name, home in homes.items():
        nbgrader(home, "fetch_feedback", UNIT, f"--student={name}", *as_student, home=home)
    return root, exchange, homes, summary


def _fetched(home: Path) -> str:
    """The one feedback page a student finds: for the submission collected (carol's newer)."""
    pages = list((home / UNIT / "feedback").glob(f"*/{UNIT}.html"))
    assert len(pages) == 1, pages
    return pages[0].read_text(encoding="utf-8")


def test_every_student_is_graded_as_themselves(term):
    root, _, homes, summary = term
    assert sorted(r.outcome.student for r in summary.results) == sorted(homes)
    assert all(r.status == "graded" for r in summary.results)
    assert all((root / "autograded" / name / UNIT / "submission_secret.txt").exists()
               for name in homes)


@pytest.mark.parametrize("name, score", [("alice", "10.0 / 10.0"), ("bob", "0.0 / 10.0"),
                                         ("carol", "10.0 / 10.0")])
def test_students_fetch_their_score_and_messages_but_no_hidden_code(term, name, score):
    page = _fetched(term[2][name])
    assert score in page
    assert "BEGIN HIDDEN TESTS" not in page and "check.affine_values" not in page
    if name == "bob":
        assert "CheckFailure" in page and "not implemented yet" in page


def test_a_student_missing_from_the_class_list_is_graded_and_named(term):
    summary = term[3]
    assert summary.newcomers == ["carol"]
    assert "not on its student list before: carol" in str(summary)


def test_releasing_a_unit_never_generated_says_so(term):
    root, exchange = term[0], term[1]
    done = nbgrader(root, "release_assignment", "99_nope", f"--Exchange.root={exchange}",
                    check=False)
    assert done.returncode != 0 and "99_nope" in done.stdout + done.stderr
