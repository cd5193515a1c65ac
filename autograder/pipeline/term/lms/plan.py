"""Which downloaded notebook goes to which student, decided for the whole download at once,
before ``nbgrader zip_collect`` copies anything into ``submitted/``.

Each file is read by ``uploads.parse``; its student id comes from the roster, else
from the LMS's name (and Canvas's user id). Then:

- the student id must pass ``names.problem`` (and so must the notebook's name): an
  upload from a student named ``..`` is skipped, named, and never leaves ``submitted/``;
- every LMS account (a Canvas user id, a Moodle participant) that gets a student id is a
  claim on it. One claim is collected: a lone claimant, unless ``known`` (what earlier
  downloads recorded for that id) says the id is another account (Canvas: another user id;
  Moodle: a name spelled otherwise, ``JOSÉ GARCÍA`` or ``Jose Garcia`` for ``José García``).
  Of several claims the one the roster pins wins (a row naming the account's LMS id, or its
  name exactly as spelled), else the one ``known`` names. Every other claim is *set aside*: its
  files are skipped with a note naming both accounts, ``set_aside`` lists it, and the rest
  of the class is collected. A look-alike never merges into another student and never
  stops the run;
- of one student's uploads of the same notebook the newest is collected (Canvas's
  ``-1``, ``-2``...; then the higher submission id; then the later path), the others are
  skipped, named.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from autograder.pipeline.term.lms.roster import Roster, spelling
from autograder.pipeline.term.lms.uploads import Upload, parse
from autograder.pipeline.names import problem

@dataclass
class Plan:
    """What ``make_plan`` decided, by path inside the extracted download."""

    collect: dict[str, tuple[str, str]] = field(default_factory=dict)  # → student id, file id
    skipped: dict[str, str] = field(default_factory=dict)              # → why
    students: dict[str, Upload] = field(default_factory=dict)          # student id → who
    set_aside: list[str] = field(default_factory=list)                 # one line per account


class Claim(NamedTuple):
    """One LMS account's uploads under one student id; ``pinned`` by a roster row."""

    uploads: list[Upload]
    pinned: bool


def make_plan(paths: list[str], roster: Roster = Roster(),
              known: Mapping[str, Mapping[str, str]] | None = None) -> Plan:
    """The plan for the notebooks at ``paths`` (relative to the extracted folder);
    ``known``: student id → the ``lms``, ``lms_name`` and ``lms_id`` recorded for it."""
    plan, known = Plan(), known or {}
    claims: dict[str, dict[tuple[str, str], Claim]] = defaultdict(dict)
    for path in sorted(paths):
        found = _read(path, roster)
        if isinstance(found, str):
            plan.skipped[path] = found
            continue
        upload, student_id, pinned = found
        claim = claims[student_id].setdefault((upload.lms, upload.lms_id), Claim([], pinned))
        claim.uploads.append(upload)
    newest: dict[tuple[str, str], Upload] = {}
    for student_id, accounts in sorted(claims.items()):
        kept = _kept(accounts, known.get(student_id))
        for account, claim in accounts.items():
            if account in kept:
                plan.students[student_id] = claim.uploads[0]
                for upload in claim.uploads:
                    _keep_newest(plan, newest, (student_id, upload.file_id), upload)
            else:
                _set_aside(plan, student_id, claim, accounts, known.get(student_id))
    plan.collect = {u.path: key for key, u in newest.items()}
    return plan


def _read(path: str, roster: Roster) -> tuple[Upload, str, bool] | str:
    """The upload at ``path``, its student id and whether the roster pins it, or why it is
    skipped."""
    upload = parse(path)
    if isinstance(upload, str):
        return upload
    match = roster.match(upload)
    student_id = match.student_id if match else upload.default_id
    if student_id is None:
        return (f"no letter or digit in {upload.name!r} to make a student id of: "
                "give it one in the roster (c.LmsFileNames.roster)")
    why = problem(student_id, "student id") or problem(upload.file_id, "file name")
    return why or (upload, student_id, bool(match and match.pinned))


def _kept(accounts: dict[tuple[str, str], Claim], record: Mapping[str, str] | None) -> set:
    """The accounts collected under one student id (see the module)."""
    pinned = {a for a, claim in accounts.items() if claim.pinned}
    fits = pinned or {a for a, claim in accounts.items() if _recorded(claim.uploads[0], record)}
    if record is None and not fits:
        fits = set(accounts)
    return fits if len(fits) == 1 else set()


def _recorded(upload: Upload, record: Mapping[str, str] | None) -> bool:
    """Whether ``record`` (an earlier download's) is this upload's account."""
    if record is None or record.get("lms") != upload.lms:
        return False
    if upload.lms == "Canvas":
        return record.get("lms_id") == upload.lms_id
    return spelling(record.get("lms_name", "")) == spelling(upload.name)


def _set_aside(plan: Plan, student_id: str, claim: Claim, accounts: dict[tuple[str, str], Claim],
               record: Mapping[str, str] | None) -> None:
    """Skip every file of ``claim``, with a note saying which other account holds the id."""
    others = [str(c.uploads[0]) for c in accounts.values() if c is not claim]
    why = [f"{len(accounts)} accounts would be {student_id} (also {'; '.join(others)})"
           ] if others else []
    if record is not None:
        user = f" (user {record['lms_id']})" if record.get("lms_id") else ""
        why.append(f"{student_id} was {record.get('lms')} {record.get('lms_name')!r}{user} in an "
                   "earlier download")
    why.append("to collect it, give it an id in the roster (c.LmsFileNames.roster: lms_name,"
               f"lms_id,student_id): {student_id} if it is that student, else its own")
    line = f"{claim.uploads[0]} set aside: " + "; ".join(why)
    plan.set_aside.append(line)
    plan.skipped.update({upload.path: line for upload in claim.uploads})


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
