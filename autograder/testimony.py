"""What the student's kernel says about itself: read here, to explain a failure, never to pass.

A check awards a point only for values it recomputes outside the kernel from inputs it chose:
outputs, gradients, parameters after steps, weights after an epoch. Whatever runs in the
kernel can lie, so what the kernel reports about itself is *testimony*, of four kinds
(``KINDS``): the floating-point warnings a call raised, the logs of the grader's spies and
recorders, the modules a class uses and the cells the notebook ran. Testimony may say why
values failed (``explain``: "Likely mistake: ..."); the two integrity kinds (``TRIPWIRES``) may
also refuse a submission that uses the reference, a tripwire, since the sandbox is what keeps the
reference out of reach. No testimony makes a check pass.

Every read goes through a reader here (``warnings_of``, ``log_of``, ``modules_of``,
``cells_of``), in a check that declares its kind (``@check(hears=...)``; the registry itself
hears the tripwires for every check). tests/autograder/test_testimony.py holds the grader to
it: no other module names the kernel's testimony, and a kernel whose testimony is forged
gets, on every check, the verdict of the honest kernel, for the reference and every
catalogued bug.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Callable, Iterator

from autograder.remote.agent import warned
from autograder.remote.errors import TimeLimitExceeded
from autograder.remote.proxy import Remote
from autograder.sandbox import call
from course.testing.failure import CheckFailure

KINDS = {
    "warnings": "the floating-point warnings a call raised (the agent's `warned`)",
    "log": "the calls the grader's spies and recorders saw (a double's `records()`)",
    "modules": "the modules a class or function uses (the agent's `modules`)",
    "cells": "the cells the notebook ran (the agent's `history`)",
}
TRIPWIRES = frozenset({"modules", "cells"})
# Where testimony comes from: the agent's operations (by name, with their kind), and the
# methods of the doubles (``doubles.DOUBLES``, by name) that tell what they saw (kind "log").
OPS = {"warned": "warnings", "modules": "modules", "history": "cells"}
LOGS = {"recorder": ("records",), "training": ("records",)}
_HEARS: ContextVar[frozenset[str] | None] = ContextVar("hears", default=None)


class UndeclaredTestimony(RuntimeError):
    """A check read a kind of testimony it does not declare: a bug of the grader's."""


@contextlib.contextmanager
def hearing(kinds: frozenset[str]) -> Iterator[None]:
    """The block is a check that declares ``kinds``: it may read those, and the tripwires."""
    token = _HEARS.set(kinds)
    try:
        yield
    finally:
        _HEARS.reset(token)


def heard(kind: str, told):
    """``told``, the kernel's testimony of ``kind``, after making sure the running check
    declares that kind."""
    if kind not in KINDS:
        raise ValueError(f"no kind of testimony named {kind!r}; the kinds are {sorted(KINDS)}")
    declared = _HEARS.get()
    if declared is not None and kind not in declared | TRIPWIRES:
        raise UndeclaredTestimony(f"a check read {KINDS[kind]} without declaring it: "
                                  f"@check(hears=({kind!r},)), for its messages only")
    return told


@contextlib.contextmanager
def explain(hint: Callable[[], str | None]) -> Iterator[None]:
    """Run the block; when it fails, add ``hint()`` (read from testimony) to the message. The
    values decided the failure: a hint that cannot be read, or finds nothing, adds nothing."""
    try:
        yield
    except CheckFailure as failure:
        try:
            extra = hint()
        except UndeclaredTestimony:
            raise
        except (Exception, TimeLimitExceeded):  # noqa: BLE001 - the failure stands without it
            extra = None
        raise CheckFailure(f"{failure}\n  {extra}" if extra else str(failure)) from None


def warnings_of(what: str, function: Callable, *args) -> list[str]:
    """The RuntimeWarnings ``function(*args)`` raises (under numpy's default error handling,
    whatever the notebook set), as text; graded from outside, they are collected in the
    student's kernel."""
    if isinstance(function, Remote):
        _, caught = call(what, function._session.send, "warned", function, list(args), {})
    else:
        _, caught = call(what, warned, function, *args)
    return heard("warnings", caught)


def log_of(double: object) -> list:
    """What a spy or recorder (``doubles.Training``, ``doubles.Recorder``) logged."""
    return heard("log", double.records())


def modules_of(remote: Remote) -> list[str]:
    """The modules a class or function in the student's kernel comes from or uses."""
    return heard("modules", remote._session.send("modules", remote))


def cells_of(remote: Remote) -> list[str]:
    """The sources of the cells the kernel of ``remote`` ran."""
    return heard("cells", remote._session.send("history"))
