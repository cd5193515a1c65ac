"""At grade time, a submitted folder whose student id or file name is unsafe
(``autograder.pipeline.names``) is refused with one summary line naming it: not graded, not
added to the gradebook. (No grading here: ``pending`` decides before any job exists;
``test_inert_pages`` grades a class with such a student.)"""
from __future__ import annotations

from pathlib import Path

from autograder.pipeline.course import Course
from autograder.pipeline.grade import Summary, pending

UNIT = "01_setup"


def _hand_in(root: Path, student: str, *files: str) -> None:
    folder = root / "submitted" / student / UNIT
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}")


def test_unsafe_student_ids_and_file_names_are_refused_and_named(tmp_path):
    _hand_in(tmp_path, "ada", f"{UNIT}.ipynb", "data/points.csv")
    _hand_in(tmp_path, "<img src=x onerror=alert(1)>", f"{UNIT}.ipynb")
    _hand_in(tmp_path, "bo", f"{UNIT}.ipynb", "<svg onload=alert(1)>.png")
    _hand_in(tmp_path, "cy", f"{UNIT}.ipynb", ".ipynb_checkpoints/x.ipynb")
    todo, skipped, refused = pending(Course(tmp_path), [UNIT], None, force=False)
    assert todo == [("ada", UNIT)] and skipped == []
    assert refused == [
        "the student id '<img src=x onerror=alert(1)>' holds characters other than letters, "
        "digits, '.', '_' and '-': ' ', '(', ')', '<', '=', '>' (01_setup)",
        "the file name '<svg onload=alert(1)>.png' holds characters other than letters, digits, "
        "'.', '_' and '-': ' ', '(', ')', '<', '=', '>' (submitted/bo/01_setup)",
        "the file name '.ipynb_checkpoints' starts with a dot (hidden, or a path like '..') "
        "(submitted/cy/01_setup)"]


def test_the_summary_says_what_was_refused_in_one_line():
    text = str(Summary(refused=["the student id 'a b' holds ... (01_setup)"], where="here"))
    assert "; REFUSED 1 submission(s) with unsafe names (not graded, not added to the " \
           "gradebook): the student id 'a b' holds ... (01_setup)" in text
    assert "\n" not in text
