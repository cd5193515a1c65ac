"""A cgroup-v2 tree in a test's folder, for ``autograder.pipeline.sandbox.cgroup_v2`` on hosts without v2.

Only the kernel's rules the module must respect are played: a new group gets the interface
files of the controllers its parent delegates; a group that holds processes (the root apart)
cannot delegate, and one that delegates cannot take processes (EBUSY: "no internal
processes"); a pid written to ``cgroup.procs`` leaves its old group; ``cgroup.kill`` empties
the group; thawing ``cgroup.freeze`` lets SIGKILLed processes (real ones, from the test) go.
Every write is recorded, in order, as (path under the root, value).
"""
from __future__ import annotations

import errno
import shutil
import subprocess
from pathlib import Path

from autograder.pipeline.sandbox import cgroup_base, cgroup_v2
from autograder.pipeline.sandbox.cgroup_base import read_pids

FILES = {"memory": ("memory.max", "memory.swap.max"), "pids": ("pids.max",), "cpu": ("cpu.max",)}


class FakeCgroupfs:
    def __init__(self, root: Path, monkeypatch, *, swap: bool = True, kill: bool = True):
        self.root, self.swap, self.kill = root, swap, kill
        self.writes: list[tuple[str, str]] = []
        self.children: dict[int, subprocess.Popen] = {}
        self._mkdir, self._rmdir = Path.mkdir, Path.rmdir
        monkeypatch.setattr(cgroup_v2, "write", self.write)
        monkeypatch.setattr(cgroup_base, "write", self.write)   # joining (cgroup_base.enter)
        monkeypatch.setattr(Path, "mkdir", lambda path, *args, **kwargs: self.mkdir(path, *args, **kwargs))
        monkeypatch.setattr(Path, "rmdir", lambda path: self.rmdir(path))
        (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (root / "cgroup.subtree_control").write_text("cpuset cpu io memory pids\n")
        (root / "cgroup.procs").write_text("")

    def group(self, path: str, pids: tuple[int, ...] = ()) -> Path:
        """A group that is there already (e.g. the hub's service) holding ``pids``."""
        folder = self.root / path.strip("/")
        for part in reversed([folder, *folder.parents]):
            if part.is_relative_to(self.root) and not part.exists():
                part.mkdir()
                if part != folder:   # a slice above: delegates all it has, as systemd's do
                    (part / "cgroup.subtree_control").write_text(
                        (part / "cgroup.controllers").read_text())
        (folder / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in pids))
        return folder

    def pids(self, path: str) -> set[int]:
        return read_pids(self.root / path.strip("/") / "cgroup.procs")

    def mkdir(self, path: Path, mode: int = 0o777, parents: bool = False, exist_ok: bool = False):
        new = not path.exists()
        self._mkdir(path, mode, parents, exist_ok)
        if new and path.is_relative_to(self.root) and path != self.root:
            self._interface(path)

    def _interface(self, folder: Path) -> None:
        offered = (folder.parent / "cgroup.subtree_control").read_text().split()
        files = {"cgroup.procs": "", "cgroup.type": "domain\n", "cgroup.subtree_control": "",
                 "cgroup.controllers": " ".join(offered) + "\n", "cgroup.freeze": "0\n",
                 "cgroup.events": "populated 0\nfrozen 0\n"}
        if self.kill:
            files["cgroup.kill"] = ""
        for name in offered:
            files.update({file: "max\n" for file in FILES.get(name, ())
                          if self.swap or file != "memory.swap.max"})
        for name, text in files.items():
            (folder / name).write_text(text)

    def rmdir(self, path: Path) -> None:
        if not path.is_relative_to(self.root):
            return self._rmdir(path)
        if read_pids(path / "cgroup.procs") or any(child.is_dir() for child in path.iterdir()):
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        shutil.rmtree(path)

    def write(self, path: Path, value: object) -> None:
        self.writes.append((str(path.relative_to(self.root)), str(value)))
        group, name = path.parent, path.name
        if name == "cgroup.subtree_control":
            self._delegate(group, str(value))
        elif name == "cgroup.procs":
            self._move(group, int(value))
        elif name == "cgroup.kill":
            (group / "cgroup.procs").write_text("")
        elif name == "cgroup.freeze" and str(value) == "0":
            self._reap(group)
        else:
            path.write_text(f"{value}\n")

    def _delegate(self, group: Path, value: str) -> None:
        if (group / "cgroup.type").exists() and read_pids(group / "cgroup.procs"):
            raise OSError(errno.EBUSY, "Device or resource busy", str(group))
        enabled = set((group / "cgroup.subtree_control").read_text().split())
        enabled |= {word.lstrip("+") for word in value.split()}
        (group / "cgroup.subtree_control").write_text(" ".join(sorted(enabled)) + "\n")

    def _move(self, group: Path, pid: int) -> None:
        if (group / "cgroup.subtree_control").read_text().split():
            raise OSError(errno.EBUSY, "Device or resource busy", str(group))
        for procs in self.root.rglob("cgroup.procs"):
            procs.write_text("".join(f"{p}\n" for p in sorted(read_pids(procs) - {pid})))
        (group / "cgroup.procs").write_text(
            "".join(f"{p}\n" for p in sorted(read_pids(group / "cgroup.procs") | {pid})))

    def _reap(self, group: Path) -> None:
        left = set()
        for pid in read_pids(group / "cgroup.procs"):
            try:
                self.children[pid].wait(timeout=5)
            except subprocess.TimeoutExpired:
                left.add(pid)
        (group / "cgroup.procs").write_text("".join(f"{p}\n" for p in sorted(left)))
