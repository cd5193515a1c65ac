"""The static rules of the course notebooks; each problem is one readable line.

Source notebooks: canonical form (no outputs), unique cell ids, nbgrader metadata
that autogrades (solution cells with markers, locked grade cells with points,
a round total, hand-graded points included; a heading that states points states exactly those graded in its
section, and every graded cell lies in such a section), a visible test (a locked
cell tagged ``visible-test``) after every solution cell, hidden test cells that are only ``from autograder import
check`` and one registered ``check.<name>(...)`` call, no other code mentioning
the reference or the autograder, and a chapter's frame (a "# Unit N" title,
learning objectives, a recap). An optional stretch exercise is a solution cell
tagged ``stretch``, ungraded, whose solution regions lie inside function bodies
(so its untouched stub defines the function and "Run All" goes on), followed by a
plotting cell tagged ``stretch-figure``; it needs no visible test.

The term (``schedule.toml``, when there is one): readable, and no unit opening before a unit
whose solutions it carries has closed (``handout.plan_problems``).

Release notebooks: the source's cells in the same order, with no solution code,
no hidden tests, no mention of ``minitorch_ref``/``autograder`` in code, and a
``raise NotImplementedError()`` for every solution region.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

from nbformat import NotebookNode

from autograder.notebooks.figures import FIGURE_TAG, is_figure
from autograder.notebooks.handout import plan_problems
from autograder.notebooks.units import (
    ROOT, Unit, dumps, is_grade, is_locked, is_solution, minitorch, nbgrader, normalise,
    read, units,
)

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
FORBIDDEN = re.compile(r"\b(minitorch_ref|autograder)\b")
HIDDEN_IMPORT = "from autograder import check"
HIDDEN_CALL = re.compile(r"^check\.(?P<name>\w+)\(.*\)$")
STUB = "raise NotImplementedError()"
VISIBLE_TEST = "visible-test"   # the cell tag of a visible test
STRETCH = "stretch"             # the cell tag of an optional, ungraded stretch solution
POINTS_MULTIPLE = 10
# A heading that promises points, e.g. "### Exercise 2: `Sequential` (7 points)".
POINTS_HEADING = re.compile(r"^(?P<level>#+) .*\((?P<points>\d+) points?\b")
# A solution line this long that appears nowhere else in the source is "solution code".
DISTINCTIVE = 12


def regions(source: str, begin: str, end: str) -> tuple[list[list[str]], list[str], bool]:
    """The lines inside each ``begin``/``end`` block, the lines outside, and whether balanced."""
    inside: list[list[str]] = []
    outside: list[str] = []
    current = None
    for line in source.splitlines():
        marker = line.strip()
        if marker == begin:
            if current is not None:
                return inside, outside, False
            current = []
        elif marker == end:
            if current is None:
                return inside, outside, False
            inside.append(current)
            current = None
        elif current is not None:
            current.append(line)
        else:
            outside.append(line)
    return inside, outside, current is None


def code_lines(lines: list[str]) -> list[str]:
    """Lines that are neither blank nor comments."""
    return [line for line in lines if line.strip() and not line.strip().startswith("#")]


def is_visible_test(cell: NotebookNode) -> bool:
    return VISIBLE_TEST in cell.metadata.get("tags", ())


def is_stretch(cell: NotebookNode) -> bool:
    return STRETCH in cell.metadata.get("tags", ())


# ------------------------------------------------------------------------ source
def _frame_problems(nb: NotebookNode) -> list[str]:
    problems = []
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown" or not first.source.startswith("# Unit "):
        problems.append("the first cell must be a markdown title '# Unit N: ...'")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in ("Learning objectives", "Recap"):
        if not re.search(rf"^#+ .*{heading}", text, re.MULTILINE):
            problems.append(f"no markdown heading containing '{heading}'")
    return problems


def _scored(cell: NotebookNode) -> float:
    """The points a cell scores: a grade cell's, or a hand-graded task's."""
    meta = nbgrader(cell)
    return float(meta.get("points", 0)) if meta.get("grade") or meta.get("task") else 0.0


def _heading_problems(nb: NotebookNode) -> list[str]:
    """A heading's promised points are the scored cells' points in its section (up to the next
    heading of its level or above), and every scored cell lies in a section that promises some."""
    headings = []   # (cell position, level, promised points, heading text)
    for position, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                match = POINTS_HEADING.match(line)
                if line.startswith("#"):
                    headings.append((position, len(line) - len(line.lstrip("#")),
                                     float(match["points"]) if match else None, line.strip()))
    problems, covered = [], set()
    for index, (start, level, promised, text) in enumerate(headings):
        if promised is None:
            continue
        end = next((p for p, l, _, _ in headings[index + 1:] if l <= level and p > start),
                   len(nb.cells))
        section = [p for p in range(start, end) if _scored(nb.cells[p])]
        covered.update(section)
        scored = sum(_scored(nb.cells[p]) for p in section)
        if scored != promised:
            problems.append(f"'{text}' promises {promised:g} points but the cells in its section "
                            f"score {scored:g}")
    for position, cell in enumerate(nb.cells):
        if _scored(cell) and position not in covered:
            problems.append(f"cell {position} ({cell.get('id')}) scores {_scored(cell):g} points "
                            "under no heading that says how many points its section is worth")
    return problems


def _hidden_cell_problems(where: str, cell: NotebookNode, checks: set[str]) -> list[str]:
    blocks, outside, balanced = regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)
    if not balanced:
        return [f"{where}: unbalanced {BEGIN_HIDDEN}/{END_HIDDEN}"]
    if not is_grade(cell):
        return [f"{where}: hidden tests outside a grade cell are never scored"]
    problems = []
    if len(blocks) != 1 or code_lines(outside):
        problems.append(f"{where}: a hidden test cell holds one hidden block and, outside it, "
                        "only comments")
    for block in blocks:
        lines = [line.strip() for line in block if line.strip()]
        call = HIDDEN_CALL.match(lines[1]) if len(lines) == 2 else None
        if len(lines) != 2 or lines[0] != HIDDEN_IMPORT or call is None:
            problems.append(f"{where}: the hidden block must be exactly '{HIDDEN_IMPORT}' and "
                            "one 'check.<name>(<StudentClass>)' line")
        elif call.group("name") not in checks:
            problems.append(f"{where}: check.{call.group('name')} is not a registered check")
    return problems


def _stretch_problems(where: str, cell: NotebookNode) -> list[str]:
    problems = []
    if not is_solution(cell) or is_grade(cell) or minitorch(cell):
        problems.append(f"{where}: a stretch cell is an ungraded solution cell that provides nothing")
    markers = [line for line in cell.source.splitlines() if line.strip() == BEGIN_SOLUTION]
    if any(not line.startswith(" ") for line in markers):
        problems.append(f"{where}: a stretch cell's solution regions lie inside function bodies, so "
                        "that its release stub raises only when called")
    return problems


def _cell_problems(where: str, cell: NotebookNode, checks: set[str]) -> list[str]:
    meta, problems = nbgrader(cell), []
    if meta and meta.get("schema_version") != 3:
        problems.append(f"{where}: nbgrader metadata needs schema_version 3")
    if is_solution(cell):
        inside, _, balanced = regions(cell.source, BEGIN_SOLUTION, END_SOLUTION)
        if not balanced or not inside:
            problems.append(f"{where}: a solution cell needs balanced {BEGIN_SOLUTION}/{END_SOLUTION}")
        if is_grade(cell) or is_locked(cell):
            problems.append(f"{where}: solution cells are neither graded nor locked here")
    if is_grade(cell):
        if cell.cell_type != "code" or not is_locked(cell) or not meta.get("points", 0) > 0:
            problems.append(f"{where}: a grade cell is a locked code cell with points > 0")
    if BEGIN_HIDDEN in cell.source or END_HIDDEN in cell.source:
        problems.extend(_hidden_cell_problems(where, cell, checks))
    elif cell.cell_type == "code" and FORBIDDEN.search(cell.source):
        problems.append(f"{where}: code outside a hidden test block mentions "
                        f"'{FORBIDDEN.search(cell.source).group(1)}'")
    if is_visible_test(cell) and (cell.cell_type != "code" or not is_locked(cell)):
        problems.append(f"{where}: a visible test is a locked code cell")
    if is_stretch(cell):
        problems.extend(_stretch_problems(where, cell))
    mt = minitorch(cell)
    if "provided_from" in mt and ("provides" in mt or not is_locked(cell) or is_solution(cell)):
        problems.append(f"{where}: a provided cell is locked, not a solution, and provides nothing")
    if "provides" in mt and not (is_solution(cell) or is_locked(cell)):
        problems.append(f"{where}: a providing cell is a solution cell or a locked cell")
    return problems


def source_problems(unit: Unit, checks: set[str] | None = None) -> list[str]:
    """Everything wrong with a unit's source notebook (empty if nothing)."""
    if checks is None:
        from autograder import check
        checks = set(dir(check))
    nb = read(unit.source)
    problems = [f"{unit}: {p}" for p in _frame_problems(nb) + _heading_problems(nb)]
    if dumps(normalise(copy.deepcopy(nb))) != unit.source.read_text(encoding="utf-8"):
        problems.append(f"{unit}: not in canonical form (outputs or volatile metadata): "
                        "run python -m autograder.notebooks sync")
    ids = [cell.get("id") for cell in nb.cells]
    if None in ids or len(set(ids)) != len(ids):
        problems.append(f"{unit}: every cell needs a unique id")
    grade_ids = [nbgrader(c)["grade_id"] for c in nb.cells if nbgrader(c).get("grade_id")]
    if len(set(grade_ids)) != len(grade_ids):
        problems.append(f"{unit}: nbgrader grade_ids must be unique")
    for position, cell in enumerate(nb.cells):
        where = f"{unit} cell {position} ({cell.get('id')})"
        problems.extend(_cell_problems(where, cell, checks))
        later = nb.cells[position + 1:]
        if is_stretch(cell):
            if not any(map(is_figure, later)):
                problems.append(f"{where}: no code cell tagged '{FIGURE_TAG}' follows this stretch cell")
        elif is_solution(cell) and not any(is_visible_test(c) for c in later):
            problems.append(f"{where}: no visible test (a locked cell tagged "
                            f"'{VISIBLE_TEST}') follows this solution cell")
    total = sum(_scored(cell) for cell in nb.cells)   # autograded and graded by hand
    if total <= 0 or total % POINTS_MULTIPLE:
        problems.append(f"{unit}: total points {total:g} is not a positive multiple of {POINTS_MULTIPLE}")
    return problems


