"""What a catalogued bug costs in its own notebook: the hidden cells it fails there.

``autograder.audit`` runs every check that takes a mutant's target with the mutant in its
place and the reference everywhere else. A student's notebook differs in two ways, and
``cells`` grades a mutant as the notebook would:

- a unit grades its own code: a later unit gets earlier code as read-only provided cells,
  so a bug in unit 3's ``Linear`` costs nothing in unit 9, whose ``Linear`` is provided.
  The mutant's unit is the one whose hidden cells take its target and do not get it
  provided (``unit_of``); only that unit's cells count.
- the notebook's other graded code is built on the buggy part (``BUILT_ON``): ``AdamW``
  subclasses the student's ``Adam``, the six schedules the student's ``LRScheduler``,
  ``fit`` calls the student's ``train_epoch`` and ``evaluate``, ``TensorMLP`` makes the
  student's ``Tensor``s, ``Conv2d`` calls the student's ``im2col`` and ``col2im``, ``sample`` the student's
  ``next_token_probabilities``, ``TransformerBlock`` is made of the student's ``LayerNorm`` and
  of a ``MultiheadAttention`` on their attention and heads. Those
  are rebuilt on the mutant, so a check that leans on another
  cell's work shows what that work costs it.

One mistake should cost one cell: ``tests/autograder/test_cascade.py`` holds every mutant
to the cells of its own part, with the deliberate exceptions each mutant lists
(``Mutant.also``) and their reasons.
"""
from __future__ import annotations

import functools
import re
from typing import Callable

from autograder import verdicts
from autograder.audit import run
from autograder.mutants import Mutant
from autograder.mutants._solutions import solution_with
from autograder.notebooks.lint import BEGIN_HIDDEN, END_HIDDEN, HIDDEN_CALL, regions
from autograder.notebooks.units import ROOT, minitorch, read, units
from autograder.registry import CHECKS
from minitorch_ref import optim

DEFINES = re.compile(r"^(?:class|def) (\w+)\b", re.MULTILINE)


def _subclass(reference: type) -> Callable[[object], type]:
    """The notebook's subclass of a buggy base: ``reference``'s own methods, the base's for
    the rest (``class AdamW(Adam)`` in a notebook whose Adam is the mutant)."""
    return lambda base: type(reference.__name__, (reference, base), {})


def _on(name: str, replaced: str) -> Callable[[object], object]:
    """The notebook's own ``name`` (its solution cells) built on, or calling, the mutant
    where it uses ``replaced``: its schedules subclass it, its fit calls it."""
    return lambda mutant: solution_with(name, **{replaced: mutant})


SCHEDULES = ("StepLR", "ExponentialLR", "LambdaLR", "LinearLR", "CosineAnnealingLR",
             "WarmupCosineLR")
# target: {the notebook's graded code built on it: how to rebuild it on a mutant}
BUILT_ON: dict[str, dict[str, Callable[[object], object]]] = {
    "Adam": {"AdamW": _subclass(optim.AdamW)},
    "LRScheduler": {name: _on(name, "LRScheduler") for name in SCHEDULES},
    "train_epoch": {"fit": _on("fit", "train_epoch")},
    "evaluate": {"fit": _on("fit", "evaluate")},
    "Tensor": {"TensorMLP": _on("TensorMLP", "Tensor")},
    "im2col": {"Conv2d": _on("Conv2d", "im2col")},
    "col2im": {"Conv2d": _on("Conv2d", "col2im")},
    "next_token_probabilities": {"sample": _on("sample", "next_token_probabilities")},
    **{part: {"TransformerBlock": _on("TransformerBlock", part)}
       for part in ("LayerNorm", "ScaledDotProductAttention", "split_heads", "merge_heads")},
}


@functools.cache
def hidden_calls() -> dict[str, tuple[str, ...]]:
    """Every unit's hidden cells: unit -> the checks they call, in notebook order."""
    found = {}
    for unit in units(ROOT):
        found[unit.name] = tuple(
            call.group("name") for cell in read(unit.source).cells if cell.cell_type == "code"
            for block in regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)[0] for line in block
            if (call := HIDDEN_CALL.match(line.strip())))
    return found


@functools.cache
def provided_names() -> dict[str, frozenset[str]]:
    """unit -> the classes and functions its provided (read-only, earlier units') cells define."""
    return {unit.name: frozenset(name for cell in read(unit.source).cells
                                 if cell.cell_type == "code" and "provided_from" in minitorch(cell)
                                 for name in DEFINES.findall(cell.source))
            for unit in units(ROOT)}


def unit_of(target: str) -> str:
    """The unit where the student writes ``target``: its hidden cells take it, unprovided."""
    found = [unit for unit, checks in hidden_calls().items()
             if target not in provided_names()[unit]
             and any(target in CHECKS[name].targets for name in checks)]
    if len(found) != 1:
        raise LookupError(f"{target} is graded as the student's own in {found or 'no unit'}")
    return found[0]


def replaced(mutant: Mutant) -> dict[str, object]:
    """The mutant in its target's place, and the notebook's code built on it."""
    built = BUILT_ON.get(mutant.target, {})
    return {mutant.target: mutant.cls, **{name: make(mutant.cls) for name, make in built.items()}}


def cells(mutant: Mutant) -> dict[str, str]:
    """The hidden cells of its unit that ``mutant`` fails, as a notebook built on it: check
    name -> failure message."""
    classes = replaced(mutant)
    verdicts.clear()      # a fresh submission: no verdict of an earlier run excuses anything
    failures = {}
    for name in hidden_calls()[unit_of(mutant.target)]:
        check = CHECKS[name]
        given = {k: v for k, v in classes.items() if k in check.targets}
        if given and (message := run(check, given, alone=False)) is not None:
            failures[name] = message
    return failures
