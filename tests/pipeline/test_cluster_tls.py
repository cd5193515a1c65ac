"""The grading cluster lets in only holders of its credentials (issue 32).

The attack: while ``python -m autograder grade`` runs, another process on the machine finds the
cluster's ports and asks for code to run (``Client(...).run``, or a worker's or nanny's ``run``
handler, or the scheduler's ``run_function``) on workers that hold the instructor's rights, or
in the grader's own process. A real grading run is attacked on every port it listens on, as
that process would: in the clear, over TLS with a certificate of its own, over TLS with none.
An existing cluster must be ``tls://`` (the instructor's certificate files, made with the
openssl command of docs/deploying.md) or ``--insecure``.
"""
from __future__ import annotations

import asyncio
import http.client
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

import dask
import psutil
import pytest
from distributed import Client
from distributed.core import rpc
from distributed.protocol.pickle import dumps
from distributed.security import Security

from autograder.__main__ import main
from autograder.pipeline.executor.executor import Executor
from autograder.pipeline.ledger.grade import GradingError, grade
from autograder.pipeline.executor.tls import TLSFiles
from grading_cluster import (LIMITS, UNIT, dask_cluster, hand_in, kill_group, make_credentials,
                             tls_options, total)

pytestmark = pytest.mark.pipeline
SLOW_HONEST = "import time\ntime.sleep(15)"    # grading lasts long enough to be attacked
ATTEMPT_SECONDS = 3


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter, new_course) -> Path:
    root = tmp_path_factory.mktemp("cluster-tls") / "course"
    new_course(root, [UNIT])
    return root


def _tree(pid: int) -> list[psutil.Process]:
    parent = psutil.Process(pid)
    return [parent, *parent.children(recursive=True)]


def _sockets(process: psutil.Process) -> list:
    """The process's inet sockets; none once it has ended (processes come and go mid-run)."""
    try:
        return process.net_connections(kind="inet")
    except psutil.Error:
        return []


def _listening(pid: int) -> set[tuple[str, int]]:
    """The (address, port) pairs the process ``pid`` and its descendants listen on."""
    return {(c.laddr.ip, c.laddr.port) for p in _tree(pid) for c in _sockets(p)
            if c.status == psutil.CONN_LISTEN}


def _runs_a_kernel(process: psutil.Process) -> bool:
    """``spawn``: a sandboxed kernel the zygote forked, so a job is in flight."""
    try:
        return "autograder.pipeline.sandbox.spawn" in " ".join(process.cmdline())
    except psutil.Error:
        return False


def _wait_until_grading(grader: subprocess.Popen) -> None:
    """Until a job of the grader's is in flight."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and grader.poll() is None:
        if any(_runs_a_kernel(p) for p in _tree(grader.pid)):
            return
        time.sleep(0.1)
    raise AssertionError("no job of the grading run was caught in flight")


def _no_certificate() -> ssl.SSLContext:
    """TLS that checks nothing and presents no certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


async def _handler_run(address: str, connection_args: dict, op: str, function) -> object:
    """A worker's or nanny's ``run`` handler, or the scheduler's ``run_function``, called
    directly."""
    async with rpc(address, connection_args=connection_args, timeout=ATTEMPT_SECONDS) as remote:
        return await getattr(remote, op)(function=dumps(function))


async def _client_run(address: str, security: Security | None, function) -> object:
    """The issue's attack: ``Client(address).run(function)``."""
    async with Client(address, security=security, timeout=ATTEMPT_SECONDS,
                      asynchronous=True) as client:
        return await client.run(function)


def _attempts(port: int, function) -> Iterator[tuple[str, Callable[[], Awaitable]]]:
    """Every way in on ``port``, each named: in the clear, over TLS with a certificate of the
    attacker's own (made as the grader makes its own), over TLS with no certificate."""
    own = Security.temporary()
    channels = {"plain tcp": ("tcp", None, {}),
                "tls, a certificate of its own": ("tls", own, own.get_connection_args("client")),
                "tls, no certificate": ("tls", None, {"ssl_context": _no_certificate()})}
    for channel, (scheme, security, connection_args) in channels.items():
        address = f"{scheme}://127.0.0.1:{port}"
        for op in ("run", "run_function"):
            yield f"{op} ({channel})", partial(_handler_run, address, connection_args, op,
                                               function)
        if scheme == "tcp" or security is not None:
            yield f"Client.run ({channel})", partial(_client_run, address, security, function)


