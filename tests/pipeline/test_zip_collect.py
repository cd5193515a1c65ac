"""Hand-in through an LMS: a Canvas-style bulk download (three students, one who uploaded
twice, one file of no known layout) collected by ``nbgrader zip_collect`` with the course's
configuration, then graded, and the grades written back with each student's Canvas user id.
(Moodle's layout and the names: test_lms_plan.py; hostile downloads:
test_zip_collect_hostile.py.)"""
from __future__ import annotations

import csv
import zipfile

import pytest

from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits
from autograder.pipeline.term.lms.lms import write_gradebook_csv
from classroom import nbgrader

pytestmark = pytest.mark.pipeline
UNIT = "01_setup"


@pytest.fixture(scope="module")
def collected(tmp_path_factory, isolated_jupyter, new_course):
    root = tmp_path_factory.mktemp("lms") / "course"
    new_course(root, [UNIT])
    solution, release = (root / folder / UNIT / f"{UNIT}.ipynb" for folder in ("source", "release"))
    archive = root / "downloaded" / UNIT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:
        zf.write(solution, f"doejane_1201_90001_{UNIT}.ipynb")
        zf.write(release, f"roebob_1202_90002_{UNIT}.ipynb")
        zf.write(release, f"kimcy_1203_90003_{UNIT}.ipynb")            # her first upload
        zf.write(solution, f"kimcy_LATE_1203_90117_{UNIT}-1.ipynb")    # and her second, late
        zf.writestr("notes from the LMS.txt", "not a submission")
        zf.write(release, "my homework.ipynb")
    done = nbgrader(root, "zip_collect", UNIT, "--force")
    summary = grade(root, [UNIT], workers=2, limits=Limits(cell_timeout=30), progress=False)
    return root, done.output, summary


def test_each_student_gets_their_newest_notebook(collected):
    root, log, _ = collected
    submitted = {p.parent.parent.name: p for p in (root / "submitted").glob(f"*/{UNIT}/{UNIT}.ipynb")}
    assert sorted(submitted) == ["doejane-1201", "kimcy-1203", "roebob-1202"]
    solution = (root / "source" / UNIT / f"{UNIT}.ipynb").read_bytes()
    assert submitted["kimcy-1203"].read_bytes() == solution
    assert "an older upload of 01_setup.ipynb by kimcy-1203" in log and "my homework.ipynb" in log


def test_the_collected_class_is_graded(collected):
    scores = {r.outcome.student: sum(r.outcome.scores[UNIT].values()) for r in collected[2].results}
    assert scores == {"doejane-1201": 10, "kimcy-1203": 10, "roebob-1202": 0}


def test_grades_go_back_as_one_row_per_student(collected):
    rows = list(csv.reader(open(write_gradebook_csv(collected[0]))))
    assert rows[0] == ["student_id", "first_name", "last_name", "email", "lms_name", "lms_id",
                       f"{UNIT} (10 pts)", "total (10 pts)"]
    assert [(r[0], r[4], r[5], r[6]) for r in rows[1:]] == [
        ("doejane-1201", "doejane", "1201", "10"), ("kimcy-1203", "kimcy", "1203", "10"),
        ("roebob-1202", "roebob", "1202", "0")]
