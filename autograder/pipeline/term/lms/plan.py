"""Which downloaded notebook goes to which student, decided for the whole download at once,
before ``nbgrader zip_collect`` copies anything into ``submitted/``.

Each file is read by ``uploads.parse``; its student id comes from the roster, else
from the LMS's name (and Canvas's user id). Then:

- the student id must pass ``names.problem`` (and so must the notebook's name): an
  upload from a student named ``..`` is skipped, named, and never leaves ``submitted/``;
- of one student's uploads of the same notebook the newest is collected (Canvas's
  ``-1``, ``-2``...; then the higher submission id; then the later path), the others are
  skipped, named;
- two different LMS accounts (Canvas user ids, Moodle participants) that get the same
  student id are a clash: ``clashes`` lists each with both accounts, and the collector
  stops before anything is written, rather than hand one student's grade to the other.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from autograder.pipeline.term.lms.roster import Roster
from autograder.pipeline.term.lms.uploads import Upload, parse
from autograder.pipeline.names import problem


@dataclass
class Plan:
    """What ``make_plan`` decided, by path inside the extracted download."""

    collect: dict[str, tuple[str, str]] = field(default_factory=dict)  # → student id, file id
    skipped: dict[str, str] = field(default_factory=dict)              # → why
    students: dict[str, Upload] = field(default_factory=dict)          # student id → who
    clashes: list[str] = field(default_factory=list)                   # one line each


def make_plan(paths: list[str], roster: Roster = Roster()) -> Plan:
    """The plan for the notebooks at ``paths`` (relative to the extracted folder)."""
    plan = Plan()
    newest: dict[tuple[str, str], Upload] = {}
    accounts: dict[str, dict[tuple[str, str], Upload]] = defaultdict(dict)
    for path in sorted(paths):
        found = _read(path, roster)
        if isinstance(found, str):
            plan.skipped[path] = found
            continue
        upload, student_id = found
        accounts[student_id][upload.lms, upload.lms_id] = upload
        _keep_newest(plan, newest, (student_id, upload.file_id), upload)
    plan.collect = {u.path: key for key, u in newest.items()}
    plan.students = {sid: next(iter(found.values())) for sid, found in accounts.items()}
    plan.clashes = [f"{sid}: " + "; ".join(map(str, found.values()))
                    for sid, found in sorted(accounts.items()) if len(found) > 1]
    return plan


def _read(path: str, roster: Roster) -> tuple[Upload, str] | str:
    """The upload at ``path`` and its student id, or why it is skipped."""
    upload = parse(path)
    if isinstance(upload, str):
        return upload
    student_id = roster.student_id(upload) or upload.default_id
    if student_id is None:
        return (f"no letter or digit in {upload.name!r} to make a student id of: "
                "give it one in the roster (c.LmsFileNames.roster)")
    why = problem(student_id, "student id") or problem(upload.file_id, "file name")
    return why or (upload, student_id)


def _keep_newest(plan: Plan, newest: dict[tuple[str, str], Upload], key: tuple[str, str],
                 upload: Upload) -> None:
    """Keep ``upload`` if it is the student's newest of that notebook so far; the older
    one is skipped, named."""
    old = newest.get(key)
    if old is not None and (old.rank, old.path) > (upload.rank, upload.path):
        old, upload = upload, old
    newest[key] = upload
    if old is not None:
        plan.skipped[old.path] = f"an older upload of {key[1]} by {key[0]} ({upload.path} is newer)"
