"""``python -m autograder.pipeline.job.launch ARGS``: ``nbgrader ARGS``, faster and bounded.

- jsonschema's slow optional import is skipped (``autograder/__init__.py`` says why);
- importing this module imports nbgrader (``autograder.pipeline.job.runner``'s fork server
  preloads it);
- ``AUTOGRADER_PROCESS_MEMORY``: an ``RLIMIT_AS`` for this process and, inherited,
  its kernels: a backstop behind the grading kernel's own, lower limit.
"""
from __future__ import annotations

import os
import resource
import sys

from nbgrader.apps.nbgraderapp import main as nbgrader_main


def main() -> None:
    memory = int(os.environ.get("AUTOGRADER_PROCESS_MEMORY", "0"))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.argv = ["nbgrader", *sys.argv[1:]]
    nbgrader_main()


if __name__ == "__main__":
    main()
