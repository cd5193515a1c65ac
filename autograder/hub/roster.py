"""The class list the hub makes its logins from: ``hub/roster.csv`` (``MINITORCH_HUB_ROSTER``).

A CSV file with a header; the column ``student`` (or ``username``, or ``login``, as an LMS
export names it) holds each student's id, the name they log in with. Other columns are kept
for the instructor and ignored here. Ids are refused with the line that holds them when they
are not safe names (``autograder.pipeline.names``), not lowercase (JupyterHub lowercases what
students type), or given twice.
"""
from __future__ import annotations

import csv
from pathlib import Path

from autograder.pipeline import names

COLUMNS = ("student", "username", "login")


class RosterError(ValueError):
    """The roster cannot be read; the message names the file and line."""


def read(path: Path) -> list[str]:
    """The student ids in the roster at ``path``, in its order."""
    with open(path, newline="", encoding="utf-8-sig") as file:
        rows = csv.DictReader(file)
        column = next((c for c in rows.fieldnames or () if c.strip().lower() in COLUMNS), None)
        if column is None:
            raise RosterError(f"{path}: no column named {' or '.join(COLUMNS)} in its header "
                              f"({', '.join(rows.fieldnames or ['empty'])})")
        students = [(rows.line_num, (row[column] or "").strip()) for row in rows]
    return checked(students, str(path))


def checked(students: list[tuple[int, str]], where: str) -> list[str]:
    """The ids, once each, or ``RosterError`` naming the first bad one and its line."""
    seen: dict[str, int] = {}
    for line, student in students:
        why = names.problem(student, "student id")
        if why is None and student != student.lower():
            why = f"the student id {student!r} has capitals (students log in lowercased)"
        if why is None and student in seen:
            why = f"the student id {student!r} is also on line {seen[student]}"
        if why:
            raise RosterError(f"{where}, line {line}: {why}")
        seen[student] = line
    if not seen:
        raise RosterError(f"{where} lists no students")
    return list(seen)
