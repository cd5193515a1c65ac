"""The course's roster for LMS hand-ins: which student id an LMS name or id stands for.

A CSV file with the columns ``lms_name, lms_id, student_id`` (``c.LmsFileNames.roster``
in ``nbgrader_config.py``, relative to the course root). A row with both a name and an id
matches that one upload (two Moodle students called "Jane Doe": ``Jane Doe,4411,jdoe1``
and ``Jane Doe,4412,jdoe2``; Moodle's participant id is the one in that assignment's
folder names, it changes from one assignment to the next); a row with a name only matches
every upload of that name (``王芳,,wang-fang``); a row with an id only matches that LMS
id (Canvas's user id: ``,1201,jane`` keeps an id chosen before ``doejane-1201``). The most
specific row wins; uploads the roster does not name keep the default id.

Names are compared after Unicode NFKC and case folding, spaces collapsed: ``JOSÉ GARCÍA``,
``José García`` in decomposed accents or in full-width letters match the row ``José García``.
Only a row naming the upload's LMS id, or its name exactly as spelled (the same code points),
*pins* it; a look-alike matched through the folding is one more claim on that id, which the
plan (``plan.py``) weighs against the others.
"""
from __future__ import annotations

import csv
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from autograder.pipeline.term.lms.uploads import Upload
from autograder.pipeline.names import problem

COLUMNS = ["lms_name", "lms_id", "student_id"]


class RosterError(ValueError):
    """A roster that cannot be used; the message names the file and line."""


def _key(text: str) -> str:
    """``text`` as names are compared: NFKC, case folded, runs of spaces as one."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def spelling(text: str) -> str:
    """``text`` as spelled, code point by code point: ``José`` with a precomposed ``é``
    and with ``e`` and a combining accent are two spellings."""
    return text.strip()


class Match(NamedTuple):
    """The student id a roster row gives an upload; ``pinned`` when the row names its LMS
    id or its exact spelling."""

    student_id: str
    pinned: bool


@dataclass(frozen=True)
class Roster:
    """``(lms name, lms id) → student id``; either part may be empty in a row."""

    rows: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # → id, name

    @classmethod
    def load(cls, path: Path) -> Roster:
        """The roster in ``path``; ``RosterError`` for a missing file, other columns, a bad
        student id, a row that names nobody or a second row for the same name and id."""
        try:
            with open(path, newline="", encoding="utf-8-sig") as stream:
                lines = list(csv.reader(stream))
        except (OSError, UnicodeDecodeError) as error:
            raise RosterError(f"roster {path}: {error}") from error
        if not lines or [c.strip() for c in lines[0]] != COLUMNS:
            raise RosterError(f"roster {path}: the first line must be {','.join(COLUMNS)}")
        rows: dict[tuple[str, str], str] = {}
        for number, line in enumerate(lines[1:], start=2):
            if not any(cell.strip() for cell in line):
                continue
            name, lms_id, student_id = _row(path, number, line)
            if (_key(name), lms_id) in rows:
                raise RosterError(f"roster {path}, line {number}: {name!r} {lms_id!r} again")
            rows[_key(name), lms_id] = student_id, name
        return cls(rows)

    def match(self, upload: Upload) -> Match | None:
        """The id the roster gives ``upload``, or None when no row names it."""
        name = _key(upload.name)
        for key in ((name, upload.lms_id), (name, ""), ("", upload.lms_id)):
            if key in self.rows:
                student_id, spelled = self.rows[key]
                return Match(student_id, bool(key[1]) or spelling(spelled) == spelling(upload.name))
        return None


def _row(path: Path, number: int, line: list[str]) -> tuple[str, str, str]:
    if len(line) != len(COLUMNS):
        raise RosterError(f"roster {path}, line {number}: {len(line)} columns, not 3")
    name, lms_id, student_id = (cell.strip() for cell in line)
    if not (name or lms_id):
        raise RosterError(f"roster {path}, line {number}: no LMS name nor id")
    if why := problem(student_id, "student id"):
        raise RosterError(f"roster {path}, line {number}: {why}")
    return name, lms_id, student_id
