"""Provided cells: later units get earlier units' reference solutions as read-only code.

Grading of a unit never depends on the student's earlier units: where unit 3
needs ``numerical_gradient`` from unit 2, it contains a read-only cell with the
reference solution, generated from unit 2's source notebook (one source of truth).

- A cell that defines reusable code declares it in its metadata:
  ``{"minitorch": {"provides": ["numerical_gradient", "rel_error"]}}``
  (a solution cell, or a read-only cell such as unit 3's ``Module``).
- A read-only cell of a later unit asks for code with
  ``{"minitorch": {"provided_from": ["02_gradients"]}}`` (every providing cell of
  that unit) or with names (``["Linear", "Module"]``); ``sync`` writes its source:
  the providing cells' code, in course order, with the ``### BEGIN/END SOLUTION``
  lines removed. Provided code may use the names every unit's setup cell imports
  (``np``, ``plt``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from autograder.notebooks.units import (ROOT, UNIT_NAME, Unit, dumps, is_solution, minitorch,
                                        normalise, read, units, write)

SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


class SyncError(ValueError):
    """A ``provides``/``provided_from`` declaration that cannot be satisfied."""


@dataclass(frozen=True)
class Provider:
    """One providing cell: where it is, the names it defines, its code without markers, and
    whether it is a solution cell (its code is then what the unit's students must write)."""

    unit: Unit
    position: int
    names: tuple[str, ...]
    code: str
    solution: bool = False


def reference_code(source: str) -> str:
    """A solution cell's source without its ``### BEGIN/END SOLUTION`` lines."""
    lines = [line.rstrip() for line in source.splitlines() if not SOLUTION_MARKER.match(line)]
    return "\n".join(lines).strip("\n")


def providers(course: list[Unit]) -> dict[str, list[Provider]]:
    """The providing cells of every unit, keyed by unit name, in cell order."""
    found: dict[str, list[Provider]] = {}
    owner: dict[str, Unit] = {}
    for unit in course:
        nb = read(unit.source)
        found[unit.name] = []
        for position, cell in enumerate(nb.cells):
            names = tuple(minitorch(cell).get("provides", ()))
            if not names:
                continue
            if cell.cell_type != "code":
                raise SyncError(f"{unit}: cell {cell.get('id')} provides {names} but is not code")
            for name in names:
                if name in owner:
                    raise SyncError(f"{name} is provided by both {owner[name]} and {unit}")
                owner[name] = unit
            found[unit.name].append(Provider(unit, position, names, reference_code(cell.source),
                                             is_solution(cell)))
    return found


def resolve(entries: list[str], unit: Unit, by_unit: dict[str, list[Provider]]) -> list[Provider]:
    """The providing cells that ``provided_from`` entries name, earlier units only."""
    chosen: list[Provider] = []
    for entry in entries:
        if entry in by_unit:
            if int(entry[:2]) >= unit.number:
                raise SyncError(f"{unit}: cannot be provided from {entry}, which is not an earlier unit")
            matches = by_unit[entry]
            if not matches:
                raise SyncError(f"{unit}: {entry} has no cell with 'provides' metadata")
        else:
            matches = [p for ps in by_unit.values() for p in ps if entry in p.names]
            if not matches:
                raise SyncError(f"{unit}: no unit provides {entry!r} (and it is not a unit name)")
            if matches[0].unit.number >= unit.number:
                raise SyncError(f"{unit}: {entry!r} comes from {matches[0].unit}, not an earlier unit")
        chosen.extend(p for p in matches if p not in chosen)
    return sorted(chosen, key=lambda p: (p.unit.number, p.position))


def provided_source(chosen: list[Provider]) -> str:
    """The text of a provided cell: per earlier unit, a header comment and its code."""
    blocks = []
    for unit in sorted({p.unit for p in chosen}, key=lambda u: u.number):
        cells = [p for p in chosen if p.unit == unit]
        names = ", ".join(name for p in cells for name in p.names)
        header = (f"# Provided, read-only: the reference solution of unit {unit}: {names}.\n"
                  "# Generated from that unit's source notebook; every later unit gets the same code.")
        blocks.append("\n\n\n".join([header] + [p.code for p in cells]))
    return "\n\n\n".join(blocks)


def solutions_carried(nb: NotebookNode, unit: Unit, by_unit: dict[str, list[Provider]]
                      ) -> list[str]:
    """The earlier units whose solution cells ``nb``'s provided cells hold, in course order:
    what a student of those units could copy from ``nb``. Given read-only code (unit 3's
    ``Module``) does not count, nor a unit named that the course does not have (a scratch
    course of a few units): it has no students to copy into."""
    def present(entry: str) -> bool:
        return entry in by_unit or not UNIT_NAME.match(entry)

    carried = {provider.unit for cell in nb.cells
               for provider in resolve([e for e in minitorch(cell).get("provided_from", ())
                                        if present(e)], unit, by_unit)
               if provider.solution}
    return [u.name for u in sorted(carried, key=lambda u: u.number)]


def sync_notebook(nb: NotebookNode, unit: Unit, by_unit: dict[str, list[Provider]]) -> list[str]:
    """Fill ``nb``'s provided cells in place; return the ids of the cells that changed."""
    changed = []
    for cell in nb.cells:
        entries = minitorch(cell).get("provided_from")
        if not entries:
            continue
        text = provided_source(resolve(list(entries), unit, by_unit))
        if cell.source != text:
            cell.source = text
            changed.append(cell.get("id", "?"))
    return changed


def sync(root: Path = ROOT, check: bool = False) -> list[str]:
    """Fill every provided cell and strip outputs from ``source/``.

    With ``check=True`` nothing is written. Returns one line per notebook that
    was (or, when checking, would be) changed, saying what changed.
    """
    course = units(root)
    by_unit = providers(course)
    report = []
    for unit in course:
        nb = read(unit.source)
        cells = sync_notebook(nb, unit, by_unit)
        normalise(nb)
        if dumps(nb) == unit.source.read_text(encoding="utf-8"):
            continue
        reason = (f"provided cell(s) {', '.join(cells)} out of sync" if cells else
                  "outputs, volatile metadata or formatting differ from the canonical form")
        report.append(f"{unit.source.relative_to(unit.root)}: {reason}")
        if not check:
            write(nb, unit.source)
    return report
