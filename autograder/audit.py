"""The mutation audit: every check against every reference class, every mutant and variant.

``python -m autograder.audit`` prints the table: each mutant, the checks that
caught it, and whether a failure message named its bug; then each variant (a
correct implementation another way), which must pass every check.
"""
from __future__ import annotations

from dataclasses import dataclass

import autograder.checks  # noqa: F401  (registers every check)
from autograder import verdicts
from course.testing.failure import CheckFailure
from autograder.integrity import trusting
from autograder.mutants import Mutant, Variant, catalogue, variants
from autograder.mutants._answers import NAME, answer
from autograder.mutants._solutions import solution
from autograder.registry import CHECKS, Check
import minitorch_ref
from minitorch_ref import autograd, data, gradcheck, nn, optim
from minitorch_ref.nn import init, utils
from minitorch_ref.optim import lr_scheduler

_NAMESPACES = (nn, optim, lr_scheduler, data, gradcheck, autograd, init, utils)


def reference(name: str) -> object:
    """The reference class (or function) a check parameter is named after: from
    ``minitorch_ref``'s subpackages, else the source notebook's solution, else ``minitorch_ref``
    itself (``manual_seed``, which seeds the generator the reference classes draw from); for
    a question's ``answer_<unit>_<key>``, the source notebook's answer."""
    for namespace in _NAMESPACES:
        if hasattr(namespace, name):
            return getattr(namespace, name)
    try:
        return solution(name)
    except LookupError:
        if hasattr(minitorch_ref, name):
            return getattr(minitorch_ref, name)
        if NAME.match(name):
            return answer(name)
        raise


def run(check: Check, replace: dict[str, object] | None = None, alone: bool = True) -> str | None:
    """Run ``check`` on the reference classes (some replaced); the failure message or None.
    ``alone``: as a fresh submission's only cell (no verdict a check reached before excuses
    anything, ``autograder.verdicts``); else after the cells run before it."""
    classes = {name: reference(name) for name in check.targets}
    classes.update(replace or {})
    if alone:
        verdicts.clear()
    with trusting(classes.values()):
        try:
            check.run(**classes)
        except CheckFailure as failure:
            return str(failure)
    return None


@dataclass
class Verdict:
    mutant: Mutant
    caught_by: list[str]
    messages: list[str]

    @property
    def diagnosed(self) -> bool | None:
        if self.mutant.diagnosis is None:
            return None
        return any(self.mutant.diagnosis.lower() in m.lower() for m in self.messages)


def audit_mutant(mutant: Mutant) -> Verdict:
    verdict = Verdict(mutant, [], [])
    for check in CHECKS.values():
        if mutant.target in check.targets:
            message = run(check, {mutant.target: mutant.cls})
            if message is not None:
                verdict.caught_by.append(check.name)
                verdict.messages.append(message)
    return verdict


def variant_failures(variant: Variant) -> dict[str, str]:
    """The checks a variant fails (must be empty), with their messages."""
    failures = {check.name: run(check, {variant.target: variant.cls})
                for check in CHECKS.values() if variant.target in check.targets}
    return {name: message for name, message in failures.items() if message is not None}


def reference_failures() -> dict[str, str]:
    """Checks that fail on the reference itself (must be empty)."""
    failures = {name: run(c) for name, c in CHECKS.items()}
    return {name: message for name, message in failures.items() if message is not None}


def table(verdicts: list[Verdict]) -> str:
    rows = [f"{'mutant':40s} {'caught by':45s} diagnosis"]
    for v in verdicts:
        caught = ", ".join(v.caught_by) or "NOT CAUGHT"
        if len(caught) > 45:
            caught = caught[:42] + "..."
        named = {True: "right", False: "WRONG", None: "(none expected)"}[v.diagnosed]
        rows.append(f"{v.mutant.name:40s} {caught:45s} {named}")
    caught = sum(bool(v.caught_by) for v in verdicts)
    diagnosable = [v for v in verdicts if v.diagnosed is not None]
    rows.append(f"\n{caught}/{len(verdicts)} mutants caught; "
                f"{sum(bool(v.diagnosed) for v in diagnosable)}/{len(diagnosable)} diagnosed "
                f"right; {len(CHECKS)} checks.")
    return "\n".join(rows)


def variant_table(found: dict[str, dict[str, str]]) -> str:
    rows = [f"\n{'variant':40s} verdict"]
    rows += [f"{name:40s} {'FAILS ' + ', '.join(failed) if failed else 'passes every check'}"
             for name, failed in found.items()]
    return "\n".join(rows)


def main() -> None:
    failures = reference_failures()
    for name, message in failures.items():
        print(f"REFERENCE FAILS {name}:\n{message}\n")
    print(table([audit_mutant(m) for m in catalogue()]))
    print(variant_table({v.name: variant_failures(v) for v in variants()}))


if __name__ == "__main__":
    main()
