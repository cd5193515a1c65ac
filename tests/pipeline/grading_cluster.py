"""What the Dask tests share: students who hand in unit 01 (the course: tests/scratch.py), their
scores in the gradebook, TLS credentials made as docs/deploying.md says, and real ``dask scheduler``
and ``dask worker`` processes started with them.

(Imported as ``grading_cluster``: pytest puts this folder on ``sys.path``.)
"""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import nbformat
from browser import free_port
from distributed import Client

from autograder.pipeline.demo.scenario import TIMESTAMP
from autograder.pipeline.job.job import Limits
from autograder.pipeline.executor.tls import TLSFiles

UNIT = "01_setup"
DASK = str(Path(sys.executable).parent / "dask")
LIMITS = Limits(cell_timeout=30)


def make_credentials(folder: Path) -> TLSFiles:
    """A key and a self-signed certificate that is its own certificate authority, made with
    the openssl command of docs/deploying.md ("An existing cluster over TLS")."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-days", "30",
                    "-subj", "/CN=grading-cluster", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    key.chmod(0o600)
    return TLSFiles(ca_file=cert, cert=cert, key=key)


def tls_options(files: TLSFiles) -> list[str]:
    """``--tls-ca-file CA --tls-cert CERT --tls-key KEY``: the same options for ``dask
    scheduler``, ``dask worker`` and ``python -m autograder grade``."""
    return ["--tls-ca-file", str(files.ca_file), "--tls-cert", str(files.cert),
            "--tls-key", str(files.key)]


def _notebook(root: Path, kind: str, extra: str | None = None) -> nbformat.NotebookNode:
    nb = nbformat.read(str(root / kind / UNIT / f"{UNIT}.ipynb"), as_version=4)
    if extra is not None:
        nb.cells.insert(1, nbformat.v4.new_code_cell(extra))
    return nb


def hand_in(root: Path, student: str, kind: str = "source", extra: str | None = None) -> None:
    """``student`` hands in the solution (``source``) or the release, with ``extra`` code run
    right after the set-up cell."""
    folder = root / "submitted" / student / UNIT
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(_notebook(root, kind, extra), str(folder / f"{UNIT}.ipynb"))
    (folder / "timestamp.txt").write_text(TIMESTAMP)


def total(root: Path, student: str) -> float:
    with sqlite3.connect(root / "gradebook.db") as db:
        return db.execute(
            "SELECT SUM(COALESCE(g.auto_score, 0)) FROM grade g "
            "JOIN submitted_notebook n ON g.notebook_id = n.id "
            "JOIN submitted_assignment a ON n.assignment_id = a.id "
            "JOIN student s ON a.student_id = s.id WHERE s.id = ?", (student,)).fetchone()[0]


@contextmanager
def dask_cluster(tmp_path: Path, files: TLSFiles | None, workers: int = 1,
                 wrap: tuple[str, ...] = (), preload: str | None = None, threads: int = 1):
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes of ``threads`` threads (each
    wrapped in ``wrap``, e.g. bubblewrap), started with the TLS ``files`` (in the clear without
    them); yields the scheduler's address and the workers' processes."""
    protocol = "tls" if files else "tcp"
    address = f"{protocol}://127.0.0.1:{free_port()}"
    secure = tls_options(files) if files else []
    logs = tmp_path / "dask-logs"
    logs.mkdir(exist_ok=True)

    def start(name: str, args: list[str]) -> subprocess.Popen:
        with open(logs / f"{name}.log", "w") as log:
            return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=tmp_path)

    processes = [start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--protocol",
                                     protocol, "--port", address.rsplit(":", 1)[1],
                                     "--no-dashboard", *secure])]
    extra = ["--preload", preload] if preload else []
    worker_processes = [start(f"worker-{n}", [*wrap, DASK, "worker", address, "--nthreads",
                                              str(threads), "--no-dashboard", *secure, *extra])
                        for n in range(workers)]
    processes += worker_processes
    try:
        with Client(address, timeout=30, security=files and files.security()) as client:
            if workers:
                client.wait_for_workers(workers, timeout=60)
        yield address, worker_processes
    finally:
        for process in processes:
            kill_group(process)


def kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
