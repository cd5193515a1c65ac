"""The course on the hub belongs to the instructor's account, not to root.

The instructor's server runs as an account of its own (``accounts.INSTRUCTOR``) in a sandbox
like a student's (``sandbox``), so that whatever runs in it (a cell, a terminal, a script
that found its way into the instructor's pages) has that account's rights and no more. At
the hub's start, before that server runs, ``hand_over`` gives the account the course's data:

- ``source/``, ``release/``, ``submitted/``, ``autograded/``, ``feedback/``, ``downloaded/``,
  the gradebook and nbgrader's log (made first if missing, so that root never makes them),
  each recursively and without following links (``chown -R -P``);
- the course folder itself stays its owner's, with the account's group allowed to add
  files (mode 1775: the gradebook's journal, new exports) and the sticky bit, so that the
  account renames or removes nothing it does not own: ``nbgrader_config.py``, the code and
  the virtual environment, which the hub (root) imports and runs, stay root's.

The hub's own imports never come from the course folder (``autograder.hub.__main__``), so a
file the instructor adds there runs nowhere but in the instructor's own processes.
"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.hub.accounts import Account

DATA = ("source", "release", "submitted", "autograded", "feedback", "downloaded")
GRADEBOOK, LOG = "gradebook.db", ".nbgrader.log"
COURSE_MODE = 0o1775


def hand_over(course: Path, course_id: str, account: Account) -> None:
    """Give ``account`` the course's data and its group leave to add files (see the module)."""
    course = Path(course)
    if not os.path.lexists(course / GRADEBOOK):
        Gradebook(f"sqlite:///{course / GRADEBOOK}", course_id).close()
    if not os.path.lexists(course / LOG):
        os.close(os.open(course / LOG, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    found = [str(course / name) for name in (*DATA, GRADEBOOK, LOG)
             if (course / name).exists() and not (course / name).is_symlink()]
    done = subprocess.run(["chown", "-R", "-P", "--no-dereference",
                           f"{account.uid}:{account.gid}", *found], capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"the course's files could not be given to {account.name}: {done.stderr.strip()}")
    os.chown(course, os.stat(course).st_uid, account.gid)
    os.chmod(course, stat.S_IMODE(os.stat(course).st_mode) | COURSE_MODE)