def _serves_http(port: int) -> bool:
    """A Dask web server's port (the dashboard, a worker's health and metrics pages), where
    a Dask client would wait for an answer that never comes."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
            return True
    except (OSError, http.client.HTTPException):
        return False


def _attack(port: int, marker: Path) -> dict[str, str]:
    """What each attempt on ``port`` to create ``marker`` got: ``ran`` or the error's name."""
    outcomes = {}
    for name, attempt in _attempts(port, marker.touch):
        try:
            asyncio.run(asyncio.wait_for(attempt(), 2 * ATTEMPT_SECONDS))
            outcomes[name] = "ran"
        except Exception as error:  # noqa: BLE001 - every refusal is an outcome
            outcomes[name] = type(error).__name__
    return outcomes


def _metrics(dashboard: str) -> str:
    """The dashboard's Prometheus page, which lists the scheduler's task prefixes."""
    url = dashboard.replace("/status", "/metrics")
    with urllib.request.urlopen(url, timeout=10) as page:
        return page.read().decode()


@pytest.fixture(scope="module")
def attacked(course, tmp_path_factory) -> dict:
    """A real grading run (``python -m autograder grade``, its own local cluster), attacked on
    every port it listens on while a job is in flight."""
    hand_in(course, "honest", "source", SLOW_HONEST)
    folder = tmp_path_factory.mktemp("attack")
    marker, log = folder / "attacker-ran-here", folder / "grade.log"
    command = [sys.executable, "-m", "autograder", "--course", str(course), "grade", UNIT,
               "--student", "honest", "--workers", "1", "--timeout", "60", "--force"]
    with open(log, "w") as err:
        grader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                  start_new_session=True)
    try:
        _wait_until_grading(grader)
        sockets = _listening(grader.pid)
        dashboard = re.search(r"Dask dashboard: (\S+)", log.read_text()).group(1)
        metrics = _metrics(dashboard)
        outcomes = {port: _attack(port, marker) for _, port in sorted(sockets)
                    if not _serves_http(port)}
        still_grading = grader.poll() is None
        out, _ = grader.communicate(timeout=240)
    finally:
        kill_group(grader)
    return {"outcomes": outcomes, "still_grading": still_grading, "marker": marker,
            "sockets": sockets, "dashboard": dashboard, "metrics": metrics,
            "code": grader.returncode, "out": out, "log": log.read_text()}


def test_no_process_on_the_machine_runs_code_on_the_grading_cluster(attacked):
    outcomes = attacked["outcomes"]
    assert attacked["still_grading"]           # every attempt came while a job was in flight
    assert len(outcomes) >= 3                  # the scheduler, the nanny, the worker
    ran = {port: [name for name, got in tried.items() if got == "ran"]
           for port, tried in outcomes.items()}
    assert not any(ran.values()), f"code ran through {ran}"
    assert not attacked["marker"].exists()


def test_grading_under_attack_scores_the_honest_submission_as_ever(attacked, course):
    assert attacked["code"] == 0, attacked["log"][-3000:]
    assert "graded 1 submission(s)" in attacked["out"]
    assert total(course, "honest") == 10


