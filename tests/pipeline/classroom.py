"""What the pipeline tests share: the students whose feedback the session renders.

(Imported as ``classroom``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

# Feedback takes about a second per notebook: the tests render it for these students
# in units 01-03 (the demo renders every submission's).
FEEDBACK_UNITS = ["01_setup", "02_gradients", "03_module_linear"]
FEEDBACK_STUDENTS = ["reference", "release", "bug-linear-weight-grad-transposed",
                     "bug-numerical-gradient-not-restoring-x", "bad-corrupted-json",
                     "bad-loop-in-method", "bad-prints-50mb"]
