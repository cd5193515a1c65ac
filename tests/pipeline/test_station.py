"""A grading worker's station: caches built once per machine, a worker's own modules kept out of
the garbage collector's full passes, no control group left behind by a worker killed mid-job."""
from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import psutil
import pytest

from autograder.pipeline.job import station as station_module
from autograder.pipeline.job.station import Station
from autograder.pipeline.sandbox import cgroups
from autograder.pipeline.sandbox.limits import Limits as GroupLimits
from course.datasets.digits import CACHE_ENV, cached

pytestmark = pytest.mark.pipeline


@pytest.fixture(autouse=True)
def new_machine(tmp_path, monkeypatch):
    """A cache folder of the test's own, empty: a machine that never graded."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def test_the_caches_are_built_once_per_machine(tmp_path, monkeypatch):
    first = Station()
    fonts = tmp_path / "cache" / f"matplotlib-{metadata.version('matplotlib')}"
    assert first.matplotlib == fonts and first.datasets == tmp_path / "cache"
    assert cached(first.datasets) and list(fonts.glob("fontlist-*.json"))
    assert gc.get_freeze_count() > 0

    def no_second_build(*args, **kwargs):
        raise AssertionError(f"the caches were built again: {args}")

    monkeypatch.setattr(station_module.subprocess, "run", no_second_build)
    assert Station().matplotlib == fonts


def _station_made_and_removed() -> None:
    shutil.rmtree(Station().dir)


def test_workers_starting_together_on_a_new_machine_build_the_caches_once(tmp_path, monkeypatch):
    builds, build = tmp_path / "builds", station_module.subprocess.run

    def counted(*args, **kwargs):
        with open(builds, "a") as log:
            log.write("built\n")
        return build(*args, **kwargs)

    monkeypatch.setattr(station_module.subprocess, "run", counted)
    workers = [multiprocessing.get_context("fork").Process(target=_station_made_and_removed)
               for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0, 0]
    assert builds.read_text() == "built\n"
    assert cached(tmp_path / "cache")


def test_a_missing_cache_is_built_again():
    fonts = Station().matplotlib
    for font_list in fonts.glob("fontlist-*.json"):
        font_list.unlink()
    Station()
    assert list(fonts.glob("fontlist-*.json"))


def test_a_temporary_folder_too_deep_for_unix_sockets_is_not_used(tmp_path, monkeypatch):
    """Under a long TMPDIR the kernels' and the checks' sockets would not fit their 107 bytes
    (the zygote could not even start): the station goes to /tmp, where the deepest one binds."""
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setattr(station_module.tempfile, "tempdir", str(deep))
    monkeypatch.setattr(station_module.subprocess, "run", lambda *args, **kwargs: None)
    station = Station()
    try:
        assert station.dir.parent == Path("/tmp")
        deepest = station.dir / station_module.DEEPEST_SOCKET
        deepest.parent.mkdir(parents=True)
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(str(deepest))
    finally:
        shutil.rmtree(station.dir)
    short = tempfile.mkdtemp(dir="/tmp")
    monkeypatch.setattr(station_module.tempfile, "tempdir", short)
    assert station_module.base() == short
    os.rmdir(short)


needs_cgroups = pytest.mark.skipif(
    os.environ.get("CI") != "true" and cgroups.unavailable() is not None,
    reason="needs control groups the grader can make (root; under CI=true, a failure)")
# A worker in the middle of a job: the job's group made by the station, its kernel (a sleep)
# born in it, started in a session of its own when the kernel is to outlive the worker.
WORKER = """
import subprocess, sys
from autograder.pipeline.job.station import Station
with Station().job() as (folder, group):
    kernel = subprocess.Popen(["sleep", "600"], preexec_fn=group.join_self,
                              start_new_session=sys.argv[1] == "orphan")
    print(kernel.pid, flush=True)
    kernel.wait()
"""


def _killed_mid_job(kernel: str) -> tuple[str, int]:
    """A worker SIGKILLed with its process group during a job: its group's name, its kernel."""
    worker = subprocess.Popen([sys.executable, "-c", WORKER, kernel], stdout=subprocess.PIPE,
                              start_new_session=True)
    kernel_pid = int(worker.stdout.readline())
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    return f"{station_module.CGROUP_PREFIX}{worker.pid}", kernel_pid


@needs_cgroups
def test_a_worker_killed_mid_job_leaves_no_group_to_the_next_worker(monkeypatch):
    """Nothing ran the killed workers' clean-up, so their groups stayed; the next station's
    start removes the empty ones, keeps a live worker's and one a surviving kernel holds."""
    monkeypatch.delenv(CACHE_ENV)       # the machine's caches: the workers build them once
    orphaned, kernel = _killed_mid_job("orphan")
    killed, _ = _killed_mid_job("killed")
    live = cgroups.group(f"{station_module.CGROUP_PREFIX}{os.getpid()}/00001")
    live.create(GroupLimits())
    try:
        assert cgroups.group(killed).subgroups() == {"00001"}
        assert cgroups.group(orphaned).subgroups() == {"00001"}
        Station()
        assert cgroups.group(killed).subgroups() == set()
        assert killed not in cgroups.group("").subgroups()
        assert {orphaned, live.name.split("/")[0]} <= cgroups.group("").subgroups()
        os.kill(kernel, signal.SIGKILL)
        while cgroups.group(f"{orphaned}/00001").processes():
            time.sleep(0.05)
        assert station_module.remove_abandoned_groups() == [orphaned]
    finally:
        os.kill(kernel, signal.SIGKILL) if psutil.pid_exists(kernel) else None
        live.remove()
        cgroups.group(live.name.split("/")[0]).remove()
