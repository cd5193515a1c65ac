"""Solution cells that copy provided code: a flag for the instructor's review, never a score.

Unit 03's reference solutions go out in the provided cells of units 04-13 (``sync``): every
later release carries the earlier units' reference solutions. The release tools hold those
units back until unit 03 closes (``handout``), but a late submission, an override or a
friend's copy of release/04 can still bring them into unit 03, where they score full marks.
The ledger (``grade``, the instructor's process, which has ``source/``) therefore compares
each graded submission with its unit's reference solution regions, which are exactly what
the later releases' provided cells carry, and records the solution cells it reproduces
(``.grading.json``: ``copies``); the summary and the class report list them. Scores are
untouched.

The comparison is copydetect's k-gram fingerprints on Python's normal form (``fingerprints``):
names, layout, comments, docstrings, type annotations, cell magics, the order of statements
and added code (dead or not) change nothing. A
reference solution cell is copied when the k-grams of what the student wrote (every editable
code cell: a paste into a cell of one's own counts) cover at least ``THRESHOLD`` of its
solution regions' lexed code, leaving out the k-grams the release notebook itself holds (the
scaffold, the provided code: what everyone has). Only cells of some size (``MIN_NODES``
syntax nodes, about four lines) are judged, so the short canonical code an honest student
writes as the reference does (unit 06's ``Sequential``, three two-line loops) is never flagged.

``THRESHOLD`` is measured (``tests/pipeline/test_copies.py``, docs/security.md): the honest
solutions written without the reference (``tests/pipeline/honest.py``) cover at most 0.47 of a
reference cell (unit 03's ``Linear`` whose backward is the textbook's, as the reference's); the
157 pastes of 29 cells from every later release, annotated, renamed, reordered and padded
with dead code, all 1.0. A cell over ``MAX_CELL`` characters is not read (a solution cell
holds a few thousand). Code run from a string (``exec``) escapes it, and so does code
rewritten statement by statement.
A cell over ``MAX_CELL`` characters is not read (a solution cell holds a few
thousand). Code run from a string (``exec``) escapes it.
"""
from __future__ import annotations

import ast
import functools
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.notebooks.lint import BEGIN_SOLUTION, END_SOLUTION, regions
from autograder.notebooks.units import is_locked, is_solution, nbgrader
from autograder.pipeline.course import RECORD, Course
from autograder.pipeline.term.fingerprints import (Print, containment, is_bare_string,
                                                     normal_code, parse)

THRESHOLD = 0.7
MIN_NODES = 70
MAX_CELL = 1_000_000     # characters; the kernel's own cap on a cell's printed output


@dataclass(frozen=True)
class Solution:
    """One reference solution cell: the prints of its solution regions, and their size."""

    regions: tuple[Print, ...]
    nodes: int


def _nodes(trees: list) -> int:
    """The size of a region: the syntax nodes of its statements, docstrings left out."""
    return sum(len(list(ast.walk(node))) for tree in trees for node in tree.body
               if not is_bare_string(node))


def cell_print(source: str) -> Print:
    """The print of one code cell (empty for a cell over ``MAX_CELL`` or not Python)."""
    return Print.of(normal_code(parse(source)) if len(source) <= MAX_CELL else "")


def given(release: nbformat.NotebookNode) -> set[int]:
    """The k-grams of every code cell of a release notebook: what every student has."""
    return set().union(*(cell_print(c.source).hashes for c in release.cells
                         if c.cell_type == "code"))


def reference(source_nb: nbformat.NotebookNode, known: set[int] = frozenset()
              ) -> dict[str, Solution]:
    """Each solution cell of a source notebook (by grade id): its regions' prints, less the
    k-grams ``known`` (the release's)."""
    found = {}
    for cell in source_nb.cells:
        if cell.cell_type != "code" or not is_solution(cell):
            continue
        trees = [parse(textwrap.dedent("\n".join(lines)))
                 for lines in regions(cell.source, BEGIN_SOLUTION, END_SOLUTION)[0]]
        nodes = sum(_nodes(t) for t in trees)
        found[nbgrader(cell).get("grade_id", "?")] = Solution(
            tuple(Print.of(normal_code(t)).without(known) for t in trees), nodes)
    return found


def written(nb: nbformat.NotebookNode) -> set[int]:
    """The k-grams of a notebook's editable code cells (not read-only)."""
    return set().union(*(cell_print(c.source).hashes for c in nb.cells
                         if c.cell_type == "code" and not is_locked(c)))


def similarities(student: set[int], solutions: dict[str, Solution]) -> dict[str, float]:
    """Each reference cell of some size: the share of it that ``student``'s k-grams cover."""
    return {grade_id: containment(list(found.regions), student)
            for grade_id, found in solutions.items() if found.nodes >= MIN_NODES}


def copied(graded: nbformat.NotebookNode, release: nbformat.NotebookNode,
           source: nbformat.NotebookNode) -> list[str]:
    """The grade ids of the reference solution cells that ``graded`` reproduces."""
    return _copied(written(graded), reference(source, given(release)))


def _copied(student: set[int], solutions: dict[str, Solution]) -> list[str]:
    return [grade_id for grade_id, share in similarities(student, solutions).items()
            if share >= THRESHOLD]


@functools.lru_cache(maxsize=64)
def _unit(source: Path, release: Path, _version: tuple) -> dict[str, Solution]:
    """The reference's solution cells, less the release's k-grams, read once per run and
    unit (``_version``: both files' modification times, so an edited unit is read again)."""
    known = given(nbformat.read(str(release), as_version=4))
    return reference(nbformat.read(str(source), as_version=4), known)


def _student(data: bytes) -> set[int] | None:
    """The k-grams of a graded notebook's editable cells (None: not a notebook this can read)."""
    try:
        return written(nbformat.reads(data.decode("utf-8"), as_version=4))
    except Exception:  # noqa: BLE001 - a student's notebook: unreadable means no flag
        return None


def flag(course: Course, unit: str, files: dict[str, bytes]) -> list[dict]:
    """The copied cells of one graded submission of ``unit`` (its result's ``files``), also
    written into its ``.grading.json`` as ``copies``."""
    found = []
    for name, data in sorted(files.items()):
        source, release = course.root / "source" / unit / name, course.release(unit) / name
        if not (name.endswith(".ipynb") and Path(name).name == name and source.exists()
                and release.exists()):
            continue
        student = _student(data)
        if student is None:
            continue
        solutions = _unit(source, release, (source.stat().st_mtime_ns, release.stat().st_mtime_ns))
        found += [{"notebook": name, "cell": cell} for cell in _copied(student, solutions)]
    if found and RECORD in files:
        files[RECORD] = json.dumps({**json.loads(files[RECORD]), "copies": found}, indent=1).encode()
    return found