# ------------------------------------------------------------------------ release
def _solution_lines(nb: NotebookNode) -> set[str]:
    """Distinctive stripped lines of the solution regions (found nowhere else in the notebook)."""
    inside, elsewhere = set(), set()
    for cell in nb.cells:
        blocks, outside, _ = regions(cell.source, BEGIN_SOLUTION, END_SOLUTION)
        inside.update(line.strip() for block in blocks for line in code_lines(block))
        elsewhere.update(line.strip() for line in outside)
    return {line for line in inside - elsewhere if len(line) >= DISTINCTIVE}


def release_problems(unit: Unit) -> list[str]:
    """Everything wrong with a unit's release notebook, given its source (empty if nothing)."""
    if not unit.release.exists():
        return [f"{unit}: {unit.release} is missing: run python -m autograder.notebooks release"]
    source, nb = read(unit.source), read(unit.release)
    if [(c.get("id"), c.cell_type) for c in source.cells] != [(c.get("id"), c.cell_type) for c in nb.cells]:
        return [f"{unit}: the release cells differ from the source cells (ids or types)"]
    problems = []
    leaked = _solution_lines(source)
    for position, (src, cell) in enumerate(zip(source.cells, nb.cells)):
        where = f"release {unit} cell {position} ({cell.get('id')})"
        if any(m in cell.source for m in (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)):
            problems.append(f"{where}: contains a solution or hidden-test marker")
        if cell.cell_type == "code" and FORBIDDEN.search(cell.source):
            problems.append(f"{where}: mentions '{FORBIDDEN.search(cell.source).group(1)}'")
        found = sorted(line for line in leaked if line in {s.strip() for s in cell.source.splitlines()})
        if found:
            problems.append(f"{where}: contains solution code: {found[0]!r}")
        if is_solution(src):
            expected = len(regions(src.source, BEGIN_SOLUTION, END_SOLUTION)[0])
            if cell.source.count(STUB) < expected:
                problems.append(f"{where}: {expected} solution region(s) but fewer '{STUB}' stubs")
        if BEGIN_HIDDEN in src.source and code_lines(cell.source.splitlines()):
            problems.append(f"{where}: a hidden test cell still holds code in the release")
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            problems.append(f"{where}: has outputs")
    return problems


def called_checks(root: Path = ROOT) -> set[str]:
    """The checks that the hidden test cells of the source notebooks under ``root`` call."""
    return {call.group("name") for unit in units(root) for cell in read(unit.source).cells
            for block in regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)[0] for line in block
            if (call := HIDDEN_CALL.match(line.strip()))}


def uncalled_problems(checks: set[str], root: Path = ROOT) -> list[str]:
    """A registered check that no notebook calls grades nothing a student was taught."""
    return [f"check.{name} is registered but no notebook calls it: grade what a notebook "
            "teaches, delete what none does" for name in sorted(checks - called_checks(root))]


def lint(root: Path = ROOT) -> list[str]:
    """Source and release problems of every unit under ``root``, and the checks none calls."""
    from autograder import check
    checks = set(dir(check))
    problems = [p for unit in units(root)
                for p in source_problems(unit, checks) + release_problems(unit)]
    return problems + uncalled_problems(checks, root) + plan_problems(root)
