"""The CPU time a grading kernel has used, read from outside it, in ``/proc``: the fallback
where its job has no control group (``cgroups``; a group's count misses nothing).

What a kernel says of itself can lie (``time.process_time`` is the student's to replace, and
so is the agent that reports it); the counters the OS keeps for the kernel's processes are
not the student's. A sandboxed kernel is every process of its sandbox's PID namespace: the
kernel, its threads, and whatever it started, even a process it left to the sandbox's
placeholder (``spawn`` writes the namespace into the job's folder, where no kernel
writes). A kernel without the sandbox is its process and its descendants.
Each process counts its own time and that of the children it waited for (``utime``,
``stime``, ``cutime``, ``cstime``), so a child's work is counted while it runs and once
waited for; a child nobody waits for (``SIGCHLD`` ignored) takes its time with it, and so
does a process in a nested PID namespace: only a control group counts those.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import psutil

TICKS = os.sysconf("SC_CLK_TCK")


def process_seconds(pid: int) -> float:
    """The CPU seconds of process ``pid`` (all its threads) and of its waited-for children;
    0 if it has gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0
    return sum(int(value) for value in fields[11:15]) / TICKS   # utime stime cutime cstime


def namespace_pids(inode: int) -> list[int]:
    """The processes whose PID namespace is ``inode`` (as ``/proc/PID/ns/pid`` names it)."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.stat(f"/proc/{entry.name}/ns/pid").st_ino == inode:
                    pids.append(int(entry.name))
            except OSError:            # gone, or not ours to look at
                pass
    return pids


class KernelCPU:
    """The CPU seconds a job's kernel has used so far: ``KernelCPU(...)()``.

    ``record``: the sandbox's record (``spawn``'s ``sandbox.json``), if the kernel is
    sandboxed; else ``pid``, the kernel's process."""

    def __init__(self, record: Path | None = None, pid: int | None = None) -> None:
        if record is None and pid is None:
            raise ValueError("KernelCPU needs the sandbox's record or the kernel's process id")
        self.record, self.pid = record, pid

    def __call__(self) -> float:
        if self.record is not None:
            inode = int(json.loads(self.record.read_text(encoding="utf-8"))["namespaces"]["pid"])
            return sum(process_seconds(pid) for pid in namespace_pids(inode))
        try:
            pids = [self.pid] + [child.pid for child in
                                 psutil.Process(self.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0.0
        return sum(process_seconds(pid) for pid in pids)
