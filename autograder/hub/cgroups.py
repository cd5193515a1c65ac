"""A student's server and all it starts, held to its ``Limits`` by the kernel's control groups.

One group per student in each cgroup-v1 hierarchy the hub needs, made inside the hub's own
group (so a hub that runs inside a container or a service's group stays inside it):
``memory`` (the kernel's OOM killer acts inside the group only), ``pids`` (a fork bomb meets
``pids.max``), ``cpu`` (a CFS quota: at most ``cpus`` cores) and ``freezer`` (to stop every
process of the group at once before killing them, so none can fork while they are killed).
A process cannot leave its group: the groups' files belong to root and are not in the sandbox.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.hub.limits import Limits

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu", "freezer")
PERIOD_US = 100_000


def own_path(controller: str, pid: int | str = "self") -> str:
    """The group of process ``pid`` in ``controller``'s v1 hierarchy, e.g. ``/`` or ``/hub``."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    raise LookupError(f"no cgroup-v1 {controller} hierarchy for process {pid}")


def unavailable() -> str | None:
    """Why limits cannot be enforced here (None when they can)."""
    for controller in CONTROLLERS:
        try:
            folder = ROOT / controller / own_path(controller).lstrip("/")
        except (OSError, LookupError) as why:
            return f"{why} (this hub needs cgroup v1 {', '.join(CONTROLLERS)} mounted)"
        if not os.access(folder / "cgroup.procs", os.W_OK):
            return f"{folder} is not writable (run the hub as root, with cgroups mounted read-write)"
    return None


@dataclass(frozen=True)
class Cgroup:
    """The groups named ``name`` (e.g. ``minitorch-hub-8000/alice``) under the hub's own."""

    name: str

    def folder(self, controller: str) -> Path:
        return ROOT / controller / own_path(controller).lstrip("/") / self.name

    def create(self, limits: Limits) -> None:
        """Make the groups (again) and write the limits."""
        for controller in CONTROLLERS:
            self.folder(controller).mkdir(parents=True, exist_ok=True)
        memory = self.folder("memory")
        _write(memory / "memory.limit_in_bytes", limits.memory)
        if (memory / "memory.memsw.limit_in_bytes").exists():   # swap counted too, where it can be
            _write(memory / "memory.memsw.limit_in_bytes", limits.memory)
        _write(self.folder("pids") / "pids.max", limits.processes)
        _write(self.folder("cpu") / "cpu.cfs_period_us", PERIOD_US)
        _write(self.folder("cpu") / "cpu.cfs_quota_us", int(limits.cpus * PERIOD_US))

    def join(self, pid: int) -> None:
        """Move ``pid`` into every group (its children are born there)."""
        for controller in CONTROLLERS:
            _write(self.folder(controller) / "cgroup.procs", pid)

    def join_self(self) -> None:
        """Move the calling process (a server about to run) into every group."""
        self.join(os.getpid())

    def processes(self) -> set[int]:
        try:
            text = (self.folder("pids") / "cgroup.procs").read_text()
        except FileNotFoundError:
            return set()
        return {int(pid) for pid in text.split()}

    def kill(self, timeout: float = 10) -> set[int]:
        """SIGKILL every process in the groups, frozen first so that none forks meanwhile;
        the processes still there after ``timeout`` seconds (none, normally)."""
        state = self.folder("freezer") / "freezer.state"
        deadline = time.monotonic() + timeout
        while (left := self.processes()) and time.monotonic() < deadline:
            if state.exists():
                _write(state, "FROZEN")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if state.exists():
                _write(state, "THAWED")   # the killed die as they thaw
            time.sleep(0.05)
        return self.processes()

    def remove(self) -> None:
        """Remove the (empty) groups; a group that still holds a process stays."""
        for controller in CONTROLLERS:
            try:
                self.folder(controller).rmdir()
            except (FileNotFoundError, OSError):
                pass


def _write(path: Path, value: object) -> None:
    with open(path, "w") as file:
        file.write(str(value))
