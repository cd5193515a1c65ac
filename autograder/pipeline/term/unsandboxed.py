"""Formgrader's Autograde button, refused with a reason.

The button runs nbgrader's own autograde inside the instructor's Jupyter server: the
student's code with the instructor's rights (the course, the gradebook, their tokens), no
sandbox. ``nbgrader_config.py`` gives nbgrader's ``Autograde`` this exporter there; it is
built before anything is copied or deleted, so the refusal changes nothing.
"""
from __future__ import annotations

import sys

from nbconvert.exporters import NotebookExporter

MESSAGE = ("Formgrader's Autograde would run student code in this Jupyter server, with your "
           "rights and no sandbox. Grade with `python -m autograder grade <unit>` (a terminal, "
           "from the course directory), then reload: scores, Manual Grading and feedback "
           "work on its results.")


def in_jupyter_server() -> bool:
    """Whether this process is a Jupyter server (where Formgrader runs)."""
    return "jupyter_server.serverapp" in sys.modules


class RefusedExporter(NotebookExporter):
    """An exporter that cannot be built: the autograde that needs it stops, saying why."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(MESSAGE)
