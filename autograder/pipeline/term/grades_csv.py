"""``nbgrader export`` (``python -m autograder export``) with the course's CSV writer:
nbgrader's columns and rows, written inert (``autograder/pipeline/csv_cells.py``; nbgrader's
own plugin joins the raw values with commas, so a name holding a comma shifts the columns and
one starting with ``=`` is a formula). ``c.ExportApp.plugin_class`` in ``nbgrader_config.py``.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.pipeline.csv_cells import write_csv

COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score"]


class InertCsvExport(CsvExportPlugin):
    """One row per assignment and student (a missing submission scores 0), as nbgrader's."""

    def export(self, gradebook: Gradebook) -> None:
        target = Path(self.to or "grades.csv")
        self.log.info("Exporting grades to %s", target)
        write_csv(target, [COLUMNS] + [
            _row(gradebook, assignment, student) for assignment in gradebook.assignments
            if not self.assignment or assignment.name in map(str, self.assignment)
            for student in gradebook.students
            if not self.student or student.id in map(str, self.student)])


def _row(gradebook: Gradebook, assignment, student) -> list[object]:
    try:
        done = gradebook.find_submission(assignment.name, student.id)
        scores = [done.timestamp, done.score, done.late_submission_penalty,
                  max(0.0, done.score - done.late_submission_penalty)]
    except MissingEntry:
        scores = ["", 0.0, 0.0, 0.0]
    return [assignment.name, assignment.duedate or "", scores[0] or "", student.id,
            student.last_name or "", student.first_name or "", student.email or "",
            *scores[1:], assignment.max_score]
