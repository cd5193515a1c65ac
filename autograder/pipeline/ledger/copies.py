"""Solution cells that copy the reference: a flag for the instructor's review, never a score.

Unit 03's reference solutions go out in the provided cells of units 04-11 (``sync``); the
release tools hold those units back until unit 03 closes (``handout``), but a late
submission, an override or a friend's copy of release/04 can still bring them into unit 03,
where they score full marks. The ledger (``grade``, the instructor's process, which has
``source/``) therefore compares each graded submission with its unit's reference solution
regions, which are exactly what later units' provided cells carry, and records the
solution cells it reproduces (``.grading.json``: ``copies``); the summary and the class
report list them. Scores are untouched.

The comparison works on statements, each in a normal form: parsed (after IPython's own
transformation of magics, and the body of a cell magic parsed too), printed back by
``ast.unparse`` (so comments, blank lines, line breaks, quotes and parentheses vanish),
docstrings and other bare strings dropped, and a compound statement (``def``, ``class``,
``if``, ``for``, ``with``, ``try``...) reduced to its header. What the student wrote is
the statements of their editable code cells (solution cells and cells they added) minus
those the release notebook gave them there. A reference solution cell is copied when each
statement of every one of its solution regions is among them (counted with multiplicity,
in any order, wherever they were put) and its regions hold at least ``MIN_NODES`` syntax
nodes (about four lines). Only whole cells count, and only cells of some size, so a student
who writes the same short, canonical code as the reference is not flagged: unit 06's
``Sequential`` (three two-line loops, 65 nodes), ``MSELoss`` (55) and the other seven cells
under the threshold cannot be flagged; unit 04's ReLU cell (four one-liners, two of them
ending in the reference's own ``.astype(self.input.dtype)``, 74) and unit 03's ``Linear``
(183) can. A cell over ``MAX_CELL`` characters is not read (a solution cell holds a few
thousand).
Renaming variables, or ``exec`` of a string, escapes the flag: it is a lead for review of
the paste the provided cells invite, not a plagiarism detector.
"""
from __future__ import annotations

import ast
import copy
import functools
import json
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.notebooks.lint import BEGIN_SOLUTION, END_SOLUTION, regions
from autograder.notebooks.units import is_locked, is_solution, nbgrader
from autograder.pipeline.course import RECORD, Course

MIN_NODES = 70
MAX_CELL = 1_000_000     # characters; the kernel's own cap on a cell's printed output
BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


@dataclass(frozen=True)
class Region:
    """One ``### BEGIN/END SOLUTION`` block of the reference, as normal-form statements."""

    statements: Counter
    nodes: int


@functools.cache
def _ipython() -> object:
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager()


def _parse(text: str) -> list[ast.AST]:
    """The syntax trees of a cell's code as IPython would run it ([] if it is not Python)."""
    texts = [text]
    if text.lstrip().startswith("%%"):          # a cell magic's body is code too
        texts.append(text.lstrip().partition("\n")[2])
    trees = []
    for code in texts:
        try:
            trees.append(ast.parse(_ipython().transform_cell(code)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return trees


def _is_bare_string(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _header(node: ast.stmt) -> str:
    """A statement in normal form: a compound one without its blocks."""
    shallow = copy.copy(node)
    for block in BLOCKS:
        if isinstance(getattr(shallow, block, None), list):
            setattr(shallow, block, [ast.Pass()] if block == "body" else [])
    return ast.unparse(shallow)


def statements(trees: list[ast.AST]) -> Counter:
    """Every statement of ``trees``, at every depth, in normal form, with multiplicity."""
    return Counter(_header(node) for tree in trees for node in ast.walk(tree)
                   if isinstance(node, ast.stmt) and not _is_bare_string(node))


def _nodes(trees: list[ast.AST]) -> int:
    """The size of a region: the syntax nodes of its statements, docstrings left out."""
    return sum(len(list(ast.walk(node))) for tree in trees for node in tree.body
               if not _is_bare_string(node))


def reference(source_nb: nbformat.NotebookNode) -> dict[str, list[Region]]:
    """Each solution cell of a source notebook (by grade id): its solution regions."""
    found = {}
    for cell in source_nb.cells:
        if cell.cell_type != "code" or not is_solution(cell):
            continue
        blocks = regions(cell.source, BEGIN_SOLUTION, END_SOLUTION)[0]
        trees = [_parse(textwrap.dedent("\n".join(lines))) for lines in blocks]
        found[nbgrader(cell).get("grade_id", "?")] = [
            region for region in (Region(statements(t), _nodes(t)) for t in trees)
            if region.statements]
    return found


def written(nb: nbformat.NotebookNode) -> Counter:
    """The statements of a notebook's editable code cells (not read-only)."""
    found = Counter()
    for cell in nb.cells:
        if cell.cell_type == "code" and not is_locked(cell) and len(cell.source) <= MAX_CELL:
            try:
                found += statements(_parse(cell.source))
            except (RecursionError, MemoryError, ValueError):   # not code this can read
                continue
    return found


def copied(graded: nbformat.NotebookNode, release: nbformat.NotebookNode,
           source: nbformat.NotebookNode) -> list[str]:
    """The grade ids of the reference solution cells that ``graded`` reproduces."""
    return _copied(written(graded), written(release), reference(source))


def _copied(student: Counter, given: Counter, solutions: dict[str, list[Region]]) -> list[str]:
    own = student - given
    return [grade_id for grade_id, found in solutions.items()
            if found and sum(r.nodes for r in found) >= MIN_NODES
            and all(not (r.statements - own) for r in found)]


@functools.lru_cache(maxsize=64)
def _unit(source: Path, release: Path, _version: tuple) -> tuple[Counter, dict[str, list[Region]]]:
    """What the release gives and what the reference solves, read once per run and unit
    (``_version``: both files' modification times, so an edited unit is read again)."""
    return (written(nbformat.read(str(release), as_version=4)),
            reference(nbformat.read(str(source), as_version=4)))


def _student(data: bytes) -> Counter | None:
    """What a graded notebook's editable cells hold (None: not a notebook this can read)."""
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
        given, solutions = _unit(source, release, (source.stat().st_mtime_ns,
                                                   release.stat().st_mtime_ns))
        found += [{"notebook": name, "cell": cell} for cell in _copied(student, given, solutions)]
    if found and RECORD in files:
        files[RECORD] = json.dumps({**json.loads(files[RECORD]), "copies": found}, indent=1).encode()
    return found
