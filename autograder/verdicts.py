"""The verdicts a submission's checks have reached: what an excuse in a later cell rests on.

A cell may forgive a mistake that another of the student's parts explains (a wrong backward
rule is its operation cell's, not the engine's). Which part is wrong is what that part's own
cell found: its check graded it on inputs the grader chose, where a wrong answer costs that
cell. Asking the kernel again, on a probe of the grader's own (fixed leaves, the array just
given to a layer), lets code that recognises the probe answer it wrongly and be forgiven where
it is graded. So ``registry`` records every check's verdict here, and a check asks ``failed``.

Verdicts are kept per submission: under the kernel's channel for a check graded from outside
(a job grades one submission, its hidden cells in the notebook's order), under the object
graded for a check run in this process (an audit's mutant, a test's class).
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable

from autograder.remote.proxy import Remote

_FOUND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _subject(graded: object) -> object:
    """What the verdicts on ``graded`` are kept under: its kernel's channel, or itself."""
    return graded._session.channel if isinstance(graded, Remote) else graded


def record(graded: Iterable[object], check: str, passed: bool) -> None:
    """``check`` passed (or failed) on the objects ``graded``."""
    for value in graded:
        try:
            _FOUND.setdefault(_subject(value), {})[check] = passed
        except TypeError:       # a plain value (an answer): no later cell is excused by it
            pass


def failed(graded: object, check: str) -> bool:
    """Whether ``check`` has graded ``graded`` (its submission) and failed."""
    try:
        return _FOUND.get(_subject(graded), {}).get(check) is False
    except TypeError:
        return False


def forget(graded: object) -> None:
    """Drop every verdict reached on ``graded``'s submission (an audit judges each check
    alone, as a fresh submission)."""
    try:
        _FOUND.pop(_subject(graded), None)
    except TypeError:
        pass
