"""Hand grading from a CSV file: ``python -m autograder manual-grades FILE``.

For cells nbgrader cannot grade (unit 11's written reflection, a task cell worth 10
points), when an instructor or a team of TAs marks offline rather than in Formgrader's
Manual Grading. Each row is ``student, assignment, grade_id, score, comment``
(``comment`` may be empty). Every row is checked before anything is written: an unknown
student or assignment, a cell that is not in the assignment or is graded automatically
(unless the grader failed on it and left it without a score, ``flags``), a score that is
not a number or lies outside ``0..points``: the command names each bad row (by its line)
and writes nothing. Otherwise it sets nbgrader's ``manual_score`` and
``manual_comment``, as Formgrader would, so the gradebook's totals, ``grades.csv``, the
class report and feedback include them. Running it again with the same file changes
nothing.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.pipeline.course import Course

COLUMNS = ("student", "assignment", "grade_id", "score", "comment")


class ManualGradeError(ValueError):
    """Rows that cannot be applied; nothing was written."""


@dataclass(frozen=True)
class Row:
    line: int
    student: str
    assignment: str
    grade_id: str
    score: str
    comment: str

    def __str__(self) -> str:
        return f"line {self.line} ({self.student}, {self.assignment}, {self.grade_id})"


def read_rows(path: Path) -> list[Row]:
    """The CSV's rows; its header must name the columns (``comment`` may be left out)."""
    with open(path, newline="", encoding="utf-8") as stream:
        reader = csv.DictReader(stream)
        missing = [c for c in COLUMNS[:4] if c not in (reader.fieldnames or [])]
        if missing:
            raise ManualGradeError(f"{path}: the header lacks {', '.join(missing)}; expected "
                                   f"the columns {', '.join(COLUMNS)}.")
        return [Row(number, *(str(record.get(c) or "").strip() for c in COLUMNS))
                for number, record in enumerate(reader, start=2)]


def _target(gb: Gradebook, row: Row):
    """``(grade, comment, score)`` for a row, or a string saying what is wrong with it."""
    try:
        submission = gb.find_submission(row.assignment, row.student)
    except MissingEntry:
        return f"{row}: no submission of {row.assignment} by {row.student} in the gradebook"
    grades = {g.name: g for nb in submission.notebooks for g in nb.grades}
    comments = {c.name: c for nb in submission.notebooks for c in nb.comments}
    grade = grades.get(row.grade_id)
    if grade is None:
        return f"{row}: {row.assignment} has no graded cell {row.grade_id!r} (known: {', '.join(sorted(grades))})"
    if grade.cell_type == "code" and grade.auto_score is not None:   # unless the grader failed on it
        return f"{row}: {row.grade_id} is graded automatically; change it in Formgrader if you must"
    try:
        score = float(row.score)
    except ValueError:
        return f"{row}: the score {row.score!r} is not a number"
    if not (math.isfinite(score) and 0 <= score <= grade.max_score):
        return f"{row}: the score {score:g} is outside 0..{grade.max_score:g}"
    return grade, comments.get(row.grade_id), score


def apply(root: Path, path: Path) -> str:
    """Set the manual scores and comments of ``path`` in the course's gradebook."""
    course = Course(Path(root).resolve())
    rows = read_rows(Path(path))
    with Gradebook(course.db_url) as gb:
        targets = [_target(gb, row) for row in rows]
        problems = [t for t in targets if isinstance(t, str)]
        if problems:
            raise ManualGradeError("nothing was written; fix these rows:\n  " + "\n  ".join(problems))
        changed = 0
        for row, (grade, comment, score) in zip(rows, targets):
            text = row.comment or None
            if grade.manual_score != score or (comment is not None and comment.manual_comment != text):
                changed += 1
            grade.manual_score, grade.needs_manual_grade = score, False
            if comment is not None:
                comment.manual_comment = text
        gb.db.commit()
    return f"{len(rows)} manual grade(s) read from {path}, {changed} changed"
