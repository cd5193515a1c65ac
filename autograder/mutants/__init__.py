"""A catalogue of buggy implementations that the checks must catch (the mutation audit).

Each family module defines ``MUTANTS``: ``Mutant(name, target, cls, diagnosis)``,
where ``target`` is the class it stands in for (the name checks use for their
parameters) and ``diagnosis`` a phrase the failure message must contain, or
None when no signature applies (the mutant must still be caught).
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


def catalogue() -> list[Mutant]:
    """Every mutant of every family module."""
    mutants = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_"):
            continue
        mutants += importlib.import_module(f"{__name__}.{module.name}").MUTANTS
    return mutants
