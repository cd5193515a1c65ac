"""Soak tests: repetitions that hunt a rare failure (a stall, a lost message) run a few times
in the suite and their full count under ``--soak`` (``make soak``).

A soak test is marked ``@pytest.mark.soak(full=N, suite=n)`` and reads its count from the
``repetitions`` fixture; every assertion is the same in either run.
(Loaded as a plugin by tests/conftest.py: pytest puts tests/ on ``sys.path``.)
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true",
                     help="repeat soak tests their full count (make soak runs `-m soak --soak`)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "soak(full, suite): repeats `full` times under --soak, "
                                       "`suite` times otherwise (the `repetitions` fixture)")


@pytest.fixture
def repetitions(request: pytest.FixtureRequest) -> int:
    """How many times this soak test repeats what it tests."""
    mark = request.node.get_closest_marker("soak")
    if mark is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses `repetitions` without a soak mark")
    return mark.kwargs["full"] if request.config.getoption("soak") else mark.kwargs["suite"]
