"""The registry of checks: each hidden test cell calls one, by name, on student classes."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Callable

from autograder import integrity
from course.testing.failure import CheckFailure
from autograder.remote import blame
from autograder.remote.proxy import Remote
from autograder.sandbox import time_limit

SECONDS_PER_CHECK = 10.0   # of computing (CPU time); twice that of waiting (wall clock)


@dataclass(frozen=True)
class Check:
    """A registered check: its runner and the names of the classes it grades."""

    name: str
    run: Callable
    targets: tuple[str, ...]


CHECKS: dict[str, Check] = {}


def check(function: Callable) -> Callable:
    """Register ``function(ClassA, ClassB, ...)`` as a check.

    The parameters are named after the classes they take (``Linear``,
    ``Sequential``…), which tells the mutation audit what a check grades. The
    runner first refuses forbidden submissions, then runs the check under a time
    limit, and re-raises any failure with a short traceback that shows no check code. An
    exception of the check's own making (``autograder.remote.blame``) is raised as a
    ``GraderFault`` instead: it must cost the student nothing.
    """
    signature = inspect.signature(function)
    targets = tuple(signature.parameters)

    @functools.wraps(function)
    def run(*classes, **named):
        bound = signature.bind(*classes, **named)
        try:
            integrity.check_notebook()
            for name, cls in bound.arguments.items():
                if isinstance(cls, Remote):
                    integrity.check_remote(name, cls)
                else:
                    integrity.check_class(name, cls)
            with time_limit(SECONDS_PER_CHECK, f"check {function.__name__}"):
                function(*bound.args, **bound.kwargs)
        except CheckFailure as failure:
            message = str(failure)
        except Exception as error:  # noqa: BLE001 - e.g. a student object broke an attribute
            fault = blame.fault(error, {cls._session for cls in bound.arguments.values()
                                        if isinstance(cls, Remote)})
            if fault is not None:   # the check's own failure, not the student's
                raise fault from error
            message = f"Your code could not be graded: {type(error).__name__}: {error}"
        else:
            return
        raise CheckFailure(message) from None

    if function.__name__ in CHECKS:
        raise ValueError(f"two checks are named {function.__name__}")
    CHECKS[function.__name__] = Check(function.__name__, run, targets)
    return run