def test_the_grading_cluster_and_its_dashboard_listen_on_loopback_only(attacked):
    sockets = attacked["sockets"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/status", attacked["dashboard"])
    dashboard_port = int(attacked["dashboard"].rsplit(":", 1)[1].split("/")[0])
    assert dashboard_port in {port for _, port in sockets}
    assert {address for address, _ in sockets} == {"127.0.0.1"}, sockets


def test_the_dashboard_names_no_student(attacked):
    """Anyone on the machine can open the dashboard; its task names say which unit, not who."""
    prefixes = set(re.findall(r'task_prefix_name="([^"]+)"', attacked["metrics"]))
    assert prefixes and all(p.startswith("grade") for p in prefixes), prefixes
    assert "honest" not in attacked["metrics"]


def test_a_local_cluster_alone_listens_on_loopback_only():
    with Executor(None, 1) as executor:
        executor.client.wait_for_workers(1)
        sockets = _listening(os.getpid())
        assert executor.client.scheduler.address.startswith("tls://127.0.0.1:")
        assert executor.dashboard.startswith("http://127.0.0.1:")
    assert {address for address, _ in sockets} == {"127.0.0.1"}, sockets


def test_a_tcp_scheduler_is_refused_unless_the_instructor_says_insecure(course, tmp_path,
                                                                         capsys):
    hand_in(course, "in-the-clear", "source")
    before = (course / "gradebook.db").read_bytes()
    command = ["--course", str(course), "grade", UNIT, "--student", "in-the-clear"]
    with dask_cluster(tmp_path, None, workers=1) as (address, _):
        refused = main([*command, "--scheduler", address])
        err = capsys.readouterr().err
        assert refused == 2
        assert f"refusing to grade on {address}: a Dask scheduler without TLS" in err
        assert (course / "gradebook.db").read_bytes() == before
        assert main([*command, "--scheduler", address, "--insecure"]) == 0
    assert f"WARNING: grading on {address} without TLS (--insecure)" in capsys.readouterr().err
    assert total(course, "in-the-clear") == 10


def _key_readable_by_others(folder: Path, files: TLSFiles) -> TLSFiles:
    folder.mkdir()
    key = folder / "key.pem"
    shutil.copy(files.key, key)
    key.chmod(0o644)
    return TLSFiles(files.ca_file, files.cert, key)


def test_a_tls_scheduler_refuses_whoever_lacks_its_certificates(course, credentials, tmp_path,
                                                                capsys):
    hand_in(course, "tls-refused", "source")
    before = (course / "gradebook.db").read_bytes()
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    junk.chmod(0o600)
    wrong = [(None, "needs the cluster's certificate files: --tls-ca-file"),
             (make_credentials(tmp_path / "other"), "cannot reach the Dask scheduler at tls://"),
             (_key_readable_by_others(tmp_path / "shared", credentials),
              "can be read by other users, and whoever reads it can run code on the cluster"),
             (TLSFiles(junk, junk, junk), "are not a certificate authority, a certificate and "
                                          "its key in PEM")]
    with dask_cluster(tmp_path, credentials, workers=1) as (address, _):
        for files, message in wrong:
            with pytest.raises(GradingError, match=re.escape(message)):
                grade(course, [UNIT], ["tls-refused"], limits=LIMITS, progress=False,
                      scheduler=address, tls_files=files)
        plain = address.replace("tls://", "tcp://")
        with pytest.raises(GradingError, match="is not a tls:// address"):
            grade(course, [UNIT], ["tls-refused"], limits=LIMITS, progress=False,
                  scheduler=plain, tls_files=credentials)
        partial = tls_options(credentials)[:4]        # no --tls-key
        assert main(["--course", str(course), "grade", UNIT, "--scheduler", address,
                     *partial]) == 2
    assert "go together; missing --tls-key" in capsys.readouterr().err
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded" / "tls-refused").exists()


def test_dasks_own_tls_configuration_lets_the_grader_in(course, credentials, tmp_path):
    hand_in(course, "tls-configured", "source")
    configured = {"distributed.comm.tls.ca-file": str(credentials.ca_file),
                  "distributed.comm.tls.client.cert": str(credentials.cert),
                  "distributed.comm.tls.client.key": str(credentials.key)}
    with dask_cluster(tmp_path, credentials, workers=1) as (address, _):
        with dask.config.set(configured):
            summary = grade(course, [UNIT], ["tls-configured"], limits=LIMITS, progress=False,
                            scheduler=address, force=True)
    assert [r.status for r in summary.results] == ["graded"]
    assert total(course, "tls-configured") == 10
