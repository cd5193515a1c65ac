"""The mutation audit: the checks pass the reference and every variant, and catch (and name)
every mutant."""
from __future__ import annotations

import pytest

from autograder import audit
from autograder.mutants import catalogue, variants

MUTANTS = catalogue()
VARIANTS = variants()


def test_every_check_passes_on_the_reference():
    assert audit.reference_failures() == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_and_named(mutant, audit_verdicts, in_process_verdict):
    verdict = in_process_verdict(mutant)
    audit_verdicts.append(verdict)
    assert verdict.caught_by, f"no check catches {mutant.name} ({mutant.bug})"
    assert verdict.diagnosed is not False, (
        f"{mutant.name} is caught but no message names it ('{mutant.diagnosis}'):\n"
        + "\n---\n".join(verdict.messages)
    )


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_variant_passes_every_check(variant):
    assert audit.variant_failures(variant) == {}, variant.story


def test_the_catalogue_is_large_and_names_are_unique():
    names = [m.name for m in MUTANTS + VARIANTS]
    assert len(names) == len(set(names))
    assert len(MUTANTS) >= 30
