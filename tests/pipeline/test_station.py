"""A grading worker's station: caches built once per machine, a worker's own modules kept out of
the garbage collector's full passes."""
from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import socket
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

from autograder.pipeline.job import station as station_module
from autograder.pipeline.job.station import Station
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
