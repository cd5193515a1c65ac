"""A student's server (the hub's) or a grading job (the grader's) and all it starts, held to its
``Limits`` by the kernel's control groups:
cgroup v2 where the host mounts only the unified tree (``cgroup2fs`` at /sys/fs/cgroup),
cgroup v1 otherwise (a ``tmpfs`` there with a hierarchy per controller, also on hybrid hosts,
whose ``unified`` tree has no controllers to give). Both behave the same to the spawner
and the grading station (``Cgroup``); ``cgroup_v1`` and ``cgroup_v2`` say how.
"""
from __future__ import annotations

from pathlib import Path

from autograder.pipeline.sandbox import cgroup_v1, cgroup_v2
from autograder.pipeline.sandbox.cgroup_base import ROOT, Cgroup

MOUNTS = Path("/proc/self/mounts")

__all__ = ["Cgroup", "group", "unavailable", "unified"]


def unified(root: Path = ROOT, mounts: Path = MOUNTS) -> bool:
    """Whether ``root`` is a cgroup2 mount (the last mount there wins, as it hides the others)."""
    kind = None
    for line in mounts.read_text().splitlines():
        _, point, fstype, *_ = line.split()
        if point == str(root):
            kind = fstype
    return kind == "cgroup2"


def group(name: str, root: Path = ROOT, mounts: Path = MOUNTS) -> Cgroup:
    """The group ``name`` (e.g. ``minitorch-hub-8000/alice``) under the caller's own."""
    if unified(root, mounts):
        return cgroup_v2.UnifiedCgroup(name, root)
    return cgroup_v1.SplitCgroup(name, root)


def unavailable(root: Path = ROOT, mounts: Path = MOUNTS) -> str | None:
    """Why limits cannot be enforced here (None when they can)."""
    if unified(root, mounts):
        return cgroup_v2.unavailable(root)
    return cgroup_v1.unavailable(root)
