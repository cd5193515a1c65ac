"""Where a graded job's seconds went, read from what grading left behind.

nbclient stamps every cell it runs in the kernel (``metadata.execution``: busy, reply), and
the job's record (``.grading.json``) holds its length and when it ended. Between them:
before the first cell (the scratch course, nbgrader's start, the sandboxed kernel's start),
the kernel's cells (the notebook's own work), between cells (the hidden checks, run by the
grader against the kernel, and nbclient's hand-over) and after the last cell (nbgrader's
saving, the gradebook, the result's files).
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import nbformat

RECORD = ".grading.json"
PHASES = ("before the first cell", "kernel cells", "between cells (checks)", "after the last cell")


def _at(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def phases(graded: Path, notebook: str) -> dict[str, float]:
    """The seconds of each of ``PHASES`` in the job that graded ``graded/notebook.ipynb``."""
    record = json.loads((graded / RECORD).read_text())
    end = _at(record["graded_at"])
    nb = nbformat.read(str(graded / f"{notebook}.ipynb"), as_version=4)
    spans = [(_at(c.metadata.execution["iopub.status.busy"]),
              _at(c.metadata.execution["shell.execute_reply"]))
             for c in nb.cells if c.cell_type == "code" and "execution" in c.metadata]
    cells = sum(stop - start for start, stop in spans)
    return dict(zip(PHASES, (spans[0][0] - (end - record["seconds"]), cells,
                             spans[-1][1] - spans[0][0] - cells, end - spans[-1][1])))
