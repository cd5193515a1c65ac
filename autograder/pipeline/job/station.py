"""A grading worker's place to work: a scratch folder, warm caches, and an end to every job.

One ``Station`` per worker process, made on its first job (``Station.get``): a folder of
its own under the machine's temporary folder (``autograder-worker-PID-*``; under ``/tmp`` if
``TMPDIR`` is too deep for the jobs' Unix sockets; removed when the worker exits, or with
``--keep`` when the next worker starts after it), matplotlib's font
cache and the course's digit caches, built once per machine in the course's cache folder
(kernels read them and may not write them), the zygote that forks its sandboxed kernels
(``autograder.pipeline.sandbox.zygote``, started on the first sandboxed job and again if it died),
a numbered folder per job, and the gradebook file each job grades into in turn, with one
database engine for all of them (``autograder.pipeline.job.job_gradebook``). When a job ends,
every process it started that still runs (a kernel nbgrader could not stop, whatever a
submission left behind) is killed; a job past its time budget (``autograder.pipeline.job.budget``)
has its kernel killed, which ends nbgrader's run of it.

Where the machine lets it (root, cgroup v1 or a delegated v2 group:
``autograder.pipeline.sandbox.cgroups``), each job gets a control group of its own,
``minitorch-grader-PID/NNNNN`` under the worker's: its kernel and all that starts are born in
it, the OS bounds their memory, processes and CPU share (one core at most, an equal share of
a busy machine) and counts their CPU time, which the job's budget is; a job is stopped by
killing its whole group. A worker killed mid-job (``kill -9``, a lost machine's process)
leaves its groups behind: every station start and job start removes the empty groups of
workers whose process is gone (``remove_abandoned_groups``; a group that still holds a process
stays, as its owner may live in another PID namespace). Elsewhere ``cgroups_unavailable`` says
why, and a job keeps the kernel's per-process limits and a budget on the clock.
"""
from __future__ import annotations

import atexit
import fcntl
import gc
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import psutil

from autograder.pipeline.job import job_gradebook
from autograder.pipeline.sandbox import cgroups, kernelspec
from autograder.pipeline.sandbox.cgroup_base import Cgroup
from autograder.pipeline.sandbox.limits import Limits as GroupLimits
from autograder.pipeline.course import tool_env
from autograder.pipeline.job.runner import kill_tree
from course.datasets.digits import CACHE_ENV, cached, default_cache_dir

PREFIX = "autograder-worker-"
# A Unix socket's path holds at most 107 bytes. The deepest one a station opens is a job's
# checks channel, under the station's folder (PREFIX, a process id, mkdtemp's 8 characters).
SOCKET_PATH_BYTES = 107
DEEPEST_SOCKET = "jobs/000000/run/kernel-9-grader-9999"
# Built once per machine (and matplotlib version), outside any sandbox: the caches kernels may
# read but never write.
WARM_CACHES = ("import matplotlib.font_manager\n"
               "from course.datasets import load_digits, load_mnist\n"
               "load_mnist(); load_digits()")
CGROUP_PREFIX = "minitorch-grader-"
WATCH_SECONDS = 0.25      # how often a job's budget is read
SPENT = "budget-spent"    # written in a job's folder when its budget ran out, before the kill


@contextmanager
def _exclusive(lock: Path):
    """Hold an exclusive lock on the file ``lock`` (made if missing); where it cannot be
    made (a read-only cache folder), go on without it."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        held = open(lock, "a")
    except OSError:
        yield
        return
    with held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


class Deadline:
    """Whether a job's time limit passed (its processes were then killed)."""

    passed = False


