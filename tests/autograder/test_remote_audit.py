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

from autograder.audit_remote import agent_kernel, remote_failure
from autograder.mutants import catalogue, variants
from autograder.registry import CHECKS

REMOTE = list(CHECKS.values())
MUTANTS = [m for m in catalogue() if any(m.target in check.targets for check in REMOTE)]
VARIANTS = variants()


@pytest.fixture(scope="module")
def kernel():
    with agent_kernel() as started:
        yield started


def test_the_reference_passes_every_check_graded_from_outside(kernel):
    failures = {check.name: remote_failure(kernel, check) for check in REMOTE}
    assert {name: message for name, message in failures.items() if message} == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_mutant_fails_from_outside_where_it_fails_in_process(kernel, mutant, in_process_verdict):
    expected = in_process_verdict(mutant)
    messages = {check.name: remote_failure(kernel, check, mutant) for check in REMOTE
                if check.name in expected.caught_by}
    assert [name for name, message in messages.items() if message is None] == []
    if expected.diagnosed:
        assert any(mutant.diagnosis.lower() in m.lower() for m in messages.values()), messages


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_variant_passes_every_check_from_outside(kernel, variant):
    failures = {check.name: remote_failure(kernel, check, variant) for check in REMOTE
                if variant.target in check.targets}
    assert {name: message for name, message in failures.items() if message} == {}, variant.story
