"""Hand-in through an LMS: the file names of Canvas's and Moodle's bulk downloads, for
``nbgrader zip_collect`` (``nbgrader_config.py`` makes ``LmsFileNames`` its collector).

- Canvas ("Download Submissions"): ``<lastfirst>_[LATE_]<user id>_<submission id>_<file>``,
  where ``<file>`` is the student's upload, renamed ``01_setup-1.ipynb``, ``-2``... when the
  student uploaded again. The student id is the ``<lastfirst>`` part (``doejane``).
- Moodle ("Download all submissions"): a folder ``<Full Name>_<participant id>_assignsubmission_file_``
  (or ``_onlinetext_``) holding the upload. The student id is the name, lower-case, words
  joined by ``-`` (``jane-doe``).

Where one student's download holds several attempts of the same notebook (Canvas's
``-N``), the highest attempt is collected and the others are skipped, as is every file
whose name matches neither layout (nbgrader lists each skipped file).

And back: ``write_gradebook_csv`` (``python -m autograder export --lms``) writes one row per
student and one column per unit, the shape both LMSs import (see the README).
"""
from __future__ import annotations

import csv
import os
import re
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import FileNameCollectorPlugin

from autograder.pipeline.course import Course

CANVAS = re.compile(r"^(?P<student_id>[a-z0-9]+)_(?:LATE_)?\d+_\d+_(?P<file_id>.+?)"
                    r"(?:-(?P<attempt>\d+))?(?P<ext>\.[A-Za-z0-9]+)$")
MOODLE = re.compile(r"^(?P<name>[^/_]+)_\d+_assignsubmission_[a-z]+_$")


def _canvas(filename: str) -> dict | None:
    match = CANVAS.match(os.path.basename(filename))
    if match is None:
        return None
    return {"student_id": match["student_id"], "file_id": match["file_id"] + match["ext"],
            "attempt": int(match["attempt"] or 0)}


def _moodle(filename: str) -> dict | None:
    match = MOODLE.match(os.path.basename(os.path.dirname(filename)))
    if match is None:
        return None
    student = "-".join(match["name"].lower().split())
    return {"student_id": student, "file_id": os.path.basename(filename), "attempt": 0}


def parse(filename: str) -> dict | None:
    """``student_id``, ``file_id`` and ``attempt`` from a downloaded file's path, or None."""
    return _canvas(filename) or _moodle(filename)


class LmsFileNames(FileNameCollectorPlugin):
    """A collector for Canvas's and Moodle's bulk-download names (no regular expression to set)."""

    def collect(self, submitted_file: str) -> dict | None:
        if os.path.splitext(submitted_file)[1] not in self.valid_ext:
            return None
        info = parse(submitted_file)
        if info is None:
            self.log.warning("Not a Canvas or Moodle download name, skipped: %s", submitted_file)
            return None
        if self._newer_attempt(submitted_file, info):
            self.log.warning("An older attempt, skipped: %s", submitted_file)
            return None
        return {"student_id": info["student_id"], "file_id": info["file_id"]}

    @staticmethod
    def _newer_attempt(submitted_file: str, info: dict) -> bool:
        folder = os.path.dirname(submitted_file)
        for other in os.listdir(folder):
            found = parse(os.path.join(folder, other))
            if found and found["student_id"] == info["student_id"] and \
                    found["file_id"] == info["file_id"] and found["attempt"] > info["attempt"]:
                return True
        return False


def write_gradebook_csv(root: Path, to: Path | None = None) -> Path:
    """``student_id, first_name, last_name, email``, one column per unit (its score, empty
    when nothing was handed in; the header says the points) and the total: one row per student."""
    course = Course(Path(root).resolve())
    target = (to or course.root / "grades-lms.csv").resolve()
    with Gradebook(course.db_url) as gb:
        units = [a for a in course.units() if a in {x.name for x in gb.assignments}]
        maxima = {u: gb.find_assignment(u).max_score for u in units}
        header = ["student_id", "first_name", "last_name", "email"]
        header += [f"{u} ({maxima[u]:g} pts)" for u in units] + [f"total ({sum(maxima.values()):g} pts)"]
        rows = []
        for student in sorted(gb.students, key=lambda s: s.id):
            scores = {s.assignment.name: s.score for s in student.submissions}
            rows.append([student.id, student.first_name or "", student.last_name or "",
                         student.email or ""] + [_points(scores.get(u)) for u in units]
                        + [_points(sum(v for v in scores.values() if v is not None))])
    with open(target, "w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([header] + rows)
    return target


def _points(value: float | None) -> str:
    return "" if value is None else f"{value:g}"
