"""What the pipeline tests share: the units, the students graded in the session, a tree hash.

(Imported as ``classroom``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import hashlib
from pathlib import Path

UNITS = ["01_setup", "02_gradients", "03_module_linear"]
# The graded session covers one bug of each kind of failure; test_mutants.py grades the rest.
FIRST_MUTANTS = ("numerical_gradient_not_restoring_x", "rel_error_no_floor",
                 "linear_assigns_grad", "linear_weight_grad_transposed")
# Feedback takes about a second per notebook: the tests render it for these students.
FEEDBACK_STUDENTS = ["reference", "release", "bug-linear-weight-grad-transposed",
                     "bug-numerical-gradient-not-restoring-x", "bad-corrupted-json",
                     "bad-loop-in-method", "bad-prints-50mb"]
CELL_TIMEOUT = 15   # seconds: above the checks' own 10 s limit, so their message shows


def tree_hash(folder: Path) -> str:
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        hasher.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            hasher.update(path.read_bytes())
    return hasher.hexdigest()
