"""What the pipeline tests share: the students whose feedback the session renders, and
``nbgrader`` run as an instructor or a student would run it.

(Imported as ``classroom``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.pipeline.course import tool_env
from autograder.pipeline.job import runner

# Feedback takes about a second per notebook: the tests render it for these students
# in units 01-03 (the demo renders every submission's).
FEEDBACK_UNITS = ["01_setup", "02_gradients", "03_module_linear"]
FEEDBACK_STUDENTS = ["reference", "release", "bug-linear-weight-grad-transposed",
                     "bug-numerical-gradient-not-restoring-x", "bad-corrupted-json",
                     "bad-loop-in-method", "bad-prints-50mb"]


@dataclass(frozen=True)
class Ran:
    code: int | None        # None: stopped at the time limit
    output: str             # what it printed, stdout and stderr as they came


def nbgrader(cwd: Path, *args: str, check: bool = True, home: Path | None = None) -> Ran:
    """``nbgrader ARGS`` in ``cwd``; with ``home``, as a student whose home that is (nbgrader
    keeps each student's submissions in their own Jupyter data folder, to find feedback).

    It runs as the ``nbgrader`` command does (its ``main``, in a process of its own, with the
    command's environment), forked from the pipeline's fork server, which has imported nbgrader
    already (``autograder.pipeline.job.runner``): 2-4 s of imports less per command."""
    own = {"HOME": str(home), "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter")} if home else {}
    done = Ran(*runner.run_captured(list(args), cwd, tool_env(own), timeout=120))
    if check:
        assert done.code == 0, done.output
    return done
