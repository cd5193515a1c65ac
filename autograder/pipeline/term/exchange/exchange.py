"""Where the course's nbgrader exchange lives, shared by ``nbgrader_config.py`` and the hub.

A shared folder named by ``MINITORCH_EXCHANGE`` on a hub, else ``<course>-exchange`` beside the
course folder: never inside it, where the instructor's Jupyter server would serve what a
student puts in her inbound from the instructor's origin (issue 46). nbgrader makes the course's inbound, outbound and feedback folders inside it;
the root itself must exist and be writable by every user, with the sticky bit, as nbgrader's
documentation sets it up.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

VARIABLE = "MINITORCH_EXCHANGE"
COURSE_ID_VARIABLE = "MINITORCH_COURSE_ID"
MODE = 0o777 | stat.S_ISVTX


def course_id() -> str:
    """The nbgrader course id: ``$MINITORCH_COURSE_ID``, else ``minitorch``."""
    return os.environ.get(COURSE_ID_VARIABLE) or "minitorch"


def default(course: Path) -> Path:
    """The exchange of ``course`` when ``MINITORCH_EXCHANGE`` names none: beside it."""
    course = Path(course).resolve()
    return course.with_name(f"{course.name}-exchange")


def root(course: Path) -> Path:
    """The exchange root for ``course``, made on first use with the modes nbgrader needs."""
    folder = Path(os.environ.get(VARIABLE) or default(course))
    if not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OSError(f"cannot make the exchange {folder} ({error.strerror}): set "
                          f"{VARIABLE} to a folder every user of the course can write") from None
        folder.chmod(MODE)
    return folder
