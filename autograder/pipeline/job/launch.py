"""``python -m autograder.pipeline.job.launch ARGS``: ``nbgrader ARGS``, faster and bounded.

- jsonschema's slow optional import is skipped (``autograder/__init__.py`` says why);
- importing this module imports nbgrader (``autograder.pipeline.job.runner``'s fork server
  preloads it);
- a new gradebook (``generate_assignment``'s first) takes nbgrader's schema version from its
  migration scripts in this process (``alembic_head``), where nbgrader starts an ``alembic``
  process for it: a new interpreter that imports SQLAlchemy and nbgrader, 2 s of CPU;
- ``AUTOGRADER_PROCESS_MEMORY``: an ``RLIMIT_AS`` for this process and, inherited,
  its kernels: a backstop behind the grading kernel's own, lower limit.
"""
from __future__ import annotations

import os
import resource
import sys

import nbgrader.api
from alembic.script import ScriptDirectory
from nbgrader.apps.nbgraderapp import main as nbgrader_main
from nbgrader.dbutil import ALEMBIC_DIR


def alembic_head() -> str:
    """The revision ``alembic heads`` names first for nbgrader's migrations: the version a
    new gradebook is stamped with."""
    return ScriptDirectory(ALEMBIC_DIR).get_current_head()


nbgrader.api.get_alembic_version = alembic_head


def main() -> None:
    memory = int(os.environ.get("AUTOGRADER_PROCESS_MEMORY", "0"))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.argv = ["nbgrader", *sys.argv[1:]]
    nbgrader_main()


if __name__ == "__main__":
    main()
