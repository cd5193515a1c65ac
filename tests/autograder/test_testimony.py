"""No point rests on what the student's kernel says about itself (``autograder.testimony``).

A check may read the kernel's testimony (the warnings a call raised, the logs of the grader's
spies and recorders, the modules and cells a notebook uses) to explain a failure, never to
pass. Three proofs, over every check:

- only ``autograder/testimony.py`` names the testimony the agent and the doubles give, so no
  check can read it without declaring it (``@check(hears=...)``, enforced as it is read);
- a lying kernel, with the agent's testimony operations and the doubles' logs replaced the way
  a submission can replace them (``LIAR``), gets every check's honest verdict: the reference
  and every variant pass whatever the kernel claims (no warning, a forged warning, an empty
  log), and every catalogued bug a check catches still fails when the kernel hands over the
  reference's own testimony (no warning, the spies' log of the reference's run);
- each check reads exactly the kinds it declares.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder import testimony
from autograder.audit_remote import agent_kernel, remote_failure
from autograder.mutants import catalogue, variants
from autograder.registry import CHECKS

PACKAGE = Path(testimony.__file__).parent
# The files that define testimony (the kernel's side) and the one that reads it.
OWNERS = {PACKAGE / "testimony.py", PACKAGE / "remote" / "agent.py", PACKAGE / "remote" / "doubles.py"}
FORGED_WARNING = "RuntimeWarning: overflow encountered in exp (forged)"
# Run in the kernel after the agent is installed, as a submission could: every source of
# testimony (``testimony.OPS``, ``testimony.LOGS``) answers as ``_LIE["mode"]`` says. In
# "replay", each double tells what the double built in the same order during the last
# "record" run told at its end: the spies' log of the reference's run.
LIAR = '''
_LIE = {"mode": "honest", "made": [], "told": [], "served": set()}
_HONEST = {}


def _forged(kind, told):
    _LIE["served"].add(kind)
    if _LIE["mode"] == "honest":
        return told
    return [FORGED_WARNING] if _LIE["mode"] == "alarm" and kind == "warnings" else []


def _lying_op(name, kind, honest):
    if name == "warned":
        def lying(function, args, kwargs):
            value, caught = honest(function, args, kwargs)
            return value, _forged(kind, caught)
    else:
        def lying(*args):
            return _forged(kind, honest(*args))
    return lying


def _lying_log(method, honest):
    def lying(self, *args):
        _LIE["served"].add("log")
        if _LIE["mode"] == "replay":
            k = next((i for i, made in enumerate(_LIE["made"]) if made is self), len(_LIE["told"]))
            return _LIE["told"][k][method] if k < len(_LIE["told"]) else []
        return [] if _LIE["mode"] == "alarm" else honest(self, *args)
    return lying


def _made(init):
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _LIE["made"].append(self)
    return __init__


def _LIE_MODE(mode):
    """Lie as ``mode`` says from now on; leaving "record", keep what the doubles told."""
    if _LIE["mode"] == "record":
        _LIE["told"] = [{method: honest(made) for method, honest in _HONEST[type(made)].items()}
                        for made in _LIE["made"]]
    _LIE.update(mode=mode, made=[])


for _name, _kind in OPS.items():
    setattr(_minitorch_grader_agent, "op_" + _name,
            _lying_op(_name, _kind, getattr(_minitorch_grader_agent, "op_" + _name)))
for _double, _methods in LOGS.items():
    _cls = _minitorch_grader_agent.doubles[_double]
    _HONEST[_cls] = {_method: getattr(_cls, _method) for _method in _methods}
    _cls.__init__ = _made(_cls.__init__)
    for _method in _methods:
        setattr(_cls, _method, _lying_log(_method, _HONEST[_cls][_method]))
'''
MUTANTS = catalogue()
VARIANTS = variants()


def _named_testimony(tree: ast.AST) -> list[str]:
    """Where a module names the agent's testimony operations, its ``warned`` or a double's
    log method (``testimony.OPS``, ``testimony.LOGS``)."""
    methods = {method for names in testimony.LOGS.values() for method in names}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "send" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in testimony.OPS:
            found.append(f"line {node.lineno}: send({node.args[0].value!r})")
        if isinstance(node, ast.Attribute) and node.attr in methods:
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and any(a.name == "warned" for a in node.names):
            found.append(f"line {node.lineno}: import of warned")
    return found


def test_only_the_testimony_module_reads_the_kernels_testimony():
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path not in OWNERS:
            found = _named_testimony(ast.parse(path.read_text(encoding="utf-8")))
            if found:
                readers[str(path.relative_to(PACKAGE))] = found
    assert readers == {}


def test_a_check_that_reads_testimony_it_does_not_declare_is_a_grader_bug():
    with testimony.hearing(frozenset()):
        assert testimony.heard("modules", ["numpy"]) == ["numpy"]     # a tripwire: every check
        with pytest.raises(testimony.UndeclaredTestimony, match="hears=\\('log',\\)"):
            testimony.heard("log", [])
    with testimony.hearing(frozenset({"log"})):
        assert testimony.heard("log", [("forward", 0, None)]) == [("forward", 0, None)]


@pytest.fixture(scope="module")
def liar():
    with agent_kernel() as started:
        _run(started, f"OPS, LOGS, FORGED_WARNING = {testimony.OPS!r}, {testimony.LOGS!r}, "
                      f"{FORGED_WARNING!r}\n" + LIAR)
        yield started


@pytest.fixture(scope="module")
def caught(in_process_verdict) -> dict[str, list]:
    """For each check, the catalogued bugs it catches in-process."""
    found: dict[str, list] = {name: [] for name in CHECKS}
    for mutant in MUTANTS:
        for name in in_process_verdict(mutant).caught_by:
            found[name].append(mutant)
    return found


def _run(kernel, code: str) -> str:
    """Run ``code`` in the kernel; what it printed."""
    printed: list[str] = []

    def keep(message: dict) -> None:
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])
    reply = kernel[0].execute_interactive(code, timeout=60, output_hook=keep)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(printed)


def _lying(mode: str) -> str:
    """Code that makes the kernel lie as ``mode`` says, run before the classes are put in place."""
    return f"_LIE_MODE({mode!r})\n"


@pytest.mark.parametrize("check", list(CHECKS.values()), ids=list(CHECKS))
def test_a_lying_kernel_gets_the_honest_verdict_of_every_check(liar, caught, check):
    assert remote_failure(liar, check, before="_LIE['served'].clear()\n" + _lying("record")) is None
    for mutant in caught[check.name]:
        assert remote_failure(liar, check, mutant, before=_lying("replay")) is not None, (
            f"{mutant.name} passes {check.name} when the kernel tells the reference's testimony")
    assert remote_failure(liar, check, before=_lying("alarm")) is None, \
        "a forged warning or log failed the reference"
    for variant in VARIANTS:
        if variant.target in check.targets:
            assert remote_failure(liar, check, variant) is None, variant.name
    served = _run(liar, "print(*sorted(_LIE['served'])); _LIE.update(mode='honest')").split()
    assert set(served) == check.hears, "the testimony a check reads is the testimony it declares"
