"""Every call a check makes into the student's code is graded: none is a probe.

A probe is a call whose answer decides only whether to forgive, never a score: the reference
passes the check even when that call fails. The kernel sees every input, so code that
recognises a probe answers it wrongly and is forgiven where it is graded (unit 12's one-operation
graph on leaves 1.0 and 2.0 earned +2). An excuse rests on the upstream cell's own verdict
or on what that cell kept of the answers it graded (``autograder.verdicts``), or on what the
graded call itself returned (docs/how-it-works.md, "An
excuse rests on a verdict already reached"). For every registered check, each call site (what
``autograder.sandbox.call`` names) is made to fail in turn, as the student's code raising there
would: the reference must then fail the check. None is left (issue 47, item 3: the last ones
were units 3, 6, 9, 12, 13 and 14's); a new one fails here.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable

import pytest

import autograder.checks  # noqa: F401  (registers every check)
from autograder import audit, sandbox
from autograder.registry import CHECKS
from course.testing.failure import fail

REAL = sandbox.call


def _verdict_with(name: str, replacement: Callable) -> str | None:
    """Check ``name`` on the reference, every ``call`` of the grader's modules routed through
    ``replacement`` (also in a module first imported while another replacement was in place)."""
    replacement.probe_test = True
    modules = [module for module_name, module in list(sys.modules.items())
               if module_name.split(".")[0] in ("autograder", "course") and (
                   getattr(module, "call", None) is REAL
                   or getattr(getattr(module, "call", None), "probe_test", False))]
    for module in modules:
        module.call = replacement
    try:
        return audit.run(CHECKS[name])
    finally:
        for module in modules:
            module.call = REAL


def _site(what: str) -> str:
    """A call's description without the memory addresses some reprs hold."""
    return re.sub(r" at 0x[0-9A-Fa-f]+", "", what)


def _sites(name: str) -> list[str]:
    """The call sites check ``name`` goes through on the reference, in order."""
    seen: list[str] = []

    def recording(what: str, function: Callable, *args, **kwargs):
        seen.append(_site(what))
        return REAL(what, function, *args, **kwargs)
    assert _verdict_with(name, recording) is None
    return list(dict.fromkeys(seen))


def _passes_without(name: str, site: str) -> bool:
    """Whether the reference passes check ``name`` when every call at ``site`` raises."""
    def refusing(what: str, function: Callable, *args, **kwargs):
        if _site(what) == site:
            fail(f"{what} raised RuntimeError: refused (a probe test)")
        return REAL(what, function, *args, **kwargs)
    return _verdict_with(name, refusing) is None


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_every_call_into_the_students_code_is_graded(name):
    probes = [site for site in _sites(name) if _passes_without(name, site)]
    assert probes == [], (f"{name} passes the reference when these calls into the student's "
                          "code fail: they decide no score, only an excuse, which must rest on a "
                          "verdict (autograder.verdicts) instead")


def test_a_probe_is_found():
    """The old deep-graph check's probe, put back, is what this test reports."""
    from autograder.checks import autograd_engine
    from course.testing.failure import CheckFailure

    def probe_then_compare(Tensor, topological_order):
        a = autograd_engine.make_leaf(Tensor, "a", autograd_engine.np.array(1.0))
        try:
            sandbox.call("backward() of one operation", (a * 2.0).backward)
        except CheckFailure:
            return
    CHECKS["_probe_example"] = CHECKS["tensor_deep_graph"].__class__(
        "_probe_example", probe_then_compare, ("Tensor", "topological_order"))
    try:
        assert _sites("_probe_example")[-1] == "backward() of one operation"
        assert _passes_without("_probe_example", "backward() of one operation")
    finally:
        del CHECKS["_probe_example"]
