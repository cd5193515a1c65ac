"""Collect the mutation audit's verdicts and print its table at the end of the run; give
tests a short time limit for students' endless loops."""
from __future__ import annotations

import pytest
from workers import print_at_end

from autograder import audit, registry

_VERDICTS: list[audit.Verdict] = []


@pytest.fixture
def audit_verdicts() -> list[audit.Verdict]:
    return _VERDICTS


@pytest.fixture
def timed_out(monkeypatch) -> str:
    """Stop a student's code after 0.3 s of computing; what the check then says (on a busy
    machine the wall-clock backstop, 0.6 s, may come first: the message then says so)."""
    monkeypatch.setattr(registry, "SECONDS_PER_CHECK", 0.3)
    return "did not finish within"


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _VERDICTS:
        print_at_end(session.config, "mutation audit", audit.table(_VERDICTS))
