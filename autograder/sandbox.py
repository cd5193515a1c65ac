"""Run student code so that whatever it does becomes a readable CheckFailure.

An exception names the method and the student's own line; an endless loop is
stopped after a time limit (timer signals, in the main thread, where kernels run cells).
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Callable, Iterator

from autograder.remote.agent import student_frame
from autograder.remote.errors import GraderFault, RemoteError, TimeLimitExceeded
from course.testing.failure import CheckFailure, fail

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_DIRS = tuple(os.path.join(_ROOT, package) for package in ("autograder", "minitorch_ref", "course"))


@contextlib.contextmanager
def time_limit(seconds: float, what: str, wall_seconds: float | None = None) -> Iterator[None]:
    """Stop the block after ``seconds`` of computing, or ``wall_seconds`` (twice ``seconds``
    by default) of any kind, with a CheckFailure naming ``what``.

    Computing is the process's CPU time (``ITIMER_PROF``: every thread, user and system), so a
    busy grading machine that gives the kernel half a core does not fail correct code; the
    wall-clock backstop (``ITIMER_REAL``) stops code that waits instead of computing. Checks
    on a kernel's objects (``autograder.remote``) keep their own budget and raise
    ``TimeLimitExceeded`` themselves, in any thread.
    """
    wall_seconds = 2 * seconds if wall_seconds is None else wall_seconds
    try:
        with _timers(seconds, wall_seconds):
            yield
    except TimeLimitExceeded as stop:
        if stop.args and stop.args[0] == signal.SIGALRM:
            fail(f"{what} did not finish within {wall_seconds:g} s, most of it spent waiting, "
                 "not computing. Does your code sleep, wait for input, or read a file?")
        fail(f"{what} did not finish within {seconds:g} s of computing. Is there an infinite "
             "loop (or a Python loop over every element where numpy could do it at once)?")


@contextlib.contextmanager
def _timers(seconds: float, wall_seconds: float) -> Iterator[None]:
    """Timer signals that raise ``TimeLimitExceeded``; only in the main thread, where signals
    arrive (kernels run cells there; elsewhere the cell timeout still applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, frame):
        raise TimeLimitExceeded(signum)

    timers = {signal.SIGPROF: (signal.ITIMER_PROF, seconds),
              signal.SIGALRM: (signal.ITIMER_REAL, wall_seconds)}
    previous = {signum: signal.signal(signum, on_signal) for signum in timers}
    for timer, limit in timers.values():
        signal.setitimer(timer, limit)
    try:
        yield
    finally:
        for timer, _ in timers.values():
            signal.setitimer(timer, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _student_frame(error: BaseException) -> str:
    """Where the error arose in the student's code, not numpy's or ours (``agent``'s rule)."""
    return student_frame(error, lambda filename: not os.path.abspath(filename).startswith(
        OWN_DIRS) and "site-packages" not in filename)


def call(what: str, function: Callable, *args, **kwargs):
    """``function(*args, **kwargs)``; an exception in it fails the check, naming ``what``."""
    try:
        return function(*args, **kwargs)
    except (CheckFailure, TimeLimitExceeded, GraderFault):   # not the student code's error
        raise
    except NotImplementedError:
        fail(f"{what} is not implemented yet (it raised NotImplementedError).")
    except RemoteError as error:    # raised in the student's kernel, reported with its line
        fail(f"{what} raised {error.type_name}: {error.message}{error.where}")
    except BaseException as error:  # noqa: BLE001 - any student error is a failed check
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        fail(f"{what} raised {type(error).__name__}: {error}{_student_frame(error)}")


def construct(cls: type, *args, **kwargs):
    """Instantiate a student class; failures name the class and the arguments."""
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return call(f"{getattr(cls, '__name__', cls)}({shown})", cls, *args, **kwargs)
