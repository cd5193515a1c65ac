"""The verdicts a submission's checks have reached: what an excuse in a later cell rests on.

A cell may forgive a mistake that another of the student's parts explains (a wrong backward
rule is its operation cell's, not the engine's). Which part is wrong is what that part's own
cell found: its check graded it on inputs the grader chose, where a wrong answer costs that
cell. Asking the kernel again, on a probe of the grader's own (fixed leaves, the array just
given to a layer), lets code that recognises the probe answer it wrongly and be forgiven where
it is graded. So ``registry`` records every check's verdict here, and a check asks ``failed``.
A check may also ``keep`` what the student's code returned to it on an input a later cell
builds on (unit 13's im2col on the very images its Conv2d cells convolve): graded there, where
a wrong answer costs that cell, it is what the later cell's excuse computes with (``kept``),
never a second call.

Verdicts are kept per submission: under the kernel's channel for a check graded from outside
(a job grades one submission, its hidden cells in the notebook's order), under the object
graded for a check run in this process (an audit's mutant, a test's class).
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable

from autograder.remote.proxy import Remote

_FOUND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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


def passed(graded: object, check: str) -> bool:
    """Whether ``check`` has graded ``graded`` (its submission) and passed."""
    try:
        return _FOUND.get(_subject(graded), {}).get(check) is True
    except TypeError:
        return False


def keep(graded: object, check: str, key: object, value: object) -> None:
    """What ``graded`` returned to ``check`` on the input ``key`` names (a value of the
    grader's own, converted from the kernel's answer), for a later cell's excuse."""
    try:
        _KEPT.setdefault(_subject(graded), {})[check, key] = value
    except TypeError:
        pass


def kept(graded: object, check: str, key: object) -> object | None:
    """What ``check`` kept of ``graded``'s answer on ``key`` (None if it kept nothing)."""
    try:
        return _KEPT.get(_subject(graded), {}).get((check, key))
    except TypeError:
        return None


def forget(graded: object) -> None:
    """Drop every verdict reached on ``graded``'s submission, and what its checks kept (an
    audit judges each check alone, as a fresh submission)."""
    for store in (_FOUND, _KEPT):
        try:
            store.pop(_subject(graded), None)
        except TypeError:
            pass


def clear() -> None:
    """Drop every verdict and kept answer (an in-process audit starts a fresh submission)."""
    _FOUND.clear()
    _KEPT.clear()
