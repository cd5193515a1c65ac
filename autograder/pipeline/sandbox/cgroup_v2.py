"""A control group on a cgroup-v2 host (one unified tree at /sys/fs/cgroup, file
system ``cgroup2fs``: Ubuntu 22.04 and later, Debian 12, any recent systemd distribution).

The hub's own group is the ``0::`` line of /proc/self/cgroup, e.g.
``/system.slice/minitorch-hub.service``; students' groups are made under it
(``<hub>/minitorch-hub-8000/alice``), with ``memory.max`` (and ``memory.swap.max`` 0 where the
kernel has swap accounting, so that, as with v1's ``memsw``, the limit is RAM and swap
together), ``pids.max`` and ``cpu.max`` (``<quota> <period>``: at most ``cpus`` cores; a new
group has the default ``cpu.weight``, so busy groups share equally); ``cpu.stat``'s
``usage_usec`` is the CPU time of everything the group ever held. The grader's jobs are made
the same way under the grading worker's group.

A child group has a controller only if its parent lists it in ``cgroup.subtree_control``
(delegation), and v2's "no internal processes" rule forbids that for a group that holds
processes itself (except the tree's root). So the first ``create`` moves every process of the
hub's group (the hub, its proxy, whatever else shares it) into a leaf, ``<hub>/hub``, and only
then writes ``+memory +pids +cpu`` into the hub's ``cgroup.subtree_control`` and into each
group between it and the student's. A process in that leaf takes its parent as the hub's
group, so the hub, its servers about to start and a test that cleans up all find the same
students' groups after the move. The group above the hub's must offer the controllers (its
``cgroup.controllers``): under systemd, run the hub in a unit with ``Delegate=yes``.

Killing uses ``cgroup.kill`` (Linux 5.14 and later: the kernel kills every process, even one
being forked); an older kernel freezes the group (``cgroup.freeze``), SIGKILLs what
``cgroup.procs`` lists (a frozen process still dies of SIGKILL) and thaws it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.pipeline.sandbox.cgroup_base import (PERIOD_US, ROOT, Cgroup, folders,
                                                     read_number, read_pids, sigkill, write)
from autograder.pipeline.sandbox.limits import Limits

CONTROLLERS = ("memory", "pids", "cpu")
LEAF = "hub"
SELF = Path("/proc/self/cgroup")


def hub_path(proc: Path = SELF) -> str:
    """The hub's group, from ``proc`` (a /proc/<pid>/cgroup): the ``0::`` line's path, or its
    parent when that is the leaf this module moves the hub into."""
    for line in proc.read_text().splitlines():
        if line.startswith("0::"):
            path = PurePosixPath(line[3:])
            return str(path.parent if path.name == LEAF else path)
    raise LookupError(f"{proc} has no cgroup-v2 line (0::...)")


def unavailable(root: Path = ROOT, proc: Path = SELF) -> str | None:
    """Why students' groups cannot be made under the hub's group in the v2 tree at ``root``."""
    try:
        hub = root / hub_path(proc).lstrip("/")
        offered = (hub / "cgroup.controllers").read_text().split()
    except (OSError, LookupError) as why:
        return f"cgroup v2: {why}"
    missing = [name for name in CONTROLLERS if name not in offered]
    if missing:
        return (f"cgroup v2: the hub's group {hub} is not delegated {' '.join(missing)} (its "
                f"cgroup.controllers: {' '.join(offered) or 'none'}); run the hub in a group "
                "whose parent enables them, e.g. a systemd unit with Delegate=yes")
    for path in (hub, hub / "cgroup.subtree_control", hub / "cgroup.procs"):
        if not os.access(path, os.W_OK):
            return (f"cgroup v2: {path} is not writable, so the hub cannot make students' groups "
                    "(run the hub as root, in a group delegated to it: Delegate=yes under systemd)")
    return None


@dataclass(frozen=True)
class UnifiedCgroup(Cgroup):
    """The group named ``name`` (e.g. ``minitorch-hub-8000/alice``) under the hub's own, in the
    v2 tree at ``root``; ``proc`` says where the calling process is."""

    name: str
    root: Path = ROOT
    proc: Path = SELF

    @property
    def hub(self) -> Path:
        return self.root / hub_path(self.proc).lstrip("/")

    @property
    def folder(self) -> Path:
        return self.hub / self.name

    def create(self, limits: Limits) -> None:
        group = self.hub
        if not _delegates(group):
            self._vacate(group)
        for part in PurePosixPath(self.name).parts:
            _delegate(group)
            group = group / part
            group.mkdir(exist_ok=True)
        write(group / "memory.max", limits.memory)
        if (group / "memory.swap.max").exists():
            write(group / "memory.swap.max", 0)
        write(group / "pids.max", limits.processes)
        write(group / "cpu.max", f"{int(limits.cpus * PERIOD_US)} {PERIOD_US}")

    def _vacate(self, group: Path) -> None:
        """Move every process of ``group`` into its leaf (not at the tree's root, which alone
        has no ``cgroup.type`` and may keep processes), so that it can delegate."""
        if not (group / "cgroup.type").exists():
            return
        leaf = group / LEAF
        leaf.mkdir(exist_ok=True)
        for _ in range(100):   # a process may fork while the others move
            pids = read_pids(group / "cgroup.procs")
            if not pids:
                return
            for pid in sorted(pids):
                _move(pid, leaf)
        raise OSError(f"cgroup v2: {group} keeps gaining processes; cannot move them to {leaf}")

    def procs_files(self) -> list[Path]:
        return [self.folder / "cgroup.procs"]

    def cpu_seconds(self) -> float:
        return read_number(self.folder / "cpu.stat", "usage_usec") / 1e6

    def processes(self) -> set[int]:
        return read_pids(self.folder / "cgroup.procs")

    def _strike(self, pids: set[int]) -> None:
        if (self.folder / "cgroup.kill").exists():
            write(self.folder / "cgroup.kill", 1)
            return
        write(self.folder / "cgroup.freeze", 1)
        sigkill(pids)
        write(self.folder / "cgroup.freeze", 0)   # a group that survived must not stay frozen

    def remove(self) -> None:
        try:
            self.folder.rmdir()
        except (FileNotFoundError, OSError):
            pass

    def subgroups(self) -> set[str]:
        return folders(self.folder)


def _delegates(group: Path) -> bool:
    return set(CONTROLLERS) <= set((group / "cgroup.subtree_control").read_text().split())


def _delegate(group: Path) -> None:
    if not _delegates(group):
        write(group / "cgroup.subtree_control", " ".join(f"+{name}" for name in CONTROLLERS))


def _move(pid: int, leaf: Path) -> None:
    try:
        write(leaf / "cgroup.procs", pid)
    except ProcessLookupError:   # it ended meanwhile
        pass
