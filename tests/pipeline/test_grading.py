"""The parallel grader on a class: every student scores exactly what they must, and nothing
a submission does reaches the course (its gradebook, ``source/``) or the machine."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.pipeline.demo import bad
from autograder.pipeline.demo.scenario import actual_lost, expected_lost

pytestmark = pytest.mark.pipeline

STUDENTS = ["reference", "release"] + [case.student for case in bad.CASES]   # bugs: test_mutants


@pytest.mark.parametrize("name", STUDENTS)
def test_student_loses_exactly_the_expected_cells(graded, name):
    student, lost = graded.student(name), actual_lost(graded.root)
    for unit, loses in student.loses.items():
        assert (name, unit) in lost, f"{name} has no grade for {unit}"
        assert lost[(name, unit)][0] == expected_lost(graded.root, unit, loses), student.story


def test_reference_full_marks_and_release_zero_in_every_unit(graded):
    lost = actual_lost(graded.root)
    for unit in graded.student("reference").builders:   # (cells graded by hand: 0 until graded)
        assert not lost[("reference", unit)][0] and lost[("reference", unit)][1] > 0
        assert lost[("release", unit)][1] == 0


def test_every_submission_is_graded_and_recorded(graded):
    assert not [r for r in graded.results if r.status != "graded"]
    expected = sum(len(s.builders) for s in graded.students)
    assert len(graded.results) == expected
    for result in graded.results:
        record = graded.root / "autograded" / result.outcome.student / result.outcome.assignment
        assert json.loads((record / ".grading.json").read_text())["status"] == "graded"


def test_submissions_cannot_touch_the_course_or_the_machine(graded):
    assert graded.source_unchanged()
    with Gradebook(f"sqlite:///{graded.root / 'gradebook.db'}") as gb:
        assert {s.name for s in graded.students} <= {s.id for s in gb.students}
    assert not Path(bad.PWNED).exists()
    outputs = _cell_text(graded.root, "bad-writes-outside", "linear")
    assert outputs.count("blocked:") == 7, outputs


def test_output_is_bounded(graded):
    path = graded.root / "autograded/bad-prints-50mb/03_module_linear/03_module_linear.ipynb"
    assert path.stat().st_size < 3_000_000
    text = _cell_text(graded.root, "bad-prints-50mb", "linear")
    assert "the grader dropped the rest of this cell's output" in text   # in the kernel
    assert len(text) < 1_100_000


def test_memory_is_bounded(graded):
    assert "MemoryError" in _cell_text(graded.root, "bad-memory-hog", "linear")


@pytest.mark.parametrize("name, note", [
    ("bad-loop-after-definition", "Cells stopped at the time limit: linear."),
    ("bad-loop-in-method", "Cells stopped at the time limit: linear-tests"),
    ("bad-corrupted-json", "could not be read"),
    ("bad-empty-folder", "has no 03_module_linear.ipynb"),
    ("bad-renamed-notebook", "your 03_module_linear__1_.ipynb was graded in its place"),
    ("bad-nbformat-v3", "old nbformat 3"),
    ("bad-deleted-read-only-cells", "put back: setup, module-base"),
])
def test_the_grader_explains_what_it_did(graded, name, note):
    nb = nbformat.read(str(graded.root / f"autograded/{name}/03_module_linear/03_module_linear.ipynb"),
                       as_version=4)
    assert nb.cells[0].cell_type == "markdown" and note in nb.cells[0].source


def test_an_endless_method_fails_its_check_with_a_message(graded):
    text = _cell_text(graded.root, "bad-loop-in-method", "hidden-linear-forward")
    assert "did not finish within 10 s" in text


def _cell_text(root: Path, student: str, grade_id: str) -> str:
    path = root / f"autograded/{student}/03_module_linear/03_module_linear.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(o.get("text", "") + o.get("ename", "") + o.get("evalue", "") for o in cell.outputs)


def test_the_guard_never_gets_in_the_way_of_honest_work(graded):
    for student in ("reference", "release"):
        for path in (graded.root / "autograded" / student).glob("*/*.ipynb"):
            assert "The grader does not let" not in path.read_text(encoding="utf-8"), path
