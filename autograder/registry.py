"""The registry of checks: each hidden test cell calls one, by name, on student classes."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Callable

from autograder import integrity, testimony, verdicts
from course.testing.failure import CheckFailure
from autograder import blame
from autograder.remote.proxy import Remote
from autograder.sandbox import time_limit

SECONDS_PER_CHECK = 10.0   # of computing (CPU time); twice that of waiting (wall clock)


@dataclass(frozen=True)
class Check:
    """A registered check: its runner, the names of the classes it grades, the kinds of
    the kernel's testimony it reads for its messages (``autograder.testimony``), and the
    parameters that take the student's answer to a question (a value, not a class)."""

    name: str
    run: Callable
    targets: tuple[str, ...]
    hears: frozenset[str] = frozenset()
    answers: frozenset[str] = frozenset()


CHECKS: dict[str, Check] = {}


def check(function: Callable | None = None, *, hears: tuple[str, ...] = (),
          answers: tuple[str, ...] = ()) -> Callable:
    """Register ``function(ClassA, ClassB, ...)`` as a check (``@check``, or
    ``@check(hears=("log",))`` for one that explains its failures with testimony, or
    ``@check(answers=("answer_02_tiny",))`` for one that grades the value a notebook's
    variable holds: graded from outside, that parameter gets a handle to the value, which
    the check reads as data).

    The parameters are named after the classes they take (``Linear``,
    ``Sequential``…), which tells the mutation audit what a check grades. The
    runner first refuses forbidden submissions, then runs the check under a time
    limit, and re-raises any failure with a short traceback that shows no check code. An
    exception of the check's own making (``autograder.blame``) is raised as a
    ``GraderFault`` instead: it must cost the student nothing.
    """
    unknown = set(hears) - set(testimony.KINDS)
    if unknown:
        raise ValueError(f"no kind of testimony named {sorted(unknown)}")
    if function is None:
        return lambda decorated: _register(decorated, frozenset(hears), frozenset(answers))
    return _register(function, frozenset(hears), frozenset(answers))


def _register(function: Callable, hears: frozenset[str], answers: frozenset[str]) -> Callable:
    signature = inspect.signature(function)
    targets = tuple(signature.parameters)
    if not answers <= set(targets):
        raise ValueError(f"{function.__name__} has no parameter named "
                         f"{sorted(answers - set(targets))}")

    @functools.wraps(function)
    def run(*classes, **named):
        bound = signature.bind(*classes, **named)
        try:
            integrity.check_notebook()
            for name, cls in bound.arguments.items():
                if isinstance(cls, Remote):
                    integrity.check_remote(name, cls)
                elif name not in answers:       # an answer given in-process is plain data
                    integrity.check_class(name, cls)
            with time_limit(SECONDS_PER_CHECK, f"check {function.__name__}"), \
                    testimony.hearing(hears):
                function(*bound.args, **bound.kwargs)
        except CheckFailure as failure:
            message = str(failure)
            verdicts.record(bound.arguments.values(), function.__name__, False)
        except testimony.UndeclaredTestimony:
            raise       # the grader's bug, not the student's: never a score
        except Exception as error:  # noqa: BLE001 - e.g. a student object broke an attribute
            fault = blame.fault(error, {cls._session for cls in bound.arguments.values()
                                        if isinstance(cls, Remote)})
            if fault is not None:   # the check's own failure, not the student's
                raise fault from error
            message = (f"Checking what your code returned raised {type(error).__name__}: "
                       f"{error}. A value your code returned or stored is not what the "
                       "exercise asks for (its type, shape or layout).")
        else:
            verdicts.record(bound.arguments.values(), function.__name__, True)
            return
        raise CheckFailure(message) from None

    if function.__name__ in CHECKS:
        raise ValueError(f"two checks are named {function.__name__}")
    CHECKS[function.__name__] = Check(function.__name__, run, targets, hears, answers)
    return run
