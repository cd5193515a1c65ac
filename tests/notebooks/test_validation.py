"""The tools students and instructors press: ``pytest --nbval-lax`` on every source notebook,
nbgrader's ``Validator`` on every source notebook (it passes, with every cell checked, as the
students' Validate button checks it) and, inverted, on every release notebook (only the empty
hidden-test cells "pass").

The graded run (test_execution.py) is stricter, but it runs inside the grading sandbox;
these run the notebooks in a plain kernel, as JupyterLab's Validate button and CI do.
Both use the machine's two cores: nbval through pytest-xdist (a notebook per worker), the
Validator through ``autograder.notebooks.validate``'s process pool.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.notebooks.lint import code_lines
from autograder.notebooks.units import ROOT, units
from autograder.notebooks.validate import validate_units

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="module")
def validated(isolated_jupyter):
    return validate_units(units(ROOT), workers=2)


def test_every_source_notebook_runs_under_nbval_lax(isolated_jupyter):
    paths = [str(unit.source.relative_to(ROOT)) for unit in units(ROOT)]
    command = [sys.executable, "-m", "pytest", "--nbval-lax", "-n", "2", "--dist", "loadfile",
               "-p", "no:cacheprovider", "-q", *paths]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_source_notebook_passes_the_validator(unit, validated):
    assert validated[unit.name, "source"] == {}


def test_release_notebook_fails_the_validator_as_expected(unit, validated):
    result = validated[unit.name, "release"]
    assert set(result) <= {"passed"}, result
    passed = [cell["source"] for cell in result.get("passed", [])]
    assert all(not code_lines(source.splitlines()) for source in passed), passed
