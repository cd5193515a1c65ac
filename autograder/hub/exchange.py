"""The exchange on the course hub: each student's sandbox sees its own inbound and feedback.

nbgrader's exchange is one folder tree every user writes into (``<root>/<course>/inbound`` is
world-writable, and a submission is believed by its name). On the hub it becomes, outside the
sandboxes, with the instructor's account (``accounts.INSTRUCTOR``) as the course's owner:

- ``<root>/<course>/`` and its ``outbound``, ``inbound`` and ``feedback``: the instructor's,
  as nbgrader's release wants the folders it writes (``course_folders``, at the hub's start);
- ``<root>/<course>/students/`` and each ``students/<student>/``: root's, 0755, so that
  neither the instructor nor a student can put a link where the hub (root) later makes a
  student's folders;
- ``students/<student>/inbound/``: the student's own, group the instructor's, mode 2750:
  their sandbox shows it as the course's ``inbound`` (so ``nbgrader submit`` works
  unchanged), and the instructor's collect reads it through the group (made by the spawner).
  It is an ext4 image of its own (``<state>/disks/inbound/<student>.ext4``, ``Limits.inbound``
  bytes, its inodes bounding the files), mounted while the hub runs, not only while her
  server does, so that collect reads it whenever the instructor runs it: what she writes
  there fills her image, never the exchange's file system;
- ``students/<student>/feedback/``: the instructor's, 0755, shown read-only as the course's
  ``feedback``;

and the course's ``outbound`` read-only. Every folder is made and handed over through
descriptors opened without following links. A student sees no one else's submissions or feedback
and can write nowhere but their own inbound. ``StudentCollect`` takes a submission's student
from the folder it is in, not from its name: a folder in Alice's inbound that names Bob is
refused, and so is anything not owned by the account the hub made Alice's inbound for, or an
inbound its student made unreadable; the rest are the course's ``SafeCollect`` checks (times,
links, names). ``StudentReleaseFeedback`` releases each student's feedback into their own
``feedback/``. ``nbgrader_config.py`` uses both when the exchange has a ``students`` folder.
"""
from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback

from autograder.hub import homes
from autograder.hub.accounts import Account
from autograder.pipeline import claim as claims
from autograder.pipeline.term.exchange import nofollow
from autograder.pipeline.claim import Refused
from autograder.pipeline.term.exchange.collect import SafeCollect

INSIDE = "/srv/nbgrader/exchange"
STUDENTS = "students"
INBOUND_MODE = 0o2750   # the student's, read by the instructor's group (collect)


def student_folder(root: Path, course: str, student: str) -> Path:
    return Path(root) / course / STUDENTS / student


def course_folders(root: Path, course: str, owner: Account, students: Iterable[str] = ()) -> Path:
    """Make the course's folders: its own and nbgrader's, ``owner``'s (the instructor's);
    ``students`` (root's, whose presence tells ``nbgrader_config.py`` that students hand in
    through their own) and each of ``students``' folder with its ``feedback``."""
    with _course(root, course, owner) as every:
        for student in students:
            _student(every, student, owner).close()
    return Path(root) / course / STUDENTS


def folders(root: Path, course: str, account: Account, collector: Account) -> Path:
    """Make ``account``'s folders, their inbound readable by ``collector``'s group; their
    folder (``students/<student>``)."""
    with _course(root, course, collector) as every, \
            _student(every, account.student, collector) as folder:
        folder.child("inbound", account.uid, collector.gid, INBOUND_MODE).close()
    return student_folder(root, course, account.student)


def prepare(root: Path, course: str, account: Account, collector: Account, disks: Path,
            size: int) -> list[tuple[Path, str, bool]]:
    """``account``'s folders (``folders``), their inbound on its image in ``disks`` (``size``
    bytes); the binds of their sandbox: ``(outside, inside, writable)``."""
    folder = folders(root, course, account, collector)
    _mount_inbound(folder / "inbound", disks / "inbound" / f"{account.student}.ext4", size,
                   account, collector)
    inside = f"{INSIDE}/{course}"
    return [(Path(root) / course / "outbound", f"{inside}/outbound", False),
            (folder / "inbound", f"{inside}/inbound", True),
            (folder / "feedback", f"{inside}/feedback", False)]


def _course(root: Path, course: str, owner: Account) -> _Folder:
    """The course's folder and nbgrader's in it, ``owner``'s; its ``students``, held."""
    with _Folder(os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)) as top, \
            top.child(course, owner.uid, owner.gid) as mine:
        for name, mode in (("outbound", 0o755), ("inbound", 0o2733), ("feedback", 0o711)):
            mine.child(name, owner.uid, owner.gid, mode).close()
        return mine.child(STUDENTS, 0, 0)


def _student(every: _Folder, student: str, owner: Account) -> _Folder:
    """``student``'s folder (root's) and its ``feedback`` (``owner``'s), held."""
    folder = every.child(student, 0, 0)
    folder.child("feedback", owner.uid, owner.gid).close()
    return folder


class _Folder:
    """A folder held by its descriptor: its children are made and handed over through it,
    never through a path a link could redirect."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor

    def child(self, name: str, uid: int, gid: int, mode: int = 0o755) -> _Folder:
        """``name`` in this folder, made if missing (never a link), owned by ``uid:gid``."""
        try:
            os.mkdir(name, mode, dir_fd=self.descriptor)
        except FileExistsError:
            pass
        try:
            child = _Folder(os.open(name, nofollow.FOLDER, dir_fd=self.descriptor))
        except OSError as error:
            raise OSError(f"the exchange's {name!r} is not a folder (a link or a file was put "
                          f"in its place): {error.strerror}") from error
        os.fchown(child.descriptor, uid, gid)
        os.fchmod(child.descriptor, mode)
        return child

    def close(self) -> None:
        os.close(self.descriptor)

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _mount_inbound(inbound: Path, image: Path, size: int, account: Account,
                   collector: Account) -> None:
    """Mount the student's inbound image (made on first use) on ``inbound``, the student's
    with ``collector``'s group, without the ``lost+found`` folder ext4 makes, which collect
    would read as a hand-in."""
    homes.mount(image, inbound, size, account)
    os.chown(inbound, account.uid, collector.gid)
    inbound.chmod(INBOUND_MODE)
    spare = inbound / "lost+found"
    if spare.is_dir() and not os.listdir(spare):
        spare.rmdir()


def remount_inbounds(root: Path, course: str, disks: Path) -> None:
    """At the hub's start: every inbound image made before mounted again (after a reboot
    they are not), so that collect finds what was handed in before the students return; and
    ``students/`` shared (``homes.share``), so that an inbound first mounted when its student's
    server starts shows in the instructor's sandbox, started earlier, for collect to read."""
    homes.share(Path(root) / course / STUDENTS)
    for image in sorted((disks / "inbound").glob("*.ext4")):
        inbound = student_folder(root, course, image.stem) / "inbound"
        if inbound.is_dir() and not os.path.ismount(inbound):
            homes.attach(image, inbound)


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
        try:
            folders = os.listdir(inbound)
        except PermissionError:
            self._refuse(f"{student}/inbound", Refused(
                f"{student} made it unreadable to the instructor (its mode or group changed)"))
            return []
        own = []
        for found in self._claims(folders):
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
            if not destination.is_dir():
                self.log.warning("No feedback folder for %s in the exchange (not on the hub's "
                                 "roster): their feedback stays in feedback/", student)
                continue
            self.src_path, self.dest_path = source, str(destination)
            super().copy_files()
