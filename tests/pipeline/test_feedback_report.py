"""Feedback shows failed checks and their messages but no hidden test code; the CSV export
and the class report cover the class."""
from __future__ import annotations

import csv
import re

import pytest

from autograder.pipeline.term import feedback, report
from classroom import FEEDBACK_STUDENTS, FEEDBACK_UNITS

pytestmark = pytest.mark.pipeline
HIDDEN = ("BEGIN HIDDEN TESTS", "from autograder import check", "check.linear_", "check.numerical_",
          "check.rel_error", "autograder/registry.py", "raise CheckFailure")


def _html(root, student, unit):
    return next((root / "feedback" / student / unit).glob("*.html")).read_text(encoding="utf-8")


def test_feedback_exists_for_every_chosen_submission(graded):
    for student in FEEDBACK_STUDENTS:
        for unit in set(graded.student(student).builders) & set(FEEDBACK_UNITS):
            assert _html(graded.root, student, unit)


def test_feedback_never_shows_hidden_test_code(graded):
    pages = list((graded.root / "feedback").rglob("*.html"))
    assert len(pages) >= len(FEEDBACK_STUDENTS)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not [word for word in HIDDEN if word in text], page


def test_every_picture_in_feedback_is_described(graded):
    """A plot's ``<img>`` has an ``alt``, as in nbconvert's pages, although the course's exporter
    does not parse the page again to add it (autograder/pipeline/term/feedback_page.py)."""
    pictures = [tag for page in (graded.root / "feedback").rglob("*.html")
                for tag in re.findall(r"<img\b[^>]*>", page.read_text(encoding="utf-8"))]
    assert pictures and all(re.search(r"\salt=", tag) for tag in pictures), \
        [tag[:60] + "..." + tag[-80:] for tag in pictures if not re.search(r"\salt=", tag)][:3]


def test_feedback_shows_the_failed_check_and_its_diagnosis(graded):
    text = _html(graded.root, "bug-linear-weight-grad-transposed", "03_module_linear")
    assert "CheckFailure" in text and "Likely mistake" in text and "transposed" in text
    text = _html(graded.root, "bug-numerical-gradient-not-restoring-x", "02_gradients")
    assert "not restored" in text


def test_feedback_shows_the_graders_notes(graded):
    assert "could not be read" in _html(graded.root, "bad-corrupted-json", "03_module_linear")
    assert "did not finish within 10 s" in _html(graded.root, "bad-loop-in-method", "03_module_linear")


def test_export_has_a_row_per_student_and_assignment(graded, tmp_path):
    path = feedback.export(graded.root, tmp_path / "grades.csv")
    rows = list(csv.DictReader(path.open()))
    scores = {(r["student_id"], r["assignment"]): float(r["score"]) for r in rows}
    assert scores[("reference", "03_module_linear")] == 20.0
    assert scores[("release", "02_gradients")] == 0.0
    assert len(rows) == len({s.name for s in graded.students}) * len(graded.units)


def test_class_report_shows_distributions_pass_rates_and_mistakes(graded, tmp_path):
    data = report.collect(graded.root)
    assert data.units == graded.units
    forward = data.cells[("03_module_linear", "check.linear_forward")]
    assert len(forward) == len([s for s in graded.students if "03_module_linear" in s.builders])
    texts = " ".join(data.examples.values())
    assert "x was not restored" in texts and "instead of `+=`" in texts
    html = report.write_report(graded.root, tmp_path / "report.html").read_text()
    assert html.count("<img") == 2 and "Most frequent diagnosed mistakes" in html


def test_feedback_batches_cover_every_submission_once_in_even_sizes():
    graded = [(f"s{i}", "03_module_linear") for i in range(25)] + [("s0", "01_setup"), ("s1", "01_setup")]
    found = feedback.batches(graded, workers=2)
    assert sorted((s, a) for a, students in found for s in students) == sorted(graded)
    assert max(len(students) for _, students in found) == 7 and len(found) == 5


def test_a_notebook_nbgrader_cannot_render_costs_only_its_own_page(tmp_path, monkeypatch):
    students = ["ada", "bad", "cy", "dee"]
    for student in students:
        (tmp_path / "autograded" / student / "01_setup").mkdir(parents=True)

    def fake_nbgrader(course, command, assignment, force, exclude):
        rendered = set(students) - set(exclude.split("=", 1)[1].split(","))
        if "bad" in rendered:
            raise feedback.FeedbackError("nbgrader generate_feedback failed")
        for student in rendered:
            page = course.feedback(student, assignment) / f"{assignment}.html"
            page.parent.mkdir(parents=True)
            page.write_text("<html></html>")

    monkeypatch.setattr(feedback, "_nbgrader", fake_nbgrader)
    monkeypatch.setattr(feedback.Course, "units", lambda self: ["01_setup"])
    text = feedback.generate(tmp_path, workers=1)
    assert "3 HTML file(s) for 4 submission(s)" in text
    assert text.endswith("nbgrader could not render: bad/01_setup")
