"""nbgrader's ``Validator`` verdict on a notebook that has run already, without running it again.

The Validator runs a notebook in a fresh kernel, then reads the outputs: grade cells that fail
(or, inverted, pass) and, with ``validate_all`` (the setting of the students' Validate button,
see ``autograder.pipeline.term.bundle``), every code cell that raised or wrote to stderr. ``judge``
keeps the reading and leaves out the running, so that one run of a notebook (nbval's, in
tests/notebooks/test_validation.py) answers both tools.
"""
from __future__ import annotations

from pathlib import Path

Result = dict[str, list[dict[str, str]]]   # nbgrader's: "failed" / "passed" / "changed" -> cells


def judge(path: Path, invert: bool = False) -> Result:
    """The Validator's verdict on the outputs ``path`` holds (``{}``: nothing to report); plain
    validation looks at every cell, as the students' Validate button does."""
    from nbgrader.preprocessors import CheckCellMetadata
    from nbgrader.validator import Validator

    return Validator(invert=invert, validate_all=not invert,
                     preprocessors=[CheckCellMetadata]).validate(str(path))
