"""Collect the mutation audit's verdicts and print its table at the end of the run."""
from __future__ import annotations

import pytest

from autograder import audit

_VERDICTS: list[audit.Verdict] = []


@pytest.fixture
def audit_verdicts() -> list[audit.Verdict]:
    return _VERDICTS


def pytest_terminal_summary(terminalreporter):
    if _VERDICTS:
        terminalreporter.section("mutation audit")
        terminalreporter.write_line(audit.table(_VERDICTS))
