"""CSV files the course writes (``grades.csv``, ``grades-lms.csv``,
``downloaded/lms-students.csv``) are inert when an instructor or an LMS opens them in a
spreadsheet: a cell is never read as a formula.

A student chooses text that lands in these files: her LMS name (``=HYPERLINK("http://x",
"Jane")`` as a Moodle full name), her student id. As OWASP's "CSV Injection" page
recommends, every field is quoted, and a cell that begins with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return gets a single quote in front (``'=HYPERLINK(...)``), so the
spreadsheet shows it as text. A number (``-2.5``, a score, a duration) is left as it is: a
spreadsheet reads a number as a number, never as a formula. Nothing else is changed.

``read_csv`` reads such a file back for the course's own use, each neutralised cell as it
was before (``revived``).
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def inert(value: object) -> str:
    """``value`` as a cell no spreadsheet evaluates: ``'`` before a leading trigger."""
    text = "" if value is None else str(value)
    if text.startswith(TRIGGERS) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


def revived(cell: str) -> str:
    """The value that ``inert`` made ``cell`` of."""
    return cell[1:] if cell[:1] == "'" and cell[1:].startswith(TRIGGERS) else cell


def write_csv(path: Path, rows: Iterable[Sequence[object]]) -> Path:
    """Write ``rows`` (the header first) to ``path`` as UTF-8, every field quoted and inert."""
    with open(path, "w", newline="", encoding="utf-8") as stream:
        csv.writer(stream, quoting=csv.QUOTE_ALL).writerows([inert(v) for v in row] for row in rows)
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a file ``write_csv`` wrote, by the header's names, each cell revived."""
    with open(path, newline="", encoding="utf-8") as stream:
        return [{k: revived(v) for k, v in row.items()} for row in csv.DictReader(stream)]
