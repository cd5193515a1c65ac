"""Source notebooks run top to bottom (nbval-lax) and pass nbgrader's validator within the
course's 30-second budget; in release notebooks every visible test fails on the stubs."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest
from nbgrader.validator import Validator

from autograder.notebooks.lint import code_lines, is_visible_test
from autograder.notebooks.units import ROOT

pytestmark = pytest.mark.notebooks

SECONDS_PER_NOTEBOOK = 30


class KeepingValidator(Validator):
    """nbgrader's Validator that also keeps the notebook it executed."""

    executed = None

    def _preprocess(self, nb):
        self.executed = super()._preprocess(nb)
        return self.executed


def test_source_notebook_runs_under_nbval_lax(unit, isolated_jupyter):
    command = [sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q",
               str(unit.source.relative_to(ROOT))]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_source_notebook_passes_the_validator_in_time(unit, isolated_jupyter):
    start = time.perf_counter()
    result = Validator().validate(str(unit.source))
    seconds = time.perf_counter() - start
    assert result == {}, result
    print(f"{unit}: executed and validated in {seconds:.1f} s")
    assert seconds <= SECONDS_PER_NOTEBOOK, f"{unit} took {seconds:.1f} s"


def test_release_notebook_fails_as_expected(unit, isolated_jupyter):
    """Inverted validation: only the hidden-test cells pass (they hold a comment until
    grading); every visible test raises NotImplementedError from a stub."""
    validator = KeepingValidator(invert=True)
    result = validator.validate(str(unit.release))
    assert set(result) <= {"passed"}, result
    passed = [cell["source"] for cell in result.get("passed", [])]
    assert all(not code_lines(source.splitlines()) for source in passed), passed
    tests = [cell for cell in validator.executed.cells if is_visible_test(cell)]
    assert tests, f"{unit} has no visible test"
    for cell in tests:
        errors = [out for out in cell.outputs if out.output_type == "error"]
        assert errors and errors[0].ename == "NotImplementedError", \
            f"{unit} visible test {cell.id} did not stop at a stub: {errors[:1] or 'it passed'}"
