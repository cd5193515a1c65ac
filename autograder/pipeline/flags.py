"""Cells a grading job leaves without a score, and why: beside the scores, for an instructor.

nbgrader's own way to say that a cell waits for a person is a grade with no ``auto_score``
and ``needs_manual_grade`` set: Formgrader lists the submission as needing manual grading,
nbgrader's ``failed_tests`` does not count the cell, and a manual score completes it. A job
leaves a cell that way only for a reason of ``Flag`` (the grader failed on it), never for
something the student's code did, which is scored.

The grading executor marks such a cell in the graded notebook (``mark``: metadata of the
grader's, cleared from every cell before the notebook runs, so no submission brings its own)
and the job reads the marks back (``marked``) into its ``Outcome``; its record
(``.grading.json``) keeps them (``to_record``) for the next run and the class report.

A cell may also be marked for review with its score kept (``mark_review``, read back by
``reviews``): a graded run whose figures the grader finds implausible (unit 14's language
model far better on the held-out names than training on the course's names makes it). The
run's summary lists those cells, as it lists copied ones.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

KEY = "autograder"       # the grader's key in a cell's metadata


class Flag(str, Enum):
    """Why a cell has no score yet."""

    GRADER_FAULT = "grader fault"    # its check failed on the grader's side, not the student's

    @property
    def label(self) -> str:
        return f"needs review: {self.value}"


@dataclass(frozen=True)
class Unscored:
    """A cell left without a score: the flag, and the grader's words about what happened."""

    flag: Flag
    reason: str


def clear(cells: Iterable[dict]) -> None:
    """Remove every mark from ``cells`` (whatever a submitted notebook carries)."""
    for cell in cells:
        cell.get("metadata", {}).pop(KEY, None)


def mark(cell: dict, flag: Flag, reason: str) -> None:
    cell["metadata"][KEY] = {"flag": flag.value, "reason": reason}


def mark_review(cell: dict, reason: str) -> None:
    """Mark ``cell`` for an instructor's review; its score stands."""
    cell["metadata"][KEY] = {"review": reason}


def marked(cells: Iterable[dict]) -> dict[str, Unscored]:
    """The marked grade cells of a graded notebook (its JSON cells), by grade id."""
    found = {}
    for cell in cells:
        metadata = cell.get("metadata", {})
        nbgrader, note = metadata.get("nbgrader", {}), metadata.get(KEY)
        if cell.get("cell_type") == "code" and nbgrader.get("grade") and isinstance(note, dict) \
                and "flag" in note:
            found[nbgrader.get("grade_id")] = Unscored(Flag(note["flag"]), str(note["reason"]))
    return found


def reviews(cells: Iterable[dict]) -> dict[str, str]:
    """The grade cells of a graded notebook marked for review, scores kept: grade id: why."""
    return {cell["metadata"]["nbgrader"]["grade_id"]: str(cell["metadata"][KEY]["review"])
            for cell in cells if cell.get("cell_type") == "code"
            and cell.get("metadata", {}).get("nbgrader", {}).get("grade")
            and "review" in (cell["metadata"].get(KEY) or {})}


def grade_cells(cells: Iterable[dict]) -> list[str]:
    """The grade ids of the code cells that carry points (those a job scores)."""
    return [cell["metadata"]["nbgrader"]["grade_id"] for cell in cells
            if cell.get("cell_type") == "code"
            and cell.get("metadata", {}).get("nbgrader", {}).get("grade")]


def to_record(unscored: Mapping[str, Mapping[str, Unscored]]) -> dict:
    """``{notebook: {grade id: {"flag", "reason"}}}``, for ``.grading.json``."""
    return {notebook: {grade_id: {"flag": cell.flag.value, "reason": cell.reason}
                       for grade_id, cell in cells.items()}
            for notebook, cells in unscored.items() if cells}


def from_record(record: Mapping) -> dict[str, dict[str, Unscored]]:
    """What ``to_record`` wrote in a submission's record (nothing for an older record)."""
    return {notebook: {grade_id: Unscored(Flag(cell["flag"]), cell["reason"])
                       for grade_id, cell in cells.items()}
            for notebook, cells in record.get("unscored", {}).items()}


def cells_of(unscored: Mapping[str, Mapping[str, Unscored]]) -> list[str]:
    """The grade ids of every unscored cell, notebook after notebook."""
    return [grade_id for cells in unscored.values() for grade_id in cells]
