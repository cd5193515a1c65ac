"""Feedback HTML for every graded submission, and the grades as CSV.

``generate`` runs ``nbgrader generate_feedback`` on batches of about equal size
(one assignment, a few students each), several at once: feedback only reads the
gradebook, and sqlite takes concurrent readers. A notebook takes up to a second
(nbconvert's HTML, rendered once: ``feedback_page``), so one batch per assignment left
one worker rendering the largest unit while the other sat idle.
The course's ``nbgrader_config.py`` decides what feedback shows; it runs
``ScrubHiddenTracebacks`` and then nbgrader's ``ClearHiddenTests``, so a student
sees each failed check's message but never the hidden test code.
"""
from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.pipeline.job import runner
from autograder.pipeline.course import Course, tool_env


class FeedbackError(RuntimeError):
    """nbgrader could not generate feedback or export grades."""


def _nbgrader(course: Course, *args: str) -> None:
    code, log = runner.run_captured([*args, f"--CourseDirectory.root={course.root}"], course.root,
                                    tool_env())
    if code != 0:
        raise FeedbackError(f"nbgrader {' '.join(args)} failed:\n{log[-4000:]}")


def batches(graded: list[tuple[str, str]], workers: int) -> list[tuple[str, list[str]]]:
    """``(assignment, students)`` batches, largest first, none over a ``2 * workers``-th of
    the submissions: a worker that draws the largest unit no longer renders it alone."""
    size = max(1, math.ceil(len(graded) / (2 * max(1, workers))))
    chosen: dict[str, list[str]] = {}
    for student, assignment in graded:
        chosen.setdefault(assignment, []).append(student)
    found = [(assignment, students[i:i + size]) for assignment, students in chosen.items()
             for i in range(0, len(students), size)]
    return sorted(found, key=lambda batch: -len(batch[1]))


def _render(course: Course, assignment: str, students: list[str]) -> list[str]:
    """Feedback for some students of one assignment: nbgrader's pattern, minus the others.
    When nbgrader fails on the batch, each student is rendered alone, so one notebook nbgrader
    cannot render costs only its own page; returns the students left without one."""
    others = sorted({p.parent.name for p in (course.root / "autograded").glob(f"*/{assignment}")}
                    - set(students))
    try:
        _nbgrader(course, "generate_feedback", assignment, "--force",
                  f"--CourseDirectory.student_id_exclude={','.join(others)}")
    except FeedbackError:
        if len(students) == 1:
            return students
        return [s for student in students for s in _render(course, assignment, [student])]
    return []


def generate(root: Path, assignments: list[str] | None = None, workers: int = 2,
             students: list[str] | None = None) -> str:
    """Feedback for every autograded submission of ``assignments`` (default: every unit)."""
    course, started = Course(Path(root).resolve()), time.monotonic()
    chosen = assignments or course.units()
    graded = [(folder.parent.name, assignment) for assignment in chosen
              for folder in sorted((course.root / "autograded").glob(f"*/{assignment}"))
              if students is None or folder.parent.name in students]
    chunks = batches(graded, workers)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        failed = pool.map(lambda batch: _render(course, *batch), chunks)
        missing = [f"{s}/{a}" for (a, _), students in zip(chunks, failed) for s in students]
    count = sum(1 for s, a in graded for _ in course.feedback(s, a).glob("*.html"))
    text = (f"feedback: {count} HTML file(s) for {len(graded)} submission(s) in "
            f"{time.monotonic() - started:.1f} s with {workers} worker(s)")
    return text + (f"; nbgrader could not render: {', '.join(missing)}" if missing else "")


def export(root: Path, to: Path | None = None) -> Path:
    """``nbgrader export``: one row per student and assignment, in ``grades.csv`` by default."""
    course = Course(Path(root).resolve())
    target = (to or course.root / "grades.csv").resolve()
    _nbgrader(course, "export", f"--CsvExportPlugin.to={target}")
    return target
