"""A ``dask worker --preload``: failures of the grader's own, injected by student name.

``fault-socket``: the grader cannot bind the socket its checks listen on (as when the job's
run folder is too deep for a Unix socket's name). ``fault-check``: the check of unit 01's
``standardize`` has a bug of its own (a key it never wrote). Every other student is graded
as usual. Used by ``test_executor.py``; nothing here is imported by the grader.
"""
from __future__ import annotations

import errno
import functools
import socket

import autograder.checks  # noqa: F401  (registers every check, so that one can be replaced)
from autograder import registry
from autograder.pipeline.job import job

STUDENT: dict[str, str] = {}


def inject() -> None:
    """Wrap ``job.run``, ``socket.bind`` and one check (Dask may load this file twice in a
    process: the second time it finds them wrapped already)."""
    if hasattr(job.run, "injected"):
        return
    graded, bound = job.run, socket.socket.bind
    standardize = registry.CHECKS.pop("standardize_columns").run.__wrapped__

    def run(submission, material):
        STUDENT["id"] = submission.student      # the executor submits job.run by name
        return graded(submission, material)

    def bind(self, address):
        if STUDENT.get("id") == "fault-socket" and "-grader-" in str(address):
            raise OSError(errno.EADDRNOTAVAIL, "injected: the grader cannot bind its socket")
        return bound(self, address)

    @functools.wraps(standardize)
    def standardize_columns(*args, **kwargs):
        if STUDENT.get("id") == "fault-check":
            return {}["tolerance"]            # the checker's own bug: nothing the kernel sent
        return standardize(*args, **kwargs)

    run.injected = True
    job.run, socket.socket.bind = run, bind
    registry.check(standardize_columns)


inject()
