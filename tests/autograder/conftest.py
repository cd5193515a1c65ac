"""The mutation audit's in-process verdicts, computed once a session, and its table printed at
the end of the run; a short time limit for students' endless loops."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from workers import print_at_end

from autograder import audit, registry
from autograder.mutants import Mutant

_VERDICTS: list[audit.Verdict] = []


@pytest.fixture(scope="session")
def in_process_verdict() -> Callable[[Mutant], audit.Verdict]:
    """``audit.audit_mutant``, once a session per mutant: the mutation audit judges the
    verdicts, and the remote audit and the testimony test compare theirs with them
    (tests/workers.py keeps the three files on one worker)."""
    verdicts: dict[str, audit.Verdict] = {}

    def verdict(mutant: Mutant) -> audit.Verdict:
        if mutant.name not in verdicts:
            verdicts[mutant.name] = audit.audit_mutant(mutant)
        return verdicts[mutant.name]
    return verdict


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
