"""Feedback HTML for every graded submission, and the grades as CSV.

``generate`` runs ``nbgrader generate_feedback`` for each assignment (or each chosen
student's submission), several at once: feedback only reads the gradebook, and
sqlite takes concurrent readers.
The course's ``nbgrader_config.py`` decides what feedback shows; it runs
``ScrubHiddenTracebacks`` and then nbgrader's ``ClearHiddenTests``, so a student
sees each failed check's message but never the hidden test code.
"""
from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.pipeline import runner
from autograder.pipeline.course import Course, tool_env


class FeedbackError(RuntimeError):
    """nbgrader could not generate feedback or export grades."""


def _nbgrader(course: Course, *args: str) -> None:
    with tempfile.TemporaryDirectory(prefix="nbgrader-") as tmp:
        log = Path(tmp) / "log"
        code = runner.run([*args, f"--CourseDirectory.root={course.root}"], course.root,
                          tool_env(), log)
        if code != 0:
            raise FeedbackError(f"nbgrader {' '.join(args)} failed:\n{log.read_text()[-4000:]}")


def generate(root: Path, assignments: list[str] | None = None, workers: int = 2,
             students: list[str] | None = None) -> str:
    """Feedback for every autograded submission of ``assignments`` (default: every unit)."""
    course, started = Course(Path(root).resolve()), time.monotonic()
    chosen = assignments or course.units()
    graded = [(folder.parent.name, assignment) for assignment in chosen
              for folder in sorted((course.root / "autograded").glob(f"*/{assignment}"))
              if students is None or folder.parent.name in students]
    # One process per assignment shares nbconvert's set-up among its students (about a
    # second per notebook); chosen students get one process each.
    batches = ([["generate_feedback", a, "--force"] for a in chosen if any(g[1] == a for g in graded)]
               if students is None else
               [["generate_feedback", a, "--student", s, "--force"] for s, a in graded])
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda args: _nbgrader(course, *args), batches))
    count = sum(1 for s, a in graded for _ in course.feedback(s, a).glob("*.html"))
    return (f"feedback: {count} HTML file(s) for {len(graded)} submission(s) in "
            f"{time.monotonic() - started:.1f} s")


def export(root: Path, to: Path | None = None) -> Path:
    """``nbgrader export``: one row per student and assignment, in ``grades.csv`` by default."""
    course = Course(Path(root).resolve())
    target = (to or course.root / "grades.csv").resolve()
    _nbgrader(course, "export", f"--CsvExportPlugin.to={target}")
    return target
