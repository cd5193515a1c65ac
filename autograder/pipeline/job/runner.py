"""Run nbgrader commands in processes forked from a server that has already imported nbgrader.

Starting ``nbgrader`` costs 1.5 to 3 s of imports per process, more than some
notebooks take to grade. A ``multiprocessing`` fork server preloads nbgrader once;
each command then runs in a fresh forked child (its own working directory,
environment, memory limit and log file), which the caller can kill like any
process. ``run`` waits for it, at most ``timeout`` seconds.

A local Dask cluster's workers fork from the same server (``autograder.pipeline.executor``),
so it preloads what they import too, Dask and the job: a worker then starts in a quarter of a
second instead of 1.5 to 2 s of CPU for a new interpreter and its imports.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import resource
import signal
import sys
import tempfile
from pathlib import Path

import psutil

# What the fork server imports once for all its children: nbgrader's commands, and a local
# cluster's grading workers.
PRELOAD = ["autograder.pipeline.job.launch", "autograder.pipeline.job.job", "distributed"]
_context = None


def fork_server():
    """The fork server's ``multiprocessing`` context, the server started with ``PRELOAD``."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        multiprocessing.set_forkserver_preload(PRELOAD)
        multiprocessing.forkserver.ensure_running()
    return _context


def _child(args: list[str], cwd: str, env: dict[str, str], log: str) -> None:
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    memory = int(env.get("AUTOGRADER_PROCESS_MEMORY", "0"))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.argv = ["nbgrader", *args]
    from autograder.pipeline.job.launch import nbgrader_main
    code = 0
    try:
        nbgrader_main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything it started."""
    try:
        process = psutil.Process(pid)
        targets = process.children(recursive=True) + [process]
    except psutil.Error:
        return
    for target in targets:
        try:
            target.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass


def run(args: list[str], cwd: Path, env: dict[str, str], log: Path,
        timeout: float | None = None) -> int | None:
    """``nbgrader ARGS`` in ``cwd``; its exit code, or None if it was killed at ``timeout``."""
    process = fork_server().Process(target=_child, args=(list(args), str(cwd), env, str(log)))
    process.start()
    process.join(timeout)
    if process.is_alive():
        kill_tree(process.pid)
        process.join()
        return None
    return process.exitcode


def run_captured(args: list[str], cwd: Path, env: dict[str, str],
                 timeout: float | None = None) -> tuple[int | None, str]:
    """``run`` with its log in a temporary file: the exit code and what nbgrader printed."""
    with tempfile.TemporaryDirectory(prefix="nbgrader-") as tmp:
        log = Path(tmp) / "log"
        code = run(args, cwd, env, log, timeout)
        return code, log.read_text(errors="replace")
