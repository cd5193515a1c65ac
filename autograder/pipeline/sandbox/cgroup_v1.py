"""A control group on a cgroup-v1 host (a ``tmpfs`` at /sys/fs/cgroup, one
hierarchy per controller, as on this project's CI machines and hybrid systemd hosts).

One group per student (or grading job) in each hierarchy needed, made inside the caller's own
group (so a hub or grader that runs inside a container or a service's group stays inside it):
``memory`` (the
kernel's OOM killer acts inside the group only; swap counted too where the kernel can, so
the limit is RAM and swap together), ``pids`` (a fork bomb meets ``pids.max``), ``cpu`` (a CFS
quota: at most ``cpus`` cores; every new group has the default ``cpu.shares``, so two
busy groups get equal shares however many processes each runs), ``cpuacct`` (the CPU time of
everything the group ever held, ``cpuacct.usage``; the same hierarchy as ``cpu`` where the
host mounts them together) and ``freezer`` (to stop every process of the group at once
before killing them, so none can fork while they are killed). A process cannot leave its
group: the groups' files belong to root and are not in the sandbox.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.pipeline.sandbox.cgroup_base import (PERIOD_US, ROOT, Cgroup, folders,
                                                     read_number, read_pids, sigkill, write)
from autograder.pipeline.sandbox.limits import Limits

CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")


def own_path(controller: str, pid: int | str = "self") -> str:
    """The group of process ``pid`` in ``controller``'s v1 hierarchy, e.g. ``/`` or ``/hub``."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    raise LookupError(f"no cgroup-v1 {controller} hierarchy for process {pid}")


def unavailable(root: Path = ROOT) -> str | None:
    """Why limits cannot be enforced with the v1 hierarchies under ``root`` (None when they can)."""
    for controller in CONTROLLERS:
        try:
            folder = root / controller / own_path(controller).lstrip("/")
        except (OSError, LookupError) as why:
            return f"{why} (this hub needs cgroup v1 {', '.join(CONTROLLERS)} mounted, or cgroup v2)"
        if not os.access(folder / "cgroup.procs", os.W_OK):
            return f"{folder} is not writable (run the hub as root, with cgroups mounted read-write)"
    return None


@dataclass(frozen=True)
class SplitCgroup(Cgroup):
    """The groups named ``name`` (e.g. ``minitorch-hub-8000/alice``) under the hub's own, one
    in each v1 hierarchy under ``root``."""

    name: str
    root: Path = ROOT

    def folder(self, controller: str) -> Path:
        return self.root / controller / own_path(controller).lstrip("/") / self.name

    def create(self, limits: Limits) -> None:
        for controller in CONTROLLERS:
            self.folder(controller).mkdir(parents=True, exist_ok=True)
        memory = self.folder("memory")
        write(memory / "memory.limit_in_bytes", limits.memory)
        if (memory / "memory.memsw.limit_in_bytes").exists():   # swap counted too, where it can be
            write(memory / "memory.memsw.limit_in_bytes", limits.memory)
        write(self.folder("pids") / "pids.max", limits.processes)
        write(self.folder("cpu") / "cpu.cfs_period_us", PERIOD_US)
        write(self.folder("cpu") / "cpu.cfs_quota_us", int(limits.cpus * PERIOD_US))

    def procs_files(self) -> list[Path]:
        return list(dict.fromkeys(self.folder(controller).resolve() / "cgroup.procs"
                                  for controller in CONTROLLERS))

    def cpu_seconds(self) -> float:
        return read_number(self.folder("cpuacct") / "cpuacct.usage") / 1e9

    def processes(self) -> set[int]:
        return read_pids(self.folder("pids") / "cgroup.procs")

    def _strike(self, pids: set[int]) -> None:
        state = self.folder("freezer") / "freezer.state"
        if state.exists():
            write(state, "FROZEN")
        sigkill(pids)
        if state.exists():
            write(state, "THAWED")   # the killed die as they thaw

    def remove(self) -> None:
        for controller in CONTROLLERS:
            try:
                self.folder(controller).rmdir()
            except (FileNotFoundError, OSError):
                pass

    def subgroups(self) -> set[str]:
        return set().union(*(folders(self.folder(controller)) for controller in CONTROLLERS))
