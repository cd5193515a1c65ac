"""The mutation audit from outside a kernel, as a submission is graded.

``autograder.audit`` runs every check on the reference (or a mutant) in the grader's own
process. Here the classes live in a kernel (a plain ipykernel that imports them, which a
sandboxed grading kernel never could) and the check drives them through
``autograder.remote``: ``tests/autograder/test_remote_audit.py`` asks this route for the
same verdicts, and ``bench/autograde.py --checks-cost`` times it against the in-process one.
"""
from __future__ import annotations

import contextlib
import tempfile
from typing import Iterator

from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import KernelManager

from autograder import verdicts
from autograder.integrity import trusting
from autograder.mutants import Mutant, Variant
from autograder.registry import SECONDS_PER_CHECK, Check
from autograder.remote.channel import Channel
from autograder.cells.hidden import arguments
from autograder.remote.proxy import Session
from course.testing.failure import CheckFailure

Kernel = tuple[BlockingKernelClient, Channel]
# Run in the kernel once: what puts a mutant (or the reference) under a check's names.
SETUP = '''
from autograder.audit import reference as _reference
from autograder.mutants import catalogue as _catalogue, variants as _variants

_MUTANTS = {_m.name: _m.cls for _m in _catalogue() + _variants()}


def _use(names, mutant=None, target=None):
    globals().update({name: _reference(name) for name in names})
    if mutant is not None:
        globals()[target] = _MUTANTS[mutant]
'''


@contextlib.contextmanager
def agent_kernel(code: str = SETUP) -> Iterator[Kernel]:
    """A fresh kernel that ran ``code`` (which must succeed), with the grader's agent installed.
    Its sockets are files in a folder of its own (ZeroMQ's ``ipc`` transport), as a grading
    kernel's are: a TCP port found free could be taken by another process (any connection's
    local port) before the kernel binds it, and the kernel then dies at its start."""
    with tempfile.TemporaryDirectory(prefix="audit-kernel-") as folder:
        manager = KernelManager(kernel_name="python3", transport="ipc", ip=f"{folder}/kernel")
        manager.start_kernel()
        client = manager.client()
        client.start_channels()
        channel = Channel(manager.get_connection_info())
        try:
            client.wait_for_ready(timeout=60)
            reply = client.execute_interactive(code, timeout=60)
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"the kernel could not run its set-up: {reply['content']}")
            channel.install()
            yield client, channel
        finally:
            channel.close()
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def remote_failure(kernel: Kernel, check: Check, mutant: Mutant | Variant | None = None,
                   before: str = "") -> str | None:
    """The failure message of ``check`` graded from outside on the kernel's classes (the
    reference's, with ``mutant`` (or a variant) in its target's place; the kernel ran
    ``SETUP``), or None if it passes. ``before``: code the kernel runs first, in the same cell.
    The check is judged alone, as the in-process audit judges it: no verdict an earlier check
    reached on this kernel excuses anything (``autograder.verdicts``)."""
    use(kernel[0], check, mutant, before)
    verdicts.forget(kernel[1])
    return graded_from_outside(kernel[1], check)


def use(client: BlockingKernelClient, check: Check, mutant: Mutant | Variant | None = None,
        before: str = "") -> None:
    """Put the reference's classes under ``check``'s names in the kernel, ``mutant`` in its
    target's place (after running ``before``)."""
    arguments = repr(list(check.targets))
    if mutant is not None:
        arguments += f", {mutant.name!r}, {mutant.target!r}"
    reply = client.execute_interactive(f"{before}_use({arguments})", timeout=60)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the kernel could not take {arguments}: {reply['content']}")


def graded_from_outside(channel: Channel, check: Check) -> str | None:
    """``check`` run here on the kernel's classes of its names: its failure message or None."""
    session = Session(channel, SECONDS_PER_CHECK, 2 * SECONDS_PER_CHECK)
    try:
        classes = arguments(session, check, list(check.targets))
        with trusting(classes):
            check.run(*classes)
    except CheckFailure as failure:
        return str(failure)
    finally:
        session.release()
    return None
