"""``python -m autograder.pipeline.sandbox.spawn SPEC CONNECTION_FILE``: a job's kernel, forked.

The command of a sandboxed job's kernelspec. It starts the job's bubblewrap sandbox
(``SPEC``'s ``bwrap`` command, written by ``autograder.pipeline.sandbox.kernelspec``) around a
placeholder that only waits, then asks the worker's zygote (``autograder.pipeline.sandbox.zygote``)
for a kernel inside it: the zygote's fork joins the placeholder's namespaces. This process
stands for the kernel to jupyter_client: it exits with the kernel's exit code; it dies with
the grader that started it, the sandbox with it (``--die-with-parent``) and the kernel with
the sandbox. Once the sandbox is ready it writes what identifies it (its placeholder's
process id and namespaces) to ``SPEC``'s ``record``, in the job's folder, outside the
sandbox: the grader reads the kernel's CPU time from it (``kernel_cpu``).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from autograder.pipeline.sandbox.zygote import die_with_parent

# The sandbox's placeholder: says when the sandbox is ready, then waits for the end. It is
# the sandbox's process 1 (``--as-pid-1``), which no process inside can kill.
PLACEHOLDER = ["/bin/sh", "-c", "echo ready && exec sleep infinity"]


class SpawnError(RuntimeError):
    """The sandbox or the zygote could not give this job a kernel."""


def _sandbox(command: list[str]) -> tuple[subprocess.Popen, dict]:
    """Start bubblewrap (``command``, around the placeholder); once the sandbox is ready, what
    the zygote needs to join it: the placeholder's process id, its parent's (bubblewrap)
    and its namespaces (name: inode)."""
    reports, reports_w = os.pipe()
    try:
        sandbox = subprocess.Popen(
            [command[0], "--as-pid-1", "--json-status-fd", str(reports_w), *command[1:]],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=(reports_w,))
    finally:
        os.close(reports_w)
    with os.fdopen(reports, "rb") as lines:
        first = lines.readline()
    if sandbox.stdout.readline() != b"ready\n" or not first:
        raise SpawnError(f"the sandbox did not start (exit code {sandbox.wait()})")
    report = json.loads(first)
    namespaces = {key.removesuffix("-namespace"): value for key, value in report.items()
                  if key.endswith("-namespace")}
    return sandbox, {"pid": report["child-pid"], "parent": sandbox.pid, "namespaces": namespaces}


def _record(path: str, placeholder: dict) -> None:
    """Write ``placeholder`` to ``path`` whole (a reader never sees half of it)."""
    incoming = Path(f"{path}.incoming")
    incoming.write_text(json.dumps(placeholder), encoding="utf-8")
    incoming.replace(path)


def kernel(spec: dict, connection_file: str) -> int:
    """The exit code of the kernel the zygote runs in this job's sandbox."""
    sandbox, placeholder = _sandbox(spec["bwrap"])
    try:
        if spec.get("record"):
            _record(spec["record"], placeholder)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as zygote:
            zygote.connect(spec["zygote"])
            argv = [arg.replace("{connection_file}", connection_file) for arg in spec["argv"]]
            zygote.sendall(json.dumps({**placeholder, "env": spec["env"], "cwd": spec["cwd"],
                                       "argv": argv}).encode() + b"\n")
            with zygote.makefile("rb") as lines:
                reply = lines.readline().strip()
        return int(reply) if reply.lstrip(b"-").isdigit() else 1
    finally:
        sandbox.kill()
        sandbox.wait()


def main(argv: list[str]) -> None:
    die_with_parent()                 # and the sandbox with this process (--die-with-parent)
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    try:
        sys.exit(kernel(spec, argv[1]))
    except (OSError, SpawnError) as error:
        sys.exit(f"no kernel for this job: {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
