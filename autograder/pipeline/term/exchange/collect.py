"""``nbgrader collect`` (and Formgrader's Collect button) that believes nothing a student controls.

``nbgrader_config.py`` sets ``c.ExchangeFactory.collect`` to ``SafeCollect``. For each
student the newest submission that can be believed is collected (with ``--update``, if it is
newer than the one collected; ``--before-duedate`` as nbgrader has it); every folder that
cannot be believed is refused and named in one line of the summary at the end:

- its name: a student id or assignment that is not safe (``..``, hidden, HTML), a time that
  cannot be read or lies in the future (``claim``);
- its owner, where students have OS accounts: a folder or file not owned by the student it
  names (nbgrader only warned, "cheating attempt?", for every submission on a shared
  account); where the students have no account, the summary says once that owners were not
  checked;
- its contents: links, devices, FIFOs, files of other owners (``nofollow``);
- of what it holds, only the files the unit released (``release/<unit>/``), nbgrader's own
  (``timestamp.txt``, ``submission_secret.txt``) and those ``also_collect`` declares are
  copied; every other file is left out with a note (a ``.js`` handed in with the notebook
  was served from ``submitted/`` as a script of the instructor's origin: issue 46);
- its ``timestamp.txt``: missing, unreadable, in the future, or not the time in the name;
  and anything in the folder changed more than ``claim.HANDING_IN`` after the time it claims
  (``st_ctime``, which a student cannot set back): a submission edited after it was handed
  in, or backdated.

A collected submission that already claims a time in the future (collected before these
checks) is replaced by the newest one that can be believed.
"""
from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections import defaultdict
from datetime import datetime
from functools import cached_property
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode
from traitlets import Bool, List, Unicode

from autograder.pipeline import claim as claims
from autograder.pipeline.term.exchange import nofollow
from autograder.pipeline.claim import Claim, Refused

