"""``python -m autograder.pipeline.sandbox.kernel -f CONNECTION_FILE``: the kernel that grades.

An ordinary ipykernel, started with bounds read from the JSON in the environment
variable ``AUTOGRADER_KERNEL_LIMITS`` (written by ``autograder.pipeline.job.job``):

- ``memory_bytes``: ``RLIMIT_AS``, so allocating more than that raises
  ``MemoryError`` in the cell instead of exhausting the machine;
- ``file_bytes``: ``RLIMIT_FSIZE``, the largest file the submission may write;
- ``cpu_seconds``: ``RLIMIT_CPU``, a backstop behind nbgrader's per-cell timeout;
- ``output_bytes``: what one cell may print (stdout and stderr together); the rest
  is dropped and a one-line note says so;
- ``log``: where the kernel process's own file descriptors 1 and 2 go;
- ``pidfile``: where the kernel writes its process id, so the grader can end it;
- ``cgroup``: the ``cgroup.procs`` files of the job's control group, which an unsandboxed
  kernel joins first thing (a sandboxed one is born in it: ``zygote``);
- ``policy``: the file and process guard of ``autograder.pipeline.sandbox.guard`` (a tripwire);
- ``seed``: ``[source, destination]`` pairs of folders copied before the kernel starts:
  in the sandbox, the submission's files into the empty, size-limited working folder,
  and the shared font cache into a writable place;
- ``landlock``: folders where writing stays allowed once the kernel's sockets exist
  (``autograder.pipeline.sandbox.landlock``; everything else becomes unwritable for good).
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import sys

LIMITS_VARIABLE = "AUTOGRADER_KERNEL_LIMITS"
# Figures keep the notebook's own size: no bbox_inches="tight" (the inline backend's default,
# a second layout pass that was a fifth of a graded course's kernel time); the graded copy
# shows the same plots, with their margins. Their PNGs are compressed at zlib level 3, not
# Pillow's 6: the same pixels, files 5% larger, in 40% of the time (the course's 46 figures:
# 0.5 s instead of 1.3 s). No input history on disk: nobody reads it back, and it was a
# SQLite file and a writing thread per kernel (``In`` and ``_i`` still work).
CONFIG = {"InlineBackend": {"print_figure_kwargs": {"bbox_inches": None,
                                                    "pil_kwargs": {"compress_level": 3}}},
          "HistoryManager": {"enabled": False}}
NOT_SEEDED = ("submission_secret.txt",)   # nbgrader's, for release_feedback: not the student's


def set_rlimits(limits: dict) -> None:
    for key, which in (("memory_bytes", resource.RLIMIT_AS), ("file_bytes", resource.RLIMIT_FSIZE),
                       ("cpu_seconds", resource.RLIMIT_CPU)):
        value = limits.get(key)
        if value:
            _, hard = resource.getrlimit(which)
            value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
            resource.setrlimit(which, (value, value))


def redirect_process_output(log: str | None) -> None:
    """Send what bypasses the notebook (os.write(1, ...), C libraries) to a capped log file."""
    target = os.open(log or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for fd in (1, 2):
        os.dup2(target, fd)
    os.close(target)


class OutputCap:
    """Stops a cell's printing after ``limit`` characters; reset before every cell."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used, self.noted = limit, 0, False

    def reset(self, *_info) -> None:
        """Before each cell: a fresh budget, and the streams wrapped (ipykernel may replace them)."""
        self.used, self.noted = 0, False
        for stream in (sys.stdout, sys.stderr):
            if not getattr(stream.write, "capped", False):
                self.wrap(stream)

    def wrap(self, stream) -> None:
        write = stream.write

        def capped(text: str) -> int:
            room = self.limit - self.used
            self.used += len(text)
            if room >= len(text):
                return write(text)
            if room > 0:
                write(text[:room])
            if not self.noted:
                self.noted = True
                write(f"\n[... the grader dropped the rest of this cell's output: more than "
                      f"{self.limit:,} characters ...]\n")
            return len(text)

        capped.capped = True
        stream.write = capped


def copy_seed(pairs: list[list[str]]) -> None:
    """Copy each read-only ``source`` folder's files into ``destination``."""
    for source, destination in pairs:
        if os.path.isdir(source):
            shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(*NOT_SEEDED))


def main(argv: list[str]) -> None:
    limits = json.loads(os.environ.get(LIMITS_VARIABLE, "{}"))
    if limits.get("cgroup"):
        from autograder.pipeline.sandbox.cgroup_base import enter
        enter(limits["cgroup"])
    if limits.get("pidfile"):
        with open(limits["pidfile"], "a", encoding="utf-8") as stream:
            stream.write(f"{os.getpid()}\n")
    set_rlimits(limits)
    redirect_process_output(limits.get("log"))
    copy_seed(limits.get("seed", []))
    from ipykernel.kernelapp import IPKernelApp
    from traitlets.config import Config

    app = IPKernelApp.instance(config=Config(CONFIG))
    app.initialize(argv)
    if "ipywidgets" in sys.modules:   # imported before the kernel existed (the zygote's)
        sys.modules["ipywidgets"].register_comm_target()
    if limits.get("landlock") is not None:   # after the sockets exist, before any cell runs
        from autograder.pipeline.sandbox import landlock
        landlock.restrict(limits["landlock"])
    if limits.get("output_bytes"):
        cap = OutputCap(int(limits["output_bytes"]))
        cap.reset()
        app.shell.events.register("pre_run_cell", cap.reset)
    if limits.get("policy"):
        from autograder.pipeline.sandbox import guard
        guard.install(limits["policy"])
    app.start()


if __name__ == "__main__":
    main(sys.argv[1:])
