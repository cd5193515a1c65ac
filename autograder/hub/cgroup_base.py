"""What a student's control group can do, whichever cgroup version the host mounts.

``Cgroup`` is the interface the spawner uses (create with limits, add a process, kill
everything, remove); ``cgroup_v1`` and ``cgroup_v2`` implement it. Killing is the same loop in
both: stop the group, SIGKILL what is in it, until it is empty or the time is up; only the way
to stop (v1's freezer, v2's ``cgroup.freeze`` or ``cgroup.kill``) differs.
"""
from __future__ import annotations

import os
import signal
import time
from abc import ABC, abstractmethod
from pathlib import Path

from autograder.hub.limits import Limits

ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000   # the CPU quota's period: ``cpus`` cores = cpus * PERIOD_US per period


class Cgroup(ABC):
    """A student's server and all it starts, held to its ``Limits`` by the kernel."""

    name: str

    @abstractmethod
    def create(self, limits: Limits) -> None:
        """Make the group (again) and write the limits."""

    @abstractmethod
    def join(self, pid: int) -> None:
        """Move ``pid`` into the group (its children are born there)."""

    @abstractmethod
    def processes(self) -> set[int]:
        """The processes in the group (none when it does not exist)."""

    @abstractmethod
    def remove(self) -> None:
        """Remove the (empty) group; a group that still holds a process stays."""

    @abstractmethod
    def _strike(self, pids: set[int]) -> None:
        """Kill ``pids``, the group stopped meanwhile so that none forks."""

    def join_self(self) -> None:
        """Move the calling process (a server about to run) into the group."""
        self.join(os.getpid())

    def kill(self, timeout: float = 10) -> set[int]:
        """Kill every process in the group; those still there after ``timeout`` seconds
        (none, normally)."""
        deadline = time.monotonic() + timeout
        while (left := self.processes()) and time.monotonic() < deadline:
            self._strike(left)
            time.sleep(0.05)
        return self.processes()


def sigkill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def read_pids(path: Path) -> set[int]:
    try:
        return {int(pid) for pid in path.read_text().split()}
    except FileNotFoundError:
        return set()


def write(path: Path, value: object) -> None:
    with open(path, "w") as file:
        file.write(str(value))
