"""At grade time, names a student controls never reach the gradebook or the instructor's
pages (``autograder.pipeline.names``): a submitted folder whose student id is unsafe is refused
with one summary line naming it (not graded, not added to the gradebook); a file with an unsafe
name is left out of the job with a note, and a notebook travels under a safe form of its name
so that a browser's renamed copy is still graded. (No grading here: ``pending`` and
``Course.handed_in`` decide before any job exists; ``test_inert_pages`` grades a class with
such a student, ``test_grading`` a renamed notebook.)"""
from __future__ import annotations

from pathlib import Path

from autograder.pipeline.course import Course
from autograder.pipeline.ledger.grade import Summary, pending

UNIT = "01_setup"


def _hand_in(root: Path, student: str, *files: str) -> None:
    folder = root / "submitted" / student / UNIT
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(name)


def test_an_unsafe_student_id_is_refused_and_named(tmp_path):
    _hand_in(tmp_path, "ada", f"{UNIT}.ipynb", "data/points.csv")
    _hand_in(tmp_path, "<img src=x onerror=alert(1)>", f"{UNIT}.ipynb")
    _hand_in(tmp_path, "bo", f"{UNIT}.ipynb", "<svg onload=alert(1)>.png")
    todo, skipped, refused = pending(Course(tmp_path), [UNIT], None, force=False)
    assert todo == [("ada", UNIT), ("bo", UNIT)] and skipped == []
    assert refused == [
        "the student id '<img src=x onerror=alert(1)>' holds characters other than letters, "
        "digits, '.', '_' and '-': ' ', '(', ')', '<', '=', '>' "
        "(submitted/<img src=x onerror=alert(1)>/01_setup)"]


def test_unsafe_file_names_are_left_out_with_a_note(tmp_path):
    _hand_in(tmp_path, "bo", f"{UNIT}.ipynb", "<svg onload=alert(1)>.png",
             ".ipynb_checkpoints/01_setup-checkpoint.ipynb", "data/points.csv")
    files, notes = Course(tmp_path).handed_in("bo", UNIT)
    assert files == {f"{UNIT}.ipynb": f"{UNIT}.ipynb".encode(),
                     "data/points.csv": b"data/points.csv"}
    assert notes == ["Files whose names hold characters other than letters, digits, '.', '_' "
                     "and '-', or start with a dot, were not graded as named: "
                     "'.ipynb_checkpoints/01_setup-checkpoint.ipynb', '<svg onload=alert(1)>.png'."]


def test_a_browsers_renamed_notebook_travels_under_a_safe_name(tmp_path):
    _hand_in(tmp_path, "cy", f"{UNIT} (1).ipynb")
    files, notes = Course(tmp_path).handed_in("cy", UNIT)
    assert files == {f"{UNIT}__1_.ipynb": f"{UNIT} (1).ipynb".encode()}
    assert "'01_setup (1).ipynb' (graded as 01_setup__1_.ipynb)" in notes[0]


def test_a_safe_form_never_replaces_a_file_of_that_name(tmp_path):
    _hand_in(tmp_path, "di", f"{UNIT}.ipynb", f"{UNIT}+.ipynb", f"{UNIT}_.ipynb")
    files, notes = Course(tmp_path).handed_in("di", UNIT)
    assert files[f"{UNIT}_.ipynb"] == f"{UNIT}_.ipynb".encode() and f"{UNIT}+.ipynb" not in str(files)
    assert notes[0].endswith("not graded as named: '01_setup+.ipynb'.")


def test_the_summary_says_what_was_refused_in_one_line():
    text = str(Summary(refused=["the student id 'a b' holds ... (01_setup)"], where="here"))
    assert "; REFUSED 1 submission(s) with unsafe names (not graded, not added to the " \
           "gradebook): the student id 'a b' holds ... (01_setup)" in text
    assert "\n" not in text
