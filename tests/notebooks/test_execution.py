"""Source notebooks run top to bottom without an error (their time is a benchmark's, measured in
one run: ``make bench`` runs bench/notebooks.py against the 30-second budget per unit, never an
assertion of the suite, where a loaded machine made 13_conv "take 43.6 s"); in release
notebooks every visible test stops at a stub's ``NotImplementedError`` (the two that the grader
scores from its own run, unit 11's, say so in the grader's verdict).

Both read the notebooks the session's grader executed (``graded_units``): the
reference student's (the source notebooks) and the release student's. That run
replaces a run under ``pytest --nbval-lax``, one under nbgrader's ``Validator``
and one under ``Validator(invert=True)`` per unit (three more kernels per unit
for what the graded run shows): every code cell's outputs are there, and the
grading kernel is the strictest the notebooks meet (cell time limit, memory and
output bounds, no file outside its folder). A plain kernel in a fresh student
environment runs every release notebook in tests/pipeline/test_bundle.py.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from autograder.notebooks.lint import is_visible_test
from autograder.notebooks.units import read
from autograder.cells import visible

pytestmark = pytest.mark.notebooks


def graded_notebook(root: Path, student: str, unit):
    """The notebook nbgrader executed and graded for ``student``."""
    return read(root / "autograded" / student / unit.name / f"{unit.name}.ipynb")


def errors(cell) -> list[str]:
    return [f"{out.ename}: {out.evalue}" for out in cell.get("outputs", ()) if out.output_type == "error"]


def seconds(nb) -> float:
    """The cells' running times added up, each from its start to its reply as the kernel
    recorded them (the time between cells is the executor's: nbclient has stalled there)."""
    def at(cell, key):
        return datetime.fromisoformat(cell.metadata["execution"][key].replace("Z", "+00:00"))
    return sum((at(cell, "shell.execute_reply") - at(cell, "iopub.execute_input")).total_seconds()
               for cell in nb.cells if "execution" in cell.metadata)


def test_source_notebook_runs_without_an_error(unit, graded_units):
    nb = graded_notebook(graded_units.root, "reference", unit)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "a cell did not run"
    failed = {cell.id: errors(cell) for cell in code if errors(cell)}
    assert not failed, failed
    took = seconds(nb)
    print(f"{unit}: executed in {took:.1f} s (the budget is bench/notebooks.py's)")


def test_source_notebook_warns_of_nothing(unit, graded_units):
    """Nothing on stderr: no deprecation, and no dataset cache the guard refused to let the
    kernel write (the grader caches the digits before the kernels start)."""
    nb = graded_notebook(graded_units.root, "reference", unit)
    warned = {cell.id: out.text for cell in nb.cells for out in cell.get("outputs", ())
              if out.get("name") == "stderr"}
    assert not warned, warned


def test_release_notebook_stops_at_a_stub_in_every_visible_test(unit, graded_units):
    nb = graded_notebook(graded_units.root, "release", unit)
    tests = [cell for cell in nb.cells if is_visible_test(cell)]
    assert tests, f"{unit} has no visible test"
    for cell in tests:
        first = errors(cell)[:1]
        if cell.metadata.get("nbgrader", {}).get("grade_id") in visible.VERDICTS:   # the grader's run
            stopped = first and first[0].startswith("CheckFailure: ") and "is not implemented yet" in first[0]
        else:
            stopped = first and first[0].startswith("NotImplementedError")
        assert stopped, f"{unit} visible test {cell.id} did not stop at a stub: {first or 'it passed'}"
