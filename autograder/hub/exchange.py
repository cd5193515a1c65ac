"""The exchange on the course hub: each student's sandbox sees its own inbound and feedback.

nbgrader's exchange is one folder tree every user writes into (``<root>/<course>/inbound`` is
world-writable, and a submission is believed by its name). On the hub it becomes, outside the
sandboxes (``<root>/<course>/students/<student>/``, made by the spawner):

- ``inbound/``: the student's own, owned by their account, mode 0700; their sandbox shows it
  as the course's ``inbound`` (so ``nbgrader submit`` works unchanged);
- ``feedback/``: root's, 0755, shown read-only as the course's ``feedback``;

and the course's ``outbound`` read-only. A student sees no one else's submissions or feedback
and can write nowhere but their own inbound. ``StudentCollect`` takes a submission's student
from the folder it is in, not from its name: a folder in Alice's inbound that names Bob is
refused, and so is anything not owned by the account the hub made Alice's inbound for; the
rest are the course's ``SafeCollect`` checks (times, links, names). ``StudentReleaseFeedback``
releases each student's feedback into their own ``feedback/``. ``nbgrader_config.py`` uses
both when the exchange has a ``students`` folder.
"""
from __future__ import annotations

import glob
import os
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

from autograder.hub.accounts import Account
from autograder.pipeline import claim as claims
from autograder.pipeline.term.exchange import nofollow
from autograder.pipeline.claim import Refused
from autograder.pipeline.term.exchange.collect import SafeCollect

INSIDE = "/srv/nbgrader/exchange"
STUDENTS = "students"


def student_folder(root: Path, course: str, student: str) -> Path:
    return Path(root) / course / STUDENTS / student


def course_folders(root: Path, course: str) -> Path:
    """Make the course's ``outbound`` and ``students`` folders (root's, 0755); the latter,
    whose presence tells ``nbgrader_config.py`` that students hand in through their own."""
    for path in (Path(root) / course, Path(root) / course / "outbound", Path(root) / course / STUDENTS):
        path.mkdir(mode=0o755, exist_ok=True)
    return Path(root) / course / STUDENTS


def prepare(root: Path, course: str, account: Account) -> list[tuple[Path, str, bool]]:
    """Make ``account``'s folders; the binds of their sandbox: ``(outside, inside, writable)``."""
    course_folders(root, course)
    folder = student_folder(root, course, account.student)
    for path in (folder, folder / "feedback"):
        path.mkdir(mode=0o755, exist_ok=True)
    inbound = folder / "inbound"
    inbound.mkdir(mode=0o700, exist_ok=True)
    os.chown(inbound, account.uid, account.gid)
    inside = f"{INSIDE}/{course}"
    return [(Path(root) / course / "outbound", f"{inside}/outbound", False),
            (inbound, f"{inside}/inbound", True),
            (folder / "feedback", f"{inside}/feedback", False)]


class StudentCollect(SafeCollect):
    """``SafeCollect`` over each student's own inbound folder (see the module)."""

    def init_src(self) -> None:
        if not self.coursedir.course_id:
            self.fail("No course id specified. Re-run with --course flag.")
        self.students_path = Path(self.root, self.coursedir.course_id, STUDENTS)
        self.clock = claims.now()
        self.refused: list[str] = []
        self.unchecked: list[str] = []
        self.duedate = self._duedate()
        self.claims = [found for inbound in sorted(self.students_path.glob("*/inbound"))
                       for found in self._own(inbound.parent.name, inbound)]

    def _own(self, student: str, inbound: Path) -> list[claims.Claim]:
        """The claims in ``student``'s inbound folder that name ``student``."""
        own = []
        for found in self._claims(os.listdir(inbound)):
            if found.student == student:
                own.append(found)
            else:
                self._refuse(f"{student}/inbound/{found.folder}", Refused(
                    f"it names {found.student} but is in {student}'s own inbound folder: "
                    f"handed in by {student} under another student's name"))
        return own

    def copy_files(self) -> None:
        """Each student's newest believable submission, from their own folder; the summary."""
        students = sorted({found.student for found in self.claims})
        self.log.info("Processing %d students' submissions of '%s' for course '%s'",
                      len(students), self.coursedir.assignment_id, self.coursedir.course_id)
        for student in students:
            inbound = os.open(self.students_path / student / "inbound", nofollow.FOLDER)
            try:
                self.expected_owner = os.fstat(inbound).st_uid
                mine = [found for found in self.claims if found.student == student]
                self._collect(inbound, student, self._preferred(mine))
            finally:
                os.close(inbound)
        self._summary()

    def _owner(self, student: str, uid: int) -> int:
        """Every folder must belong to the account the hub made the inbound folder for."""
        claims.check_owner(student, uid, self.expected_owner)
        return uid


class StudentReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's release_feedback, into each student's own ``feedback/`` folder."""

    def copy_files(self) -> None:
        pattern = self.coursedir.format_path(self.coursedir.feedback_directory,
                                             self.coursedir.student_id or "*",
                                             self.coursedir.assignment_id)
        for source in sorted(glob.glob(pattern)):
            student = Path(source).parent.name
            destination = student_folder(self.root, self.coursedir.course_id, student) / "feedback"
            destination.mkdir(mode=0o755, parents=True, exist_ok=True)
            self.src_path, self.dest_path = source, str(destination)
            super().copy_files()
