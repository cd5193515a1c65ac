"""Fixtures for the notebook tests: ``unit`` parametrises a test over every unit of the course.

Tests that need kernels read the session's graded course (``graded_units`` in
tests/conftest.py): every unit generated afresh, the source notebooks handed in
by ``reference`` and the release notebooks by ``release``, graded once.
"""
from __future__ import annotations

from autograder.notebooks.units import ROOT, units

UNITS = units(ROOT)


def pytest_generate_tests(metafunc):
    """``unit`` parametrises a test over every unit of the course, by name."""
    if "unit" in metafunc.fixturenames:
        metafunc.parametrize("unit", UNITS, ids=[u.name for u in UNITS])