class Station:
    """This worker process's grading folder and caches."""

    _current: Station | None = None

    def __init__(self) -> None:
        _remove_stale()
        self.dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base()))
        self.kept = False     # a job folder was kept (--keep): the folder outlives the worker
        atexit.register(self._remove)
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.datasets = default_cache_dir()
        self.matplotlib = self.datasets / f"matplotlib-{metadata.version('matplotlib')}"
        self.gradebook = self.dir / "gradebook.db"      # each job's, in turn
        job_gradebook.share(self.gradebook)
        self._count = 0
        self._zygote: subprocess.Popen | None = None
        self.cgroups_unavailable = cgroups.unavailable()   # None: every job gets a group
        if self.cgroups_unavailable is None:
            remove_abandoned_groups()
        self._build_caches()
        # The worker's modules (Dask, nbgrader, SQLAlchemy: hundreds of thousands of objects)
        # stay for its life: kept out of the collector's full passes, which ran during jobs.
        gc.freeze()

    def _build_caches(self) -> None:
        """The font and digit caches, unless an earlier worker on this machine built them.
        Workers that start together on a new machine build them once: the others wait."""
        if self._caches_built():
            return
        with _exclusive(self.datasets / ".building"):
            if not self._caches_built():
                subprocess.run([sys.executable, "-c", WARM_CACHES], check=False, env=tool_env(
                    {"MPLCONFIGDIR": str(self.matplotlib), CACHE_ENV: str(self.datasets)}))

    def _caches_built(self) -> bool:
        return cached(self.datasets) and any(self.matplotlib.glob("fontlist-*.json"))

    def _remove(self) -> None:
        if self._zygote is not None:
            self._zygote.kill()
            self._zygote.wait()
        if not self.kept:
            shutil.rmtree(self.dir, ignore_errors=True)

    @classmethod
    def get(cls) -> Station:
        if cls._current is None or not cls._current.dir.exists():
            cls._current = cls()
        return cls._current

    def shared(self, course: Path, sandbox: bool = True) -> kernelspec.Shared:
        """What the kernels of this station share (``course``: the instructor's folder); the
        zygote's socket if they are sandboxed."""
        return kernelspec.Shared(self.dir, course, self.matplotlib, self.datasets, CACHE_ENV,
                                 self.zygote() if sandbox else None)

    def zygote(self) -> Path:
        """The socket of this worker's zygote, started (again) if it is not running."""
        path = self.dir / "zygote.sock"
        if self._zygote is None or self._zygote.poll() is not None:
            path.unlink(missing_ok=True)
            home = self.dir / "zygote"
            home.mkdir(exist_ok=True)
            with open(self.dir / "zygote.log", "ab") as log:
                self._zygote = subprocess.Popen(
                    [sys.executable, "-m", "autograder.pipeline.sandbox.zygote", str(path)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, cwd=home,
                    env=kernelspec.kernel_env(self.datasets, CACHE_ENV, str(home),
                                              str(self.matplotlib)))
            if self._zygote.stdout.readline() != b"ready\n":
                log = (self.dir / "zygote.log").read_text(errors="replace")
                raise RuntimeError(f"the kernel zygote did not start; its log: {log[-2000:]}")
        return path

    @contextmanager
    def job(self, keep: bool = False, limits: GroupLimits = GroupLimits()):
        """A fresh folder for one job and its control group under ``limits`` (None where no
        group can be made); its processes are killed, the group and the folder removed,
        afterwards."""
        self._count += 1
        folder = self.dir / "jobs" / f"{self._count:05d}"
        folder.mkdir(parents=True)
        group, parent = None, f"{CGROUP_PREFIX}{os.getpid()}"
        if self.cgroups_unavailable is None:
            remove_abandoned_groups()       # a worker killed since may have retried its job here
            group = cgroups.group(f"{parent}/{self._count:05d}")
            group.create(limits)
        try:
            yield folder, group
        finally:
            stop(folder, group)
            if group is not None:     # the worker's group too: a worker may end without atexit
                group.remove()
                cgroups.group(parent).remove()
            self.kept |= keep
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def deadline(self, folder: Path, wall: float, group: Cgroup | None = None,
                 cpu: float | None = None):
        """Stop the job (``stop``) once it has run ``wall`` seconds, or its control group
        ``group`` has used ``cpu`` seconds of CPU time; ``SPENT`` in ``folder`` says so first."""
        deadline, done, ends = Deadline(), threading.Event(), time.monotonic() + wall

        def spent() -> bool:
            return time.monotonic() >= ends or (
                group is not None and cpu is not None and group.cpu_seconds() >= cpu)

        def watch() -> None:   # on time for the clock's end, every WATCH_SECONDS for the CPU's
            while not done.wait(max(0.0, min(WATCH_SECONDS, ends - time.monotonic()))):
                if spent():
                    deadline.passed = True
                    (folder / SPENT).touch()
                    stop(folder, group)
                    return

        watcher = threading.Thread(target=watch, name="job budget", daemon=True)
        watcher.start()
        try:
            yield deadline
        finally:
            done.set()
            watcher.join()


def stop(folder: Path, group: Cgroup | None) -> None:
    """Kill the job in ``folder``: its whole control group, if it has one (no survivor),
    and the processes the worker started for it (``reap``)."""
    if group is not None:
        group.kill()
    reap(folder)


def reap(folder: Path) -> None:
    """SIGKILL every process of this worker started for the job in ``folder``: those whose
    command line names it (the kernel, its bubblewrap), and the kernels that wrote their
    process id into it (unsandboxed ones)."""
    here = f"{folder}{os.sep}"
    for process in psutil.Process().children(recursive=True):
        try:
            if any(here in arg for arg in process.cmdline()):
                kill_tree(process.pid)
        except psutil.Error:
            pass
    pidfile = folder / "kernel.pid"
    if pidfile.exists():
        for pid in pidfile.read_text().split():
            try:
                command = " ".join(psutil.Process(int(pid)).cmdline())
                if "autograder.pipeline.sandbox.kernel" in command:
                    kill_tree(int(pid))
            except (psutil.Error, ValueError):
                pass


def base() -> str:
    """Where stations are made: the machine's temporary folder, or ``/tmp`` if that is too deep
    for the jobs' Unix sockets (a long ``TMPDIR``: the kernels could not start there)."""
    folder = tempfile.gettempdir()
    deepest = os.path.join(folder, f"{PREFIX}4194304-abcdefgh", DEEPEST_SOCKET)
    return folder if len(os.fsencode(deepest)) <= SOCKET_PATH_BYTES else "/tmp"


def remove_abandoned_groups() -> list[str]:
    """Remove the control groups a worker whose process is gone left under this worker's own
    (``minitorch-grader-PID`` and its jobs' groups), those that hold no process; the names of
    the workers' groups removed."""
    removed = []
    for name in sorted(cgroups.group("").subgroups()):
        pid = name[len(CGROUP_PREFIX):]
        if not name.startswith(CGROUP_PREFIX) or not pid.isdigit() or psutil.pid_exists(int(pid)):
            continue
        worker = cgroups.group(name)
        for job in worker.subgroups():
            cgroups.group(f"{name}/{job}").remove()
        worker.remove()
        if not worker.subgroups() and not worker.processes():
            removed.append(name)
    return removed


def _remove_stale() -> None:
    """Remove the folders of workers that died without cleaning up (their process is gone)."""
    for folder in Path(base()).glob(f"{PREFIX}*"):
        pid = folder.name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
