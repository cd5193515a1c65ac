"""Whose fault an unexpected exception in check code is: the kernel's reply, or the grader's.

A check graded from outside runs in the grader's process. When its code raises something
other than a verdict (``CheckFailure``), the student's exception (``RemoteError``) or a
broken channel, either the kernel sent a value the check did not expect (a list where it
wanted an array: what the student's code did, so it costs the cell) or the check itself is
wrong (a misspelt name, an argument it forgot: it must cost nothing). The grader cannot know
for certain, so it asks where the exception was raised: in the innermost frame that is not
a library's (the check's, or the grader's code around it), was a value the kernel sent
among the frame's variables, or was that line waiting for a reply when the reply came
(a reply used at once, never named)? If so the reply caused it; if not, and always for the
errors no value can cause (a name or an import that does not exist, the grader's memory),
the grader is at fault. Doubt goes the student's way only as far as a review: a grader
fault gives no score, never points.
"""
from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable
from types import FrameType, TracebackType

from autograder.remote.channel import ChannelError
from autograder.remote.errors import GraderFault, RemoteError
from autograder.sandbox import OWN_DIRS

# Raised by the code itself, whatever data it holds.
NEVER_DATA = (NameError, ImportError, SyntaxError, MemoryError)
# Where libraries live (the grader's own packages may be installed there too: OWN_DIRS first).
LIBRARIES = tuple({os.path.abspath(path) for name, path in sysconfig.get_paths().items()
                   if name in ("stdlib", "platstdlib", "purelib", "platlib")})


def fault(error: Exception, sessions: Iterable) -> GraderFault | None:
    """The ``GraderFault`` that ``error``, raised by a check that talked to the kernel through
    ``sessions``, stands for, or None when it is the student's (their exception, their
    kernel, their reply). A check without a session (in-process) ran the student's code
    here: anything it raised is theirs."""
    sessions = list(sessions)
    if not sessions or isinstance(error, (RemoteError, ChannelError)):
        return None
    if not isinstance(error, NEVER_DATA) and any(caused_by_reply(error, s) for s in sessions):
        return None
    return GraderFault(f"{type(error).__name__}: {error}")


def caused_by_reply(error: BaseException, session) -> bool:
    """Whether the grader's innermost frame in ``error``'s traceback held a value that
    ``session`` received, or failed on a line that waited for one of its replies."""
    found = _innermost_own(error.__traceback__)
    if found is None:
        return False
    frame, line = found
    if (frame.f_code, line) in session.asked:
        return True
    return any(id(value) in session.received for value in frame.f_locals.values())


def _innermost_own(traceback: TracebackType | None) -> tuple[FrameType, int] | None:
    """The innermost frame, and its line, of code that is not a library's (numpy's, Python's):
    the check's, or the grader's around it."""
    found = None
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        path = os.path.abspath(filename)
        if path.startswith(OWN_DIRS) or not (filename.startswith("<") or path.startswith(LIBRARIES)):
            found = traceback.tb_frame, traceback.tb_lineno
        traceback = traceback.tb_next
    return found
