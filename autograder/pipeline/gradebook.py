"""The two gradebook operations of the parallel grader.

nbgrader's sqlite gradebook is not safe for concurrent writers, so each job
autogrades into a private copy made from ``template`` (the course's assignments,
no students: a submission never sees another student's grades) and the grader's
main thread alone writes the course gradebook, with ``merge``.

``merge`` follows nbgrader's own ``SaveAutoGrades`` rule: it sets ``auto_score`` and
``auto_comment`` and never touches ``manual_score`` or ``manual_comment``; a cell
with a manual score is flagged for review, as nbgrader does when it regrades. A cell the
job left unscored (``autograder.pipeline.flags``: the grader failed on it) gets no
``auto_score`` and waits for manual grading, as nbgrader leaves a cell it cannot grade.
"""
from __future__ import annotations

import sqlite3
import warnings
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.pipeline.flags import Unscored


# Every table that holds a student's data, each before the tables it refers to.
STUDENT_TABLES = ("grade", "comment", "submitted_notebook", "submitted_assignment", "student")


@dataclass
class Outcome:
    """What autograding one submission produced, read from its private gradebook."""

    student: str
    assignment: str
    scores: dict[str, dict[str, float | None]] = field(default_factory=dict)  # notebook: grade id: score
    comments: dict[str, dict[str, str | None]] = field(default_factory=dict)
    penalties: dict[str, float | None] = field(default_factory=dict)
    timestamp: datetime | None = None
    review: bool = False   # flag every cell for manual review (grading failed)
    unscored: dict[str, dict[str, Unscored]] = field(default_factory=dict)  # notebook: grade id: why


def snapshot(source: Path, destination: Path) -> None:
    """A consistent copy of a sqlite database, even while another process writes it."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(destination)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def template(course_gradebook: Path, destination: Path) -> list[str]:
    """Copy the course gradebook without its students; return its assignments' names (in
    nbgrader's order). Their rows go in one statement per table, not through nbgrader's
    ``remove_student`` (0.5 s for 24 students, minutes for a class of hundreds), and the
    file is vacuumed: no byte of theirs travels to a worker in its free pages."""
    snapshot(course_gradebook, destination)
    with closing(sqlite3.connect(destination)) as db:
        with db:
            for table in STUDENT_TABLES:
                db.execute(f"DELETE FROM {table}")
        db.execute("VACUUM")
        return [name for (name,) in db.execute("SELECT name FROM assignment "
                                                "ORDER BY duedate, name")]


def url(db: Path) -> str:
    """The SQLAlchemy URL of the SQLite gradebook ``db`` (one spelling: a job's gradebook is
    recognised by it, ``autograder.pipeline.job.job_gradebook``)."""
    return f"sqlite:///{db}"


def notebooks(db: Path, assignment: str) -> list[str]:
    with Gradebook(url(db)) as gb:
        return [notebook.name for notebook in gb.find_assignment(assignment).notebooks]


def read(db: Path, student: str, assignment: str) -> Outcome:
    """The autograder's scores and comments for one submission in a job's gradebook."""
    outcome = Outcome(student, assignment)
    with Gradebook(url(db)) as gb:
        submission = gb.find_submission(assignment, student)
        outcome.timestamp = submission.timestamp
        for notebook in submission.notebooks:
            outcome.scores[notebook.name] = {g.name: g.auto_score for g in notebook.grades}
            outcome.comments[notebook.name] = {c.name: c.auto_comment for c in notebook.comments}
            outcome.penalties[notebook.name] = notebook.late_submission_penalty
    return outcome


def _score(score: float | None, grade, review: bool) -> float | None:
    """A job's score for ``grade``: zero for a failed job's missing one, and never outside
    the cell's points (a tampered job gradebook cannot exceed the real maximum)."""
    if score is None and review:
        return 0.0
    return None if score is None else min(max(float(score), 0.0), float(grade.max_score))


def merge(gb: Gradebook, outcome: Outcome) -> None:
    """Write one submission's autograded results into the course gradebook ``gb``."""
    gb.update_or_create_student(outcome.student)
    extra = {"timestamp": outcome.timestamp} if outcome.timestamp else {}
    with warnings.catch_warnings():   # nbgrader's add_submission warns under SQLAlchemy 2
        warnings.simplefilter("ignore", SAWarning)
        submission = gb.update_or_create_submission(outcome.assignment, outcome.student, **extra)
    for notebook in submission.notebooks:
        scores = outcome.scores.get(notebook.name, {})
        comments = outcome.comments.get(notebook.name, {})
        unscored = outcome.unscored.get(notebook.name, {})
        for grade in notebook.grades:
            score = None if grade.name in unscored else _score(scores.get(grade.name), grade,
                                                                outcome.review)
            grade.auto_score = score
            grade.needs_manual_grade = (grade.manual_score is not None or score is None
                                        or outcome.review)
        for comment in notebook.comments:
            comment.auto_comment = comments.get(comment.name)
        notebook.late_submission_penalty = outcome.penalties.get(notebook.name)
    gb.db.commit()
