"""nbgrader's ``Validator`` over every unit, in parallel worker processes.

The Validator executes a notebook in a fresh kernel and reports the grade cells
that fail (or, inverted, pass). A source notebook must come back with no
complaint even with ``validate_all`` (every code cell, not only grade cells, must
run without an error or stderr output), the setting of the students' Validate
button (see ``autograder.pipeline.term.bundle``); a release notebook, validated with
``invert=True``, may only report hidden-test cells as passing (they hold a comment
until grading), since every visible test stops at a stub. Each kernel uses one core, so two workers halve the
wall time on a two-core machine.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from autograder.notebooks.units import Unit

Result = dict[str, list[dict[str, str]]]   # nbgrader's: "failed" / "passed" / "changed" -> cells


def validate(path: Path, invert: bool = False) -> Result:
    """nbgrader's verdict on one notebook (``{}`` when it has nothing to report); plain
    validation looks at every cell, as the students' Validate button does."""
    from nbgrader.validator import Validator

    return Validator(invert=invert, validate_all=not invert).validate(str(path))


def validate_units(units: list[Unit], workers: int = 2) -> dict[tuple[str, str], Result]:
    """``(unit name, "source" | "release") -> result`` for every unit: the source notebook
    validated plainly (every cell), the release notebook inverted."""
    jobs = {(unit.name, "source"): (unit.source, False) for unit in units}
    jobs |= {(unit.name, "release"): (unit.release, True) for unit in units}
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = {key: pool.submit(validate, path, invert) for key, (path, invert) in jobs.items()}
        return {key: future.result() for key, future in futures.items()}
