"""What a control group can do, whichever cgroup version the host mounts.

``Cgroup`` is the interface the hub's spawner (a student's server) and the grading station
(a grading job) use: create with limits, add a process, read the CPU time of all it ever
held, kill everything, remove; ``cgroup_v1`` and ``cgroup_v2`` implement it. Killing is the same loop in
both: stop the group, SIGKILL what is in it, until it is empty or the time is up; only the way
to stop (v1's freezer, v2's ``cgroup.freeze`` or ``cgroup.kill``) differs.
"""
from __future__ import annotations

import os
import signal
import time
from abc import ABC, abstractmethod
from pathlib import Path

from autograder.pipeline.sandbox.limits import Limits

ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000   # the CPU quota's period: ``cpus`` cores = cpus * PERIOD_US per period


class Cgroup(ABC):
    """A student's server or a grading job and all it starts, held to its ``Limits`` by the
    kernel."""

    name: str

    @abstractmethod
    def create(self, limits: Limits) -> None:
        """Make the group (again) and write the limits."""

    @abstractmethod
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its id into to join the group (one per
        v1 hierarchy; one in v2)."""

    @abstractmethod
    def cpu_seconds(self) -> float:
        """The CPU seconds of every process the group held, the ended ones too (those reaped
        by nobody, re-parented or in a nested PID namespace as well); 0 if it is gone."""

    @abstractmethod
    def processes(self) -> set[int]:
        """The processes in the group (none when it does not exist)."""

    @abstractmethod
    def remove(self) -> None:
        """Remove the (empty) group; a group that still holds a process stays."""

    @abstractmethod
    def subgroups(self) -> set[str]:
        """The names of the groups directly inside this one (none when it does not exist)."""

    @abstractmethod
    def _strike(self, pids: set[int]) -> None:
        """Kill ``pids``, the group stopped meanwhile so that none forks."""

    def join(self, pid: int) -> None:
        """Move ``pid`` into the group (its children are born there)."""
        enter([str(path) for path in self.procs_files()], pid)

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


def enter(procs: list[str], pid: int = 0) -> None:
    """Move process ``pid`` (0: the caller) into the group whose ``cgroup.procs`` files are
    ``procs`` (``Cgroup.procs_files``): what a process about to become a job's kernel does,
    with the paths its job gave it."""
    for path in procs:
        write(Path(path), pid or os.getpid())


def read_number(path: Path, key: str | None = None) -> int:
    """The number in ``path``, or after ``key`` in its ``key value`` lines; 0 when it is gone."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return 0
    if key is None:
        return int(text.split()[0])
    return next((int(value) for name, value in (line.split() for line in text.splitlines())
                 if name == key), 0)


def sigkill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def folders(path: Path) -> set[str]:
    """The names of the folders in ``path`` (a group's subgroups); none when it is gone."""
    try:
        return {child.name for child in path.iterdir() if child.is_dir()}
    except FileNotFoundError:
        return set()


def read_pids(path: Path) -> set[int]:
    try:
        return {int(pid) for pid in path.read_text().split()}
    except FileNotFoundError:
        return set()


def write(path: Path, value: object) -> None:
    with open(path, "w") as file:
        file.write(str(value))
