"""A worker's job gradebook: one engine for every time nbgrader opens it, job after job, and
no wait for the disk; every other database keeps its own engines and SQLite's defaults."""
from __future__ import annotations

import subprocess

import nbgrader.api
import pytest
from nbgrader.api import Gradebook
from nbgrader.dbutil import _temp_alembic_ini

from autograder.pipeline.job import job_gradebook, launch
from autograder.pipeline.course import tool_env


@pytest.fixture(autouse=True)
def alembic_on_path(monkeypatch):
    """nbgrader's ``alembic`` command, which a new gradebook asked for its schema version
    before ``launch`` (imported here) read it in-process, is found."""
    monkeypatch.setenv("PATH", tool_env()["PATH"])


def _synchronous(gb: Gradebook) -> int:
    with gb.engine.connect() as connection:
        return connection.exec_driver_sql("PRAGMA synchronous").scalar()


def test_every_gradebook_opened_there_shares_one_engine(tmp_path):
    shared = tmp_path / "worker" / "gradebook.db"
    shared.parent.mkdir()
    job_gradebook.share(shared)
    url = job_gradebook.url(shared)
    with Gradebook(url) as first, Gradebook(url) as second:
        assert first.engine is second.engine
        first.add_student("ada")
        assert [s.id for s in second.students] == ["ada"]
        assert _synchronous(first) == 0                                 # OFF
    with Gradebook(f"sqlite:///{tmp_path / 'course.db'}") as course:
        assert course.engine is not first.engine
        assert _synchronous(course) == 2                                # FULL, SQLite's default


def test_the_next_job_reads_its_own_file_whatever_the_last_one_left_open(tmp_path):
    """A gradebook nbgrader did not close (it failed half-way) leaves a connection to the old
    file in the engine's pool: the next job must not read that file."""
    shared = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{tmp_path / 'template.db'}") as template:
        template.add_student("bob")
    job_gradebook.share(shared)
    job_gradebook.replace(shared, (tmp_path / "template.db").read_bytes())
    unclosed = Gradebook(job_gradebook.url(shared))
    unclosed.add_student("ada")
    unclosed.db.remove()                   # the session ends; its connection stays pooled
    job_gradebook.replace(shared, (tmp_path / "template.db").read_bytes())
    with Gradebook(job_gradebook.url(shared)) as gb:
        assert [s.id for s in gb.students] == ["bob"]


def test_a_new_gradebook_is_stamped_with_the_head_alembic_names(tmp_path):
    """nbgrader's commands run through ``launch`` read the schema version in their own process;
    a new gradebook gets the revision nbgrader's own ``alembic heads`` command prints."""
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'unused.db'}") as ini:
        heads = subprocess.run(["alembic", "-c", ini, "heads"], capture_output=True, text=True,
                               check=True).stdout
    assert nbgrader.api.get_alembic_version is launch.alembic_head
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        with gb.engine.connect() as connection:
            stamped = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    assert heads.split()[0] == stamped
