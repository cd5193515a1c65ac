"""Run a source notebook's code cells (the solutions as written, one of them mistaken on
purpose) up to a visible test cell and print what that cell says: ``OK``, or the failure it
raised. ``python visible_cells.py UNIT GRADE_ID '[[cell, old, new], ...]'`` runs once;
``python visible_cells.py --serve`` answers such requests, a JSON line ``[unit, grade id,
edits]`` each on stdin, with a JSON line ``{"status", "out"}`` each on stdout: every run in a
child forked from the server, which has imported numpy, matplotlib and the course (0.8 s of a
run's 1.7 s of CPU as a process of its own), so that no state of one run reaches the next.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import traceback

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


RUN_SECONDS = 300    # a forked run that takes longer is killed (SIGALRM)


def forked(unit: str, stop: str, edits: list[list[str]]) -> dict:
    """``run`` in a child process: its exit status and everything it printed."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.dup2(write_end, 1)
        signal.alarm(RUN_SECONDS)
        try:
            print(run(unit, stop, edits), flush=True)
        except BaseException:  # noqa: BLE001 - told to the test, which fails with it
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
            os._exit(1)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8", errors="replace") as printed:
        out = printed.read()
    return {"status": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), "out": out}


def serve() -> None:
    import matplotlib.pyplot  # noqa: F401 - warm: what every run imports
    import scipy.special  # noqa: F401
    import course.datasets  # noqa: F401
    for line in sys.stdin:
        print(json.dumps(forked(*json.loads(line))), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        print(run(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]) if len(sys.argv) > 3 else []))
