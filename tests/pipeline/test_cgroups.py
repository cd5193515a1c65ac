"""Students' control groups: cgroup v1 for real on this machine (root), cgroup v2 against a
fake tree (``cgroupfs.FakeCgroupfs``), as this machine's v2 tree has no controllers to give."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from autograder.pipeline.sandbox import cgroup_v1, cgroup_v2, cgroups
from autograder.pipeline.sandbox.limits import Limits
from tests.pipeline.cgroupfs import FakeCgroupfs

LIMITS = Limits(memory=768 << 20, processes=192, cpus=0.5)
SERVICE = "system.slice/minitorch-hub.service"
STUDENT = f"{SERVICE}/minitorch-hub-8000/alice"
DELEGATE = "+memory +pids +cpu"


def proc_file(tmp_path: Path, path: str) -> Path:
    """A /proc/<pid>/cgroup of a process in ``path`` on a v2-only host."""
    (tmp_path / "proc").write_text(f"0::/{path}\n")
    return tmp_path / "proc"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> FakeCgroupfs:
    (tmp_path / "cgroup").mkdir()
    return FakeCgroupfs(tmp_path / "cgroup", monkeypatch)


def test_v2_moves_the_hub_into_a_leaf_before_delegating_then_writes_the_limits(tree, tmp_path):
    tree.group(SERVICE, pids=(100, 101))   # the hub and its proxy
    group = cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, SERVICE))
    group.create(LIMITS)
    assert tree.writes == [(f"{SERVICE}/hub/cgroup.procs", "100"), (f"{SERVICE}/hub/cgroup.procs", "101"),
                           (f"{SERVICE}/cgroup.subtree_control", DELEGATE),
                           (f"{SERVICE}/minitorch-hub-8000/cgroup.subtree_control", DELEGATE),
                           (f"{STUDENT}/memory.max", str(768 << 20)), (f"{STUDENT}/memory.swap.max", "0"),
                           (f"{STUDENT}/pids.max", "192"), (f"{STUDENT}/cpu.max", "50000 100000")]
    assert tree.pids(SERVICE) == set() and tree.pids(f"{SERVICE}/hub") == {100, 101}


def test_v2_from_inside_the_leaf_finds_the_same_groups_and_moves_nothing_again(tree, tmp_path):
    tree.group(SERVICE, pids=(100,))
    cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, SERVICE)).create(LIMITS)
    tree.writes.clear()
    inside = proc_file(tmp_path, f"{SERVICE}/hub")   # the hub after the move, or its server's child
    bob = cgroup_v2.UnifiedCgroup("minitorch-hub-8000/bob", tree.root, inside)
    bob.create(LIMITS)
    bob.join(4242)
    assert [path for path, _ in tree.writes] == [f"{SERVICE}/minitorch-hub-8000/bob/{name}" for name in
                                                 ("memory.max", "memory.swap.max", "pids.max", "cpu.max",
                                                  "cgroup.procs")]
    assert bob.processes() == {4242}


def test_v2_at_the_trees_root_delegates_without_moving_anyone(tree, tmp_path):
    (tree.root / "cgroup.subtree_control").write_text("")
    (tree.root / "cgroup.procs").write_text("1\n100\n")
    cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, "")).create(LIMITS)
    assert tree.writes[:2] == [("cgroup.subtree_control", DELEGATE),
                               ("minitorch-hub-8000/cgroup.subtree_control", DELEGATE)]
    assert tree.pids("/") == {1, 100}


def test_v2_without_swap_accounting_writes_no_swap_limit(tmp_path, monkeypatch):
    (tmp_path / "cgroup").mkdir()
    tree = FakeCgroupfs(tmp_path / "cgroup", monkeypatch, swap=False)
    tree.group(SERVICE)
    cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, SERVICE)).create(LIMITS)
    assert [path for path, _ in tree.writes if path.startswith(STUDENT)] == [
        f"{STUDENT}/memory.max", f"{STUDENT}/pids.max", f"{STUDENT}/cpu.max"]


def test_v2_kills_with_cgroup_kill_and_removes_the_group(tree, tmp_path):
    tree.group(SERVICE, pids=(100,))
    group = cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, SERVICE))
    group.create(LIMITS)
    for pid in (201, 202):
        group.join(pid)
    tree.writes.clear()
    assert group.kill() == set()
    assert tree.writes == [(f"{STUDENT}/cgroup.kill", "1")]
    group.remove()
    assert not (tree.root / STUDENT).exists()


def test_v2_before_linux_5_14_freezes_sigkills_and_thaws(tmp_path, monkeypatch):
    (tmp_path / "cgroup").mkdir()
    tree = FakeCgroupfs(tmp_path / "cgroup", monkeypatch, kill=False)
    tree.group(SERVICE)
    group = cgroup_v2.UnifiedCgroup("minitorch-hub-8000/alice", tree.root, proc_file(tmp_path, SERVICE))
    group.create(LIMITS)
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    for sleeper in sleepers:
        tree.children[sleeper.pid] = sleeper
        group.join(sleeper.pid)
    tree.writes.clear()
    assert group.kill() == set()
    assert tree.writes == [(f"{STUDENT}/cgroup.freeze", "1"), (f"{STUDENT}/cgroup.freeze", "0")]
    assert [sleeper.returncode for sleeper in sleepers] == [-9, -9]


def test_v2_says_why_it_cannot_limit(tree, tmp_path, monkeypatch):
    proc = proc_file(tmp_path, SERVICE)
    service = tree.group(SERVICE)
    assert cgroup_v2.unavailable(tree.root, proc) is None
    (service / "cgroup.controllers").write_text("cpuset io memory\n")
    said = cgroup_v2.unavailable(tree.root, proc)
    assert "is not delegated pids cpu" in said and "Delegate=yes" in said
    (service / "cgroup.controllers").write_text("cpu memory pids\n")
    monkeypatch.setattr(cgroup_v2.os, "access", lambda path, mode: Path(path).name != "cgroup.subtree_control")
    assert f"{service}/cgroup.subtree_control is not writable" in cgroup_v2.unavailable(tree.root, proc)
    proc.write_text("12:pids:/\n")
    assert "has no cgroup-v2 line" in cgroup_v2.unavailable(tree.root, proc)


@pytest.mark.parametrize("fstype, kind", [("cgroup2", cgroup_v2.UnifiedCgroup), ("tmpfs", cgroup_v1.SplitCgroup)])
def test_the_host_mount_chooses_the_version(tmp_path, fstype, kind):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"proc /proc proc rw 0 0\n{fstype} {tmp_path} {fstype} rw,nosuid 0 0\n"
                      f"cgroup2 {tmp_path}/unified cgroup2 rw 0 0\n")
    assert isinstance(cgroups.group("minitorch-hub-8000/alice", tmp_path, mounts), kind)


needs_v1 = pytest.mark.skipif(os.environ.get("CI") != "true" and (os.geteuid() != 0 or cgroups.unified()
                                                                  or cgroup_v1.unavailable() is not None),
                              reason="needs root and cgroup v1 (under CI=true, a failure)")


@needs_v1
def test_v1_for_real_limits_a_process_and_kills_it():
    name = f"minitorch-test-{os.getpid()}"
    group = cgroups.group(f"{name}/alice")
    assert isinstance(group, cgroup_v1.SplitCgroup)
    group.create(LIMITS)
    try:
        assert (group.folder("memory") / "memory.limit_in_bytes").read_text().strip() == str(768 << 20)
        assert (group.folder("pids") / "pids.max").read_text().strip() == "192"
        assert (group.folder("cpu") / "cpu.cfs_quota_us").read_text().strip() == "50000"
        sleeper = subprocess.Popen(["sleep", "60"], preexec_fn=group.join_self)
        assert group.processes() == {sleeper.pid}
        assert group.kill() == set()
        assert sleeper.wait(timeout=5) == -9
    finally:
        group.kill()
        group.remove()
        cgroups.group(name).remove()
    assert not group.folder("memory").exists() and not group.folder("pids").exists()
