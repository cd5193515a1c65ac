"""Hand-in through an LMS: ``nbgrader zip_collect`` with the course's collector, and the
grades back.

``LmsFileNames`` (``c.ZipCollectApp.collector_plugin`` in ``nbgrader_config.py``) reads who
handed each file in from Canvas's and Moodle's bulk-download names
(``uploads.py``: Canvas ids are ``<lastfirst>-<user id>``, Moodle ids ``<first-last>``, both
in ASCII), with the course's roster when it has one (``c.LmsFileNames.roster``,
``roster.py``). The whole download is planned before anything is copied (``plan.py``): two
accounts on one student id, or one that only looks like the account recorded for it, are set
aside with a note naming both while the rest of the class is collected; a file skipped is named
with the reason; each student id is printed with the LMS name and id it stands for, and
recorded in ``downloaded/lms-students.csv``, which the next download's plan checks against.

``write_gradebook_csv`` (``python -m autograder export --lms``) writes one row per student
and one column per unit, with the LMS name and id recorded for that student, the shape both
LMSs import (docs/instructors.md, "Grades to the LMS").
"""
from __future__ import annotations

import os
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import FileNameCollectorPlugin
from traitlets import Unicode

from autograder.pipeline.course import Course
from autograder.pipeline.csv_cells import read_csv, write_csv
from autograder.pipeline.term.lms.plan import Plan, make_plan
from autograder.pipeline.term.lms.roster import Roster, RosterError

REGISTRY = Path("downloaded") / "lms-students.csv"   # relative to the course root
REGISTRY_COLUMNS = ["student_id", "lms", "lms_name", "lms_id"]


class LmsFileNames(FileNameCollectorPlugin):
    """A collector for Canvas's and Moodle's bulk-download names (no regular expression to set)."""

    roster = Unicode("", help="CSV file (lms_name,lms_id,student_id) naming the student id of "
                              "an LMS name or id; relative to the course root").tag(config=True)
    _made: Plan | None = None

    def collect(self, submitted_file: str) -> dict | None:
        if os.path.splitext(submitted_file)[1] not in self.valid_ext:
            return None
        plan = self._plan()
        path = os.path.relpath(submitted_file, self._extracted())
        if path in plan.skipped:
            self.log.warning("Skipped %s: %s", submitted_file, plan.skipped[path])
            return None
        student_id, file_id = plan.collect[path]
        return {"student_id": student_id, "file_id": file_id}

    def _extracted(self) -> str:
        """The ``extracted/`` folder that ``zip_collect`` walks (nbgrader's own rule)."""
        return self.parent._format_collect_path(self.parent.extracted_directory)

    def _plan(self) -> Plan:
        """The plan for the whole download, made on the first file and kept; stops
        ``zip_collect`` (nothing copied yet) on a roster error."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def _make(self) -> Plan:
        root = self._extracted()
        paths = [os.path.relpath(os.path.join(folder, name), root)
                 for folder, _, names in os.walk(root) for name in names
                 if os.path.splitext(name)[1] in self.valid_ext]
        course = Path(self.parent.coursedir.root)
        try:
            roster = Roster.load(course / self.roster) if self.roster else Roster()
        except RosterError as error:
            self.parent.fail(f"{error}; nothing was collected")
        plan = make_plan(paths, roster, _registry(course / REGISTRY))
        for student_id, upload in sorted(plan.students.items()):
            self.log.info("Student id %s: %s", student_id, upload)
        for line in plan.set_aside:
            self.log.warning("%s", line)
        if plan.set_aside:
            self.log.warning("%d account(s) set aside, each listed above, nothing of theirs "
                             "collected; the rest of the class is collected", len(plan.set_aside))
        _record(course / REGISTRY, plan)
        return plan


def _record(registry: Path, plan: Plan) -> None:
    """Add the plan's students to the registry (one row per student id, the newest wins):
    the export writes each student's LMS name and id from it. Moodle's participant id is
    left out: it is only valid for one assignment."""
    rows = _registry(registry)
    for student_id, upload in plan.students.items():
        rows[student_id] = {"student_id": student_id, "lms": upload.lms, "lms_name": upload.name,
                            "lms_id": upload.lms_id if upload.lms == "Canvas" else ""}
    registry.parent.mkdir(parents=True, exist_ok=True)
    write_csv(registry, [REGISTRY_COLUMNS] + [[rows[sid][c] for c in REGISTRY_COLUMNS]
                                              for sid in sorted(rows)])


def _registry(registry: Path) -> dict[str, dict[str, str]]:
    """The recorded LMS identities by student id (none before the first ``zip_collect``)."""
    if not registry.exists():
        return {}
    return {row["student_id"]: row for row in read_csv(registry)}


def write_gradebook_csv(root: Path, to: Path | None = None) -> Path:
    """``student_id, first_name, last_name, email, lms_name, lms_id`` (the last two as
    ``zip_collect`` recorded them: Canvas's user id, Moodle's name), one column per unit (its
    score, empty when nothing was handed in; the header says the points) and the total: one
    row per student."""
    course = Course(Path(root).resolve())
    target = (to or course.root / "grades-lms.csv").resolve()
    lms = _registry(course.root / REGISTRY)
    with Gradebook(course.db_url) as gb:
        units = [a for a in course.units() if a in {x.name for x in gb.assignments}]
        maxima = {u: gb.find_assignment(u).max_score for u in units}
        header = ["student_id", "first_name", "last_name", "email", "lms_name", "lms_id"]
        header += [f"{u} ({maxima[u]:g} pts)" for u in units] + [f"total ({sum(maxima.values()):g} pts)"]
        rows = []
        for student in sorted(gb.students, key=lambda s: s.id):
            scores = {s.assignment.name: s.score for s in student.submissions}
            known = lms.get(student.id, {})
            rows.append([student.id, student.first_name or "", student.last_name or "",
                         student.email or "", known.get("lms_name", ""), known.get("lms_id", "")]
                        + [_points(scores.get(u)) for u in units]
                        + [_points(sum(v for v in scores.values() if v is not None))])
    return write_csv(target, [header] + rows)


def _points(value: float | None) -> str:
    return "" if value is None else f"{value:g}"
