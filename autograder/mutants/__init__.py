"""A catalogue of buggy implementations that the checks must catch (the mutation audit).

Each family module defines ``MUTANTS``: ``Mutant(name, target, cls, diagnosis)``,
where ``target`` is the class it stands in for (the name checks use for their
parameters) and ``diagnosis`` a phrase the failure message must contain, or
None when no signature applies (the mutant must still be caught). A mutant costs
the one hidden cell of its part in its own notebook (``autograder.audit_cells``);
``also`` lists the deliberate exceptions, each cell with its reason. A module may
also define ``VARIANTS``: implementations that compute the right values another
way (PyTorch's idioms), or whose only flaw shows in what the kernel reports about
itself (a warning, a count of calls), which decides no point: every check must
pass them.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    target: str
    cls: type
    diagnosis: str | None
    bug: str
    # One mistake costs one cell: the cells of its own unit a mutant fails beyond the one of
    # its part, each with the reason (tests/autograder/test_cascade.py holds every mutant to it).
    also: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Variant:
    name: str
    target: str
    cls: type
    story: str      # how it differs from the reference, and why that earns the same points


def _families() -> list:
    return [importlib.import_module(f"{__name__}.{module.name}")
            for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_")]


def catalogue() -> list[Mutant]:
    """Every mutant of every family module."""
    return [mutant for family in _families() for mutant in family.MUTANTS]


def variants() -> list[Variant]:
    """Every variant of every family module: each must pass every check."""
    return [variant for family in _families() for variant in getattr(family, "VARIANTS", ())]