NAMES_SHOWN = 10
NBGRADER_FILES = frozenset({claims.STAMP_FILE, "submission_secret.txt"})


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, refusing what a student could forge (see the module)."""

    check_changes = Bool(
        True, help="Refuse a submission changed more than ten minutes after the time it "
                   "claims (edited after it was handed in, or backdated). Turn off only for "
                   "an exchange copied or restored from a backup, whose files all changed "
                   "when they were copied.").tag(config=True)

    also_collect = List(Unicode(), help="Globs of the paths in a submission to collect besides "
                        "the files the unit released, e.g. ['plots/*.png'].").tag(config=True)

    def init_src(self) -> None:
        """Read the inbound folder's names: claims to weigh, and refusals already."""
        if not self.coursedir.course_id:
            self.fail("No course id specified. Re-run with --course flag.")
        self.inbound_path = os.path.join(self.root, self.coursedir.course_id, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.clock = claims.now()
        self.refused: list[str] = []
        self.unchecked: list[str] = []
        self.duedate = self._duedate()
        self.claims = self._claims(os.listdir(self.inbound_path))

    def init_dest(self) -> None:
        """Nothing to prepare: each student's folder in submitted/ is made as it is collected."""

    def copy_files(self) -> None:
        """Collect each student's newest believable submission; then the summary."""
        by_student = defaultdict(list)
        for found in self.claims:
            by_student[found.student].append(found)
        self.log.info("Processing %d students' submissions of '%s' for course '%s'",
                      len(by_student), self.coursedir.assignment_id, self.coursedir.course_id)
        inbound = os.open(self.inbound_path, nofollow.FOLDER)
        try:
            for student in sorted(by_student):
                self._collect(inbound, student, self._preferred(by_student[student]))
        finally:
            os.close(inbound)
        self._summary()

    def _duedate(self) -> datetime | None:
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def _claims(self, folders: list[str]) -> list[Claim]:
        """The believable names among ``folders`` that are this assignment's (nbgrader's
        pattern, ``*+<assignment>+*``) and the student's asked for; the others refused."""
        assignment, wanted = self.coursedir.assignment_id, self.coursedir.student_id or "*"
        found = []
        for folder in sorted(folders):
            if f"+{assignment}+" not in folder or \
                    not fnmatch.fnmatchcase(folder.split("+")[0], wanted):
                continue
            try:
                named = claims.claim(folder, self.clock)
            except Refused as why:
                self._refuse(folder, why)
                continue
            if named.assignment == assignment:
                found.append(named)
        return found

    def _preferred(self, found: list[Claim]) -> list[Claim]:
        """A student's claims in the order to try them: newest first (with
        ``before_duedate``, the newest of those before the due date first)."""
        newest = sorted(found, key=lambda c: c.time, reverse=True)
        if self.before_duedate and self.duedate is not None:
            return ([c for c in newest if c.time <= self.duedate]
                    + [c for c in newest if c.time > self.duedate])
        return newest

    def _collect(self, inbound: int, student: str, preferred: list[Claim]) -> None:
        """The first of ``preferred`` that is believed replaces the collected submission,
        under nbgrader's rules for ``update`` and ``before_duedate``."""
        destination = Path(self.coursedir.format_path(self.coursedir.submitted_directory,
                                                      student, self.coursedir.assignment_id))
        updating = destination.is_dir()
        existing = self._existing(destination, student) if updating else None
        for candidate in preferred:
            if updating and not self._replaces(candidate.time, existing):
                self._nothing_newer(student)
                return
            try:
                notes = self._take(inbound, candidate, destination)
            except Refused as why:
                self._refuse(candidate.folder, why)
                continue
            self.log.info("%s submission: %s %s%s", "Updating" if updating else "Collecting",
                          student, self.coursedir.assignment_id,
                          "".join(f"; {note}" for note in notes))
            return

    def _replaces(self, time: datetime, existing: datetime | None) -> bool:
        """nbgrader's rule for replacing a collected submission."""
        if self.update and (existing is None or time > existing):
            return True
        return self.before_duedate and existing != time

    def _nothing_newer(self, student: str) -> None:
        assignment = self.coursedir.assignment_id
        if self.update:
            self.log.info("No newer submission to collect: %s %s", student, assignment)
        else:
            self.log.info("Submission already exists, use --update to update: %s %s",
                          student, assignment)

    def _existing(self, destination: Path, student: str) -> datetime | None:
        """The time of the submission collected already; None (so that any believable one
        replaces it) when it has none, or one that cannot be believed."""
        try:
            return claims.stamped(destination / claims.STAMP_FILE, "the collected timestamp.txt",
                                  self.clock)
        except Refused as why:
            self.log.warning("The collected submission of %s will be replaced by the newest "
                             "one that can be believed: %s", student, why)
            return None

    def _take(self, inbound: int, candidate: Claim, destination: Path) -> list[str]:
        """Copy ``candidate``'s folder in place of ``destination`` if it can be believed;
        the notes on files left out."""
        folder = nofollow.open_folder(inbound, candidate.folder)
        try:
            owner = self._owner(candidate.student, os.fstat(folder).st_uid)
            destination.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".collecting-", dir=destination.parent))
            try:
                return self._replace(folder, owner, candidate, staging / "copy", destination)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            os.close(folder)

    def _replace(self, folder: int, owner: int | None, candidate: Claim, copy: Path,
                 destination: Path) -> list[str]:
        """Copy into ``copy`` (beside ``destination``), check it, then put it in place."""
        copied = nofollow.copy_tree(folder, copy, self._rules(owner))
        self._check_times(copy, candidate, copied.latest_change)
        self._share(copy)
        if destination.is_dir():
            shutil.rmtree(destination)
        os.rename(copy, destination)
        return copied.notes

    def _owner(self, student: str, uid: int) -> int | None:
        """The uid every entry must have: the folder's, checked against the student's
        account where there is one. None when owners are not checked at all."""
        if not self.check_owner:
            return None
        expected = claims.account(student)
        if expected is None:
            self.unchecked.append(student)
        else:
            claims.check_owner(student, uid, expected)
        return uid

    def _rules(self, owner: int | None) -> nofollow.Rules:
        kilobytes = 1000   # nbgrader's sizes are in kilobytes of 1000 bytes
        return nofollow.Rules(owner, tuple(self.coursedir.ignore), tuple(self.coursedir.include),
                              self.coursedir.max_file_size * kilobytes,
                              self.coursedir.max_dir_size * kilobytes,
                              released=self.released, declared=tuple(self.also_collect))

    @cached_property
    def released(self) -> frozenset[str] | None:
        """The paths of the unit's released files and nbgrader's own; None (any file) for a
        unit with no release folder here, said in the log."""
        release = Path(self.coursedir.format_path(self.coursedir.release_directory, ".",
                                                  self.coursedir.assignment_id))
        if not release.is_dir():
            self.log.warning("No release folder %s: every safely named file is collected", release)
            return None
        return NBGRADER_FILES | {p.relative_to(release).as_posix() for p in release.rglob("*")
                                 if p.is_file()}

    def _check_times(self, copy: Path, candidate: Claim, latest_change: float) -> None:
        """``Refused`` unless the copy's timestamp.txt can be believed (``claim.check_written``)."""
        written = claims.stamped(copy / claims.STAMP_FILE, claims.STAMP_FILE, self.clock)
        claims.check_written(candidate, written, latest_change if self.check_changes else None)

    def _share(self, copy: Path) -> None:
        """With ``CourseDirectory.groupshared``, what is collected is the group's too, as
        nbgrader's own copy leaves it."""
        if self.coursedir.groupshared:
            for path in [copy, *copy.rglob("*")]:
                path.chmod(path.stat().st_mode | (0o2770 if path.is_dir() else 0o660))

    def _refuse(self, folder: str, why: Exception) -> None:
        self.refused.append(f"{folder[:120]!r}: {why}")

    def _summary(self) -> None:
        """One line per refused folder, and once the students whose owners were not checked."""
        assignment = self.coursedir.assignment_id
        if self.refused:
            self.log.warning("Refused %d folder(s) of '%s' in the exchange, not collected:\n%s",
                             len(self.refused), assignment,
                             "\n".join(f"  refused {line}" for line in self.refused))
        if self.unchecked:
            self.log.warning("Owners not checked for %s: no OS account has their name (a hub "
                             "where every student shares one account?), so a submission there "
                             "can name any student", _listed(sorted(set(self.unchecked))))
        if not self.claims and not self.refused:
            self.log.warning("No submissions of '%s' for course '%s' to collect", assignment,
                             self.coursedir.course_id)


def _listed(students: list[str]) -> str:
    shown = ", ".join(students[:NAMES_SHOWN])
    more = len(students) - NAMES_SHOWN
    return f"{len(students)} student(s) ({shown}{f' and {more} more' if more > 0 else ''})"

