"""A grading worker's station: caches built once per machine, a worker's own modules kept out of
the garbage collector's full passes, a job's throw-away gradebook that never waits for the disk."""
from __future__ import annotations

import gc
from importlib import metadata
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from autograder.pipeline import station as station_module
from autograder.pipeline.station import Station
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


def test_a_missing_cache_is_built_again():
    fonts = Station().matplotlib
    for font_list in fonts.glob("fontlist-*.json"):
        font_list.unlink()
    Station()
    assert list(fonts.glob("fontlist-*.json"))


def _synchronous(database: Path) -> int:
    engine = create_engine(f"sqlite:///{database}")
    with engine.connect() as connection:
        return connection.exec_driver_sql("PRAGMA synchronous").scalar()


def test_only_a_jobs_gradebook_skips_waiting_for_the_disk(tmp_path):
    station = Station.get()
    with station.job() as folder:
        (folder / "course").mkdir()
        assert _synchronous(folder / "course" / "gradebook.db") == 0       # OFF
    assert _synchronous(tmp_path / "gradebook.db") == 2                    # FULL, SQLite's default


def test_a_server_databases_connection_is_left_alone():
    """nbgrader's db_url may name PostgreSQL or MySQL: their connections have no execute()."""
    Station.get()
    station_module._throwaway_gradebook(object(), None)
