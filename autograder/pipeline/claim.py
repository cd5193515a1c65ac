"""Who, what and when an inbound folder of the exchange claims, and whether to believe it.

``nbgrader submit`` names its folder ``<student>+<assignment>+<time>+<random>`` and writes
the same time into ``timestamp.txt``; a student can write any name and any time, with
``--student=bob`` or by hand. A claim is believed only when its names are safe
(``autograder.pipeline.names``), its time can be read and is not in the future (beyond
``CLOCK_SKEW``), ``timestamp.txt`` says the same and nothing in the folder changed long after
it, and, where students have their own OS accounts, the folder is owned by the student it
names.
"""
from __future__ import annotations

import pwd
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from nbgrader.utils import parse_utc

from autograder.pipeline import names

# A submission stamped this far after the collector's clock is refused as "in the future":
# room for clocks that differ a little between the students' machines and the instructor's.
CLOCK_SKEW = timedelta(minutes=5)
# What a time may hold before dateutil sees it: no '/', so a time zone is never read as a file.
STAMP = re.compile(r"[0-9A-Za-z :.,+_-]{1,64}")
# How long ``nbgrader submit`` may take between the time it stamps and its last write.
HANDING_IN = timedelta(minutes=10)
STAMP_FILE = "timestamp.txt"


class Refused(Exception):
    """Why a folder of the exchange is not collected: one line for the instructor."""


@dataclass(frozen=True)
class Claim:
    """What an inbound folder's name says: whose, which assignment, handed in when (UTC)."""

    folder: str
    student: str
    assignment: str
    time: datetime   # naive UTC, as nbgrader compares times


def now() -> datetime:
    """The collector's clock, naive UTC like nbgrader's parsed times."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def claim(folder: str, clock: datetime) -> Claim:
    """The claim in ``folder``'s name, or ``Refused`` saying what in the name is wrong."""
    parts = folder.split("+")
    if len(parts) not in (3, 4):
        raise Refused("its name is not <student>+<assignment>+<time>+<random>, as nbgrader "
                      "submit names a folder")
    student, assignment, stamp = parts[:3]
    for value, what in ((student, "student id"), (assignment, "assignment")):
        problem = names.problem(value, what)
        if problem:
            raise Refused(problem)
    return Claim(folder, student, assignment, when(stamp, "its name", clock))


def when(stamp: str, where: str, clock: datetime) -> datetime:
    """The time ``stamp`` (found in ``where``) as naive UTC, or ``Refused`` if it cannot be
    read or lies more than ``CLOCK_SKEW`` after ``clock``."""
    try:
        if not STAMP.fullmatch(stamp):
            raise ValueError(stamp)
        time = parse_utc(stamp)
    except (ValueError, OverflowError):
        raise Refused(f"the time in {where}, {stamp[:64]!r}, cannot be read") from None
    if time > clock + CLOCK_SKEW:
        raise Refused(f"the time in {where}, {time:%Y-%m-%d %H:%M:%S} UTC, is in the future "
                      f"(the collector's clock says {clock:%Y-%m-%d %H:%M:%S} UTC; "
                      f"{CLOCK_SKEW.seconds // 60} minutes of difference are allowed)")
    return time


def stamped(path: Path, where: str, clock: datetime) -> datetime:
    """The time in the file ``path``, a copy in the instructor's own folder (``when``)."""
    try:
        with path.open("rb") as stamp:
            text = stamp.read(128).decode("utf-8").strip()
    except FileNotFoundError:
        raise Refused(f"it has no {STAMP_FILE} (nbgrader submit always writes one)") from None
    except UnicodeDecodeError:
        raise Refused(f"{where} is not text") from None
    return when(text, where, clock)


def believed_at_grading(folder: Path, clock: datetime) -> list[str]:
    """What slipped past collect (collected before it checked times, or copied in by hand),
    at grade time: a ``timestamp.txt`` in the job's copy of a submitted ``folder`` that cannot
    be believed is emptied, so the submission is graded without a hand-in time (nbgrader's
    autograde fails on an unreadable one and records a future one as it stands; it reads an
    empty one as none, and release_feedback, which needs the file, still finds it); the
    note says why."""
    path = folder / STAMP_FILE
    if not path.is_file() or not path.read_bytes().strip():
        return []
    try:
        stamped(path, STAMP_FILE, clock)
    except Refused as why:
        path.write_bytes(b"")
        return [f"Graded without a hand-in time: {why}."]
    return []


def check_written(found: Claim, written: datetime, latest_change: float | None) -> None:
    """``Refused`` unless the time ``written`` in timestamp.txt is the one in the folder's
    name and nothing in the folder changed (``latest_change``, the newest ``st_ctime``, which
    a student cannot set back; None: not checked) more than ``HANDING_IN`` after it."""
    if written != found.time:
        raise Refused(f"its {STAMP_FILE} says {written:%Y-%m-%d %H:%M:%S} but its name "
                      f"{found.time:%Y-%m-%d %H:%M:%S} (UTC)")
    if latest_change is None:
        return
    changed = datetime.fromtimestamp(latest_change, timezone.utc).replace(tzinfo=None)
    if changed > found.time + HANDING_IN:
        raise Refused(f"it changed at {changed:%Y-%m-%d %H:%M:%S}, {_duration(changed - found.time)}"
                      f" after the time it claims ({found.time:%Y-%m-%d %H:%M:%S} UTC): edited "
                      "after it was handed in, or backdated")


def _duration(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def account(student: str) -> int | None:
    """The uid of the OS account named ``student``, or None when there is none (a hub where
    every student shares one account, or students who are only names in the gradebook)."""
    try:
        return pwd.getpwnam(student).pw_uid
    except KeyError:
        return None


def check_owner(student: str, uid: int, expected: int) -> None:
    """``Refused`` unless a folder owned by ``uid``, claiming to be ``student``'s (whose
    account has uid ``expected``), is owned by that student."""
    if uid != expected:
        raise Refused(f"it names {student} (uid {expected}) but belongs to "
                      f"{_user(uid)}: handed in by someone else under {student}'s name")


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
