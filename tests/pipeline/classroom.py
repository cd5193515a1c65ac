"""What the pipeline tests share: the students whose feedback the session renders, and
``nbgrader`` run as an instructor or a student would run it.

(Imported as ``classroom``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autograder.pipeline.course import tool_env

NBGRADER = str(Path(sys.executable).parent / "nbgrader")

# Feedback takes about a second per notebook: the tests render it for these students
# in units 01-03 (the demo renders every submission's).
FEEDBACK_UNITS = ["01_setup", "02_gradients", "03_module_linear"]
FEEDBACK_STUDENTS = ["reference", "release", "bug-linear-weight-grad-transposed",
                     "bug-numerical-gradient-not-restoring-x", "bad-corrupted-json",
                     "bad-loop-in-method", "bad-prints-50mb"]


def nbgrader(cwd: Path, *args: str, check: bool = True, home: Path | None = None
             ) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in ``cwd``; with ``home``, as a student whose home that is (nbgrader
    keeps each student's submissions in their own Jupyter data folder, to find feedback)."""
    own = {"HOME": str(home), "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter")} if home else {}
    done = subprocess.run([NBGRADER, *args], cwd=cwd, env=tool_env(own), capture_output=True,
                          text=True, timeout=120, check=False)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done
