"""A pytest plugin for ``pytest --nbval-lax``: keep each notebook as nbval ran it.

With ``--executed-copies DIR`` every notebook nbval runs is written to ``DIR/<its folder>/``
with the outputs its cells gave in nbval's kernel, so that nbgrader's Validator can judge
that same run (``autograder.notebooks.validate.judge``) instead of running it again
(tests/notebooks/test_validation.py). Loaded with ``-p executed_copies``, this folder on
``PYTHONPATH``; under pytest-xdist each worker writes the notebooks it ran.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

RAN = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--executed-copies", metavar="DIR",
                     help="write each notebook nbval ran, with its outputs, into DIR")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """After an nbval cell ran (or raised): its outputs go into the notebook nbval read."""
    try:
        return (yield)
    finally:
        outputs = getattr(item, "test_outputs", None)
        if outputs is not None:
            item.cell.outputs = outputs
            item.config.stash.setdefault(RAN, {})[item.parent.path] = item.parent.nb


def pytest_sessionfinish(session: pytest.Session) -> None:
    folder = session.config.getoption("executed_copies")
    for path, nb in session.config.stash.get(RAN, {}).items() if folder else ():
        copy = Path(folder) / path.parent.name / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(copy))
