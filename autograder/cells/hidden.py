"""A hidden test cell, graded by the grader's process instead of the student's kernel.

A hidden cell is ``from autograder import check`` and one ``check.NAME(Class, ...)``
line. ``grade`` never sends it to the kernel: it looks the named classes up in the
kernel (as ``Remote`` stand-ins; for a question's answer, a handle to the value), runs
the registered check here, where the reference
and the check code live (what a check hands the student's code is data, or a double the
agent builds in the kernel: ``doubles.py``), and returns the cell's outputs: none when the
check passes, one ``CheckFailure`` error output with the check's message when it fails. nbgrader
scores the cell from those outputs, so whatever the kernel does (blank the cell with an
input transformer, replace ``autograder.check``, walk the stack) decides no point. When the
grader itself fails (``GraderFault``: its socket, its memory, a bug in the check), the
output says so, and the cell is left without a score (``autograder.pipeline.flags``).
"""
from __future__ import annotations

import re

from nbformat import NotebookNode
from nbformat.v4 import new_output

import autograder.checks  # noqa: F401  (registers every check)
from autograder.registry import CHECKS, SECONDS_PER_CHECK, Check
from autograder.remote.channel import Channel, ChannelError
from autograder.remote.errors import GraderFault, TimeLimitExceeded
from autograder.remote.proxy import Remote, RemoteError, Session
from course.testing.failure import CheckFailure

BEGIN = "BEGIN HIDDEN TESTS"
CALL = re.compile(r"^check\.(\w+)\(\s*(\w+(?:\s*,\s*\w+)*)?\s*\)$")
IMPORT = "from autograder import check"
FAULT = "GraderFault"     # the ename of a cell's output when the grader failed to grade it


def parse(source: str) -> tuple[str, list[str]] | None:
    """``(check name, argument names)`` of a hidden cell, or None if it is not one."""
    if BEGIN not in source:
        return None
    lines = [line.split("#", 1)[0].strip() for line in source.splitlines()]
    calls = [CALL.match(line) for line in lines if line and line != IMPORT]
    if len(calls) != 1 or calls[0] is None:
        return None
    name, args = calls[0].group(1), calls[0].group(2) or ""
    return name, [a.strip() for a in args.split(",") if a.strip()]


def failure_output(message: str) -> NotebookNode:
    return new_output("error", ename="CheckFailure", evalue=message,
                      traceback=[f"CheckFailure: {message}"])


def fault_output(why: str) -> NotebookNode:
    """The output of a cell the grader failed to grade, through its own fault (``why``): an
    error, so that nbgrader scores it zero until the grading service takes the score away
    (``autograder.pipeline.flags``), and a message that tells the student it is not theirs."""
    message = (f"The grader failed while grading this cell ({why}). This is not your code's "
               "doing: the cell has no score until an instructor grades it.")
    return new_output("error", ename=FAULT, evalue=message, traceback=[f"{FAULT}: {message}"])


def faulted(outputs: list[NotebookNode]) -> str | None:
    """The message of the grader's fault among outputs the grader made, if there is one."""
    return next((o.evalue for o in outputs if o.get("ename") == FAULT), None)


def arguments(session: Session, check: Check, names: list[str]) -> list[Remote]:
    """The stand-ins of the kernel's ``names`` for ``check``'s parameters, in order: a class or
    function by name, and for a parameter that takes an answer, a handle to the value."""
    return [session.answer(name) if parameter in check.answers else session.lookup(name)
            for parameter, name in zip(check.targets, names)]


def grade(channel: Channel, name: str, args: list[str],
          wall: float = 2 * SECONDS_PER_CHECK) -> list[NotebookNode]:
    """The outputs of the hidden cell that calls check ``name`` on the kernel's ``args``; the
    check waits ``wall`` seconds for the kernel (twice its computing limit, less when the job's
    time runs out)."""
    if name not in CHECKS:      # the hidden cell is the course's, restored before grading
        return [fault_output(f"it has no check named {name}")]
    session = Session(channel, SECONDS_PER_CHECK, wall)
    try:
        CHECKS[name].run(*arguments(session, CHECKS[name], args))
    except CheckFailure as failure:
        return [failure_output(str(failure))]
    except RemoteError as error:    # a name the notebook never defined
        return [failure_output(f"Your notebook has no {', '.join(args)} to grade "
                               f"({error.message}). Run every cell above this one; did a cell "
                               "fail?")]
    except (ChannelError, TimeLimitExceeded) as error:
        why = str(error) if isinstance(error, ChannelError) else "it was busy for too long"
        return [failure_output(f"Your kernel did not answer the grader ({why}).")]
    except GraderFault as fault:
        return [fault_output(str(fault))]
    except Exception as error:  # noqa: BLE001 - the grader's own code (its memory, a bug)
        return [fault_output(f"{type(error).__name__}: {error}")]
    finally:
        session.release()
    return []
