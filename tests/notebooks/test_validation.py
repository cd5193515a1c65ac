"""The tools students and instructors press: ``pytest --nbval-lax`` on every source notebook,
nbgrader's ``Validator`` on every source notebook (it passes, with every cell checked, as the
students' Validate button checks it) and, inverted, on every release notebook (only the empty
hidden-test cells "pass").

The graded run (test_execution.py) is stricter, but it runs inside the grading sandbox;
these run the notebooks in a plain kernel, as JupyterLab's Validate button and CI do, once
each: nbval runs every source notebook (two at a time, through pytest-xdist) and keeps it
as it ran (``executed_copies``), and the Validator judges that run; the release notebooks
run once in the student environment (tests/student_bundle.py), where the bundle test reads
the same run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.notebooks.lint import code_lines
from autograder.notebooks.units import ROOT, units
from autograder.notebooks.validate import judge

pytestmark = pytest.mark.notebooks

CELL_SECONDS = 30   # the Validator's own limit for a cell (nbgrader's Execute.timeout)


@pytest.fixture(scope="module")
def nbval(isolated_jupyter, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """nbval's run of every source notebook, and the folder of the notebooks as they ran."""
    ran = tmp_path_factory.mktemp("nbval-ran")
    paths = [str(unit.source.relative_to(ROOT)) for unit in units(ROOT)]
    command = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-cell-timeout",
               str(CELL_SECONDS), "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider",
               "-p", "executed_copies", "--executed-copies", str(ran), "-q", *paths]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    return done, ran


def test_every_source_notebook_runs_under_nbval_lax(nbval):
    done, _ = nbval
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_source_notebook_passes_the_validator(unit, nbval):
    _, ran = nbval
    assert judge(ran / unit.name / unit.source.name) == {}


def test_release_notebook_fails_the_validator_as_expected(unit, release_runs):
    result = release_runs[unit.name]["inverted"]
    assert set(result) <= {"passed"}, result
    passed = [cell["source"] for cell in result.get("passed", [])]
    assert all(not code_lines(source.splitlines()) for source in passed), passed
