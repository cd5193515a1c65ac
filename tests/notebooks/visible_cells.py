"""Run a source notebook's code cells (the solutions as written, one of them mistaken on
purpose) up to a visible test cell, in this process, and print what that cell says: ``OK``,
or the failure it raised. ``python visible_cells.py UNIT GRADE_ID '[[cell, old, new], ...]'``;
a fresh process per run, so that no state of one run reaches the next."""
from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")

from autograder.notebooks.sync import reference_code  # noqa: E402
from autograder.notebooks.units import Unit, read  # noqa: E402


def run(unit: str, stop: str, edits: list[list[str]]) -> str:
    notebook = Unit(unit)
    os.chdir(notebook.source.parent)
    namespace: dict = {"__name__": "__main__"}
    for cell in read(notebook.source).cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or "BEGIN HIDDEN TESTS" in cell.source:
            continue
        source = cell.source
        for where, old, new in edits:
            if where == grade_id:
                assert source.count(old) == 1, (grade_id, old)
                source = source.replace(old, new)
        code = "\n".join(line for line in reference_code(source).splitlines()
                         if not line.lstrip().startswith(("%", "!")))
        try:
            exec(compile(code, f"<{unit} {grade_id}>", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - what the visible test says is the result
            if grade_id != stop:
                raise
            return f"{type(error).__name__}: {error}"
        if grade_id == stop:
            return "OK"
    raise LookupError(f"{unit} has no cell {stop}")


if __name__ == "__main__":
    print(run(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]) if len(sys.argv) > 3 else []))
