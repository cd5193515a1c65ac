"""Fixtures for the notebook tests: the units, isolated Jupyter state, a scratch course.

Tests that start kernels (nbval, nbgrader's Validator, autograding) run with
IPython, Jupyter and matplotlib state in a temporary folder, so they neither
read nor change the user's. ``course_copy`` is a copy of ``source/`` and
``nbgrader_config.py`` in which ``release/`` has been generated afresh; the
release and autograding tests share it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.notebooks.release import release
from autograder.notebooks.units import ROOT, units

UNITS = units(ROOT)
JUPYTER_STATE = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "MPLCONFIGDIR")


def pytest_generate_tests(metafunc):
    """``unit`` parametrises a test over every unit of the course, by name."""
    if "unit" in metafunc.fixturenames:
        metafunc.parametrize("unit", UNITS, ids=[u.name for u in UNITS])


@pytest.fixture(scope="session")
def isolated_jupyter(tmp_path_factory) -> dict[str, str]:
    """Point Jupyter's and matplotlib's state at a temporary folder for the session."""
    state = tmp_path_factory.mktemp("jupyter-state")
    saved = {name: os.environ.get(name) for name in JUPYTER_STATE}
    for name in JUPYTER_STATE:
        os.environ[name] = str(state / name.lower())
    yield dict(os.environ)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def course_copy(tmp_path_factory, isolated_jupyter) -> Path:
    """A scratch course directory: ``source/`` and the config copied, ``release/`` regenerated."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "source", root / "source")
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    release(root)
    return root
