"""``python -m autograder.pipeline.sandbox.spawn SPEC CONNECTION_FILE``: a job's kernel, forked.

The command of a sandboxed job's kernelspec. It starts the job's bubblewrap sandbox
(``SPEC``'s ``bwrap`` command, written by ``autograder.pipeline.sandbox.kernelspec``) around a
placeholder that only waits, then asks the worker's zygote (``autograder.pipeline.sandbox.zygote``)
for a kernel inside it: the zygote's fork joins the placeholder's namespaces. This process
stands for the kernel to jupyter_client: it exits with the kernel's exit code; it dies with
the grader that started it, the sandbox with it (``--die-with-parent``) and the kernel with
the sandbox. Once the sandbox is ready it writes what identifies it (its placeholder's
process id and namespaces) to ``SPEC``'s ``record``, in the job's folder, outside the
sandbox: the grader reads the kernel's CPU time from it (``kernel_cpu``) where the job has no
control group. Where it has one (``SPEC``'s ``cgroup``, its ``cgroup.procs`` files), bubblewrap
is started in it, and the zygote's fork joins it before it forks the kernel: the kernel and
everything it starts are born in the job's group, which they cannot leave.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from autograder.pipeline.sandbox import seccomp
from autograder.pipeline.sandbox.cgroup_base import enter
from autograder.pipeline.sandbox.zygote import die_with_parent

# The sandbox's placeholder: says when the sandbox is ready, then waits for the end. It is
# the sandbox's process 1 (``--as-pid-1``), which no process inside can kill.
PLACEHOLDER = ["/bin/sh", "-c", "echo ready && exec sleep infinity"]


class SpawnError(RuntimeError):
    """The sandbox or the zygote could not give this job a kernel."""


def _sandbox(command: list[str], cgroup: list[str]) -> tuple[subprocess.Popen, dict]:
    """Start bubblewrap (``command``, around the placeholder) in the job's control group
    (``cgroup``: its ``cgroup.procs`` files; none: here); once the sandbox is ready, what
    the zygote needs to join it: the placeholder's process id, its parent's (bubblewrap)
    and its namespaces (name: inode)."""
    reports, reports_w = os.pipe()
    program = seccomp.descriptor()
    try:
        sandbox = subprocess.Popen(
            seccomp.with_filter([command[0], "--as-pid-1", "--json-status-fd", str(reports_w),
                                 *command[1:]], program),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, pass_fds=(reports_w, program),
            preexec_fn=(lambda: enter(cgroup)) if cgroup else None)
    finally:
        os.close(reports_w)
        os.close(program)
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
    cgroup = spec.get("cgroup", [])
    sandbox, placeholder = _sandbox(spec["bwrap"], cgroup)
    try:
        if spec.get("record"):
            _record(spec["record"], placeholder)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as zygote:
            zygote.connect(spec["zygote"])
            argv = [arg.replace("{connection_file}", connection_file) for arg in spec["argv"]]
            zygote.sendall(json.dumps({**placeholder, "env": spec["env"], "cwd": spec["cwd"],
                                       "argv": argv, "cgroup": cgroup}).encode() + b"\n")
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
