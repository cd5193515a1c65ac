"""The mutation audit again, graded the way a submission is: from outside the kernel.

tests/autograder/test_mutation_audit.py runs every check on the reference and on every
catalogued mutant in-process. Graded for credit, every check runs outside the student's
kernel and sees the student's objects through ``autograder.remote``, where data travels as
copies. This module runs those checks on the
same classes living in a kernel, and asks for the same verdicts: the reference passes every
check, and each mutant fails every check that catches it in-process, naming its bug.
A check that is blind from outside (a write into an array the student's code was handed,
a dict that must stay the student's own object) shows up here as a mutant that escapes.
"""
from __future__ import annotations

import pytest
from kernels import agent_kernel

from autograder.audit import audit_mutant
from autograder.integrity import trusting
from autograder.mutants import Mutant, catalogue
from autograder.registry import CHECKS, SECONDS_PER_CHECK, Check
from autograder.remote.proxy import Session
from course.testing.failure import CheckFailure

REMOTE = list(CHECKS.values())
MUTANTS = [m for m in catalogue() if any(m.target in check.targets for check in REMOTE)]
# Run in the kernel once: what puts a mutant (or the reference) under a check's names.
SETUP = '''
from autograder.audit import reference as _reference
from autograder.mutants import catalogue as _catalogue

_MUTANTS = {_m.name: _m.cls for _m in _catalogue()}


def _use(names, mutant=None, target=None):
    globals().update({name: _reference(name) for name in names})
    if mutant is not None:
        globals()[target] = _MUTANTS[mutant]
'''


@pytest.fixture(scope="module")
def kernel():
    with agent_kernel(SETUP) as started:
        yield started


def remote_failure(kernel, check: Check, mutant: Mutant | None = None) -> str | None:
    """The failure message of ``check`` graded from outside on the kernel's classes (the
    reference's, with ``mutant`` in its target's place), or None if it passes."""
    client, channel = kernel
    arguments = repr(list(check.targets))
    if mutant is not None:
        arguments += f", {mutant.name!r}, {mutant.target!r}"
    reply = client.execute_interactive(f"_use({arguments})", timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
    session = Session(channel, SECONDS_PER_CHECK, 2 * SECONDS_PER_CHECK)
    try:
        classes = [session.lookup(name) for name in check.targets]
        with trusting(classes):
            check.run(*classes)
    except CheckFailure as failure:
        return str(failure)
    finally:
        session.release()
    return None


def test_the_reference_passes_every_check_graded_from_outside(kernel):
    failures = {check.name: remote_failure(kernel, check) for check in REMOTE}
    assert {name: message for name, message in failures.items() if message} == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_mutant_fails_from_outside_where_it_fails_in_process(kernel, mutant):
    expected = audit_mutant(mutant)
    messages = {check.name: remote_failure(kernel, check, mutant) for check in REMOTE
                if check.name in expected.caught_by}
    assert [name for name, message in messages.items() if message is None] == []
    if expected.diagnosed:
        assert any(mutant.diagnosis.lower() in m.lower() for m in messages.values()), messages
