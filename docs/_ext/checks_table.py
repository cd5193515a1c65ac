"""The ``autograder-checks`` directive: the list of checks, generated from the registry.

For every unit in course order, one table of the checks its hidden test cells call: the
check's name, its points in that cell, the student classes or answers it takes, and what it
judges (the first paragraph of its docstring). A check no notebook calls is listed last. A
check without a docstring is a build error: the list must say what every check judges.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.util import logging

LOG = logging.getLogger(__name__)
LITERAL = re.compile(r"``(.+?)``|`(.+?)`")
HEADER = ("check", "points", "takes", "what it judges")


@dataclass(frozen=True)
class Graded:
    """One hidden test cell: the check it calls and the cell's points."""

    check: str
    points: float


def graded_cells() -> dict[str, list[Graded]]:
    """Unit name -> the checks its source notebook's hidden cells call, in notebook order."""
    from autograder.notebooks.lint import BEGIN_HIDDEN, END_HIDDEN, HIDDEN_CALL, regions
    from autograder.notebooks.units import read, units
    found: dict[str, list[Graded]] = {}
    for unit in units():
        cells = found.setdefault(unit.name, [])
        for cell in read(unit.source).cells:
            points = cell.metadata.get("nbgrader", {}).get("points", 0)
            for block in regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)[0]:
                cells += [Graded(call.group("name"), points) for line in block
                          if (call := HIDDEN_CALL.match(line.strip()))]
    return found


def summary(doc: str) -> str:
    """A docstring's first paragraph on one line."""
    return " ".join(doc.split("\n\n")[0].split())


def inline(text: str) -> list[nodes.Node]:
    """``text`` as docutils nodes, with its ``literals`` kept as code."""
    parts: list[nodes.Node] = []
    start = 0
    for match in LITERAL.finditer(text):
        parts.append(nodes.Text(text[start:match.start()]))
        parts.append(nodes.literal(text=match.group(1) or match.group(2)))
        start = match.end()
    parts.append(nodes.Text(text[start:]))
    return parts


def _row(cells: list[list[nodes.Node]]) -> nodes.row:
    row = nodes.row()
    for content in cells:
        row += nodes.entry("", nodes.paragraph("", "", *content))
    return row


def _table(rows: list[nodes.row]) -> nodes.table:
    table, group = nodes.table(classes=["checks"]), nodes.tgroup(cols=len(HEADER))
    table += group
    for width in (22, 6, 16, 56):
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    head += _row([[nodes.Text(title)] for title in HEADER])
    body.extend(rows)
    group += head
    group += body
    return table


class ChecksDirective(Directive):
    """``autograder-checks``: one table per unit of the checks the registry holds."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        import autograder.check  # noqa: F401  (registers every check)
        from autograder.registry import CHECKS
        answers = sum(1 for check in CHECKS.values() if check.answers)
        out: list[nodes.Node] = [nodes.paragraph(text=(
            f"{len(CHECKS)} checks are registered: {len(CHECKS) - answers} judge code, "
            f"{answers} judge answers to questions."))]
        called: set[str] = set()
        for unit, cells in graded_cells().items():
            if cells:
                total = sum(cell.points for cell in cells)
                out.append(nodes.rubric(text=f"{unit}: {len(cells)} checks, {total:g} points"))
                out.append(_table([self._row(CHECKS, cell.check, cell.points) for cell in cells]))
                called |= {cell.check for cell in cells}
        spare = sorted(set(CHECKS) - called)
        if spare:
            out.append(nodes.rubric(text="Registered, called by no notebook"))
            out.append(_table([self._row(CHECKS, name, None) for name in spare]))
        return out

    def _row(self, checks: dict, name: str, points: float | None) -> nodes.row:
        check = checks.get(name)
        if check is None:
            LOG.warning("a notebook calls check.%s, which the registry lacks", name,
                        location=self.get_location())
            return _row([[nodes.literal(text=name)], [], [], [nodes.Text("(not registered)")]])
        doc = inspect.getdoc(check.run) or ""
        if not doc:
            LOG.warning("check.%s has no docstring: say what it judges", name,
                        location=self.get_location())
        return _row([[nodes.literal(text=name)], [nodes.Text("" if points is None else f"{points:g}")],
                     inline(", ".join(f"``{target}``" for target in check.targets)),
                     inline(summary(doc))])


def setup(app: Sphinx) -> dict:
    app.add_directive("autograder-checks", ChecksDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
