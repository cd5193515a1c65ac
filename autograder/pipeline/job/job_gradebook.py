"""A grading worker's job gradebook: one SQLite file, one SQLAlchemy engine, job after job.

A job autogrades into a private gradebook (``autograder.pipeline.gradebook``), which nbgrader
opens about ten times per job (``nbgrader.api.Gradebook``), each time with a SQLAlchemy
engine of its own. An engine keeps the statements it has compiled, so every new engine
compiled nbgrader's queries again: a fifth of a grading worker's CPU time on a release
submission of unit 3. A worker grades one job at a time, always into the same file
(``Station.gradebook``): after ``share(path)``, every gradebook nbgrader opens at ``path``
in this process uses one engine, made the first time, whose statements stay compiled from
job to job. ``replace`` puts the next job's gradebook in place, once the engine has closed
every connection it holds, so that none reads the file it replaced (nbgrader closes its
gradebooks, but not one it was using when it failed).

That engine's connections do not wait for the disk (``PRAGMA synchronous = OFF``, the
journal in memory): the file is written by one job, read once, then replaced, and nbgrader
commits about thirty times per job (a millisecond each on a local disk, far more on a
network one). Every other database, the course's gradebook above all, keeps its engines
and SQLite's defaults.
"""
from __future__ import annotations

from pathlib import Path

import nbgrader.api
import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autograder.pipeline.gradebook import url

_shared: dict[str, Engine | None] = {}      # URL: its engine, once nbgrader has opened it


def share(path: Path) -> None:
    """Let every gradebook nbgrader opens at ``path`` in this process use one engine."""
    _shared.setdefault(url(path), None)
    nbgrader.api.create_engine = create_engine


def replace(path: Path, data: bytes) -> None:
    """Make ``data`` the gradebook at ``path``, for the next job."""
    engine = _shared.get(url(path))
    if engine is not None:
        engine.dispose()
    path.unlink(missing_ok=True)
    path.write_bytes(data)


def create_engine(db_url, **kwargs) -> Engine:
    """SQLAlchemy's ``create_engine``, which gives a shared gradebook's engine again."""
    key = str(db_url)
    if key not in _shared:
        return sqlalchemy.create_engine(db_url, **kwargs)
    if _shared[key] is None:
        _shared[key] = engine = sqlalchemy.create_engine(db_url, **kwargs)
        event.listen(engine, "connect", _without_waiting)
    return _shared[key]


def _without_waiting(connection, _record) -> None:
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute("PRAGMA journal_mode = MEMORY")
