"""``python -m autograder.pipeline.launch ARGS``: ``nbgrader ARGS``, started faster and bounded.

- jsonschema imports ``rfc3987_syntax`` when it is installed, which builds a grammar
  for 1.7 s in every process that imports nbformat; notebooks never use IRI
  formats, so the import is skipped (jsonschema then leaves that one format out).
- importing this module imports nbgrader (``autograder.pipeline.runner``'s fork server
  preloads it);
- ``AUTOGRADER_PROCESS_MEMORY``: an ``RLIMIT_AS`` for this process and, inherited,
  its kernels: a backstop behind the grading kernel's own, lower limit.
"""
from __future__ import annotations

import os
import resource
import sys


sys.modules.setdefault("rfc3987_syntax", None)   # `import rfc3987_syntax` -> ImportError
from nbgrader.apps.nbgraderapp import main as nbgrader_main  # noqa: E402  (after the line above)


def main() -> None:
    memory = int(os.environ.get("AUTOGRADER_PROCESS_MEMORY", "0"))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.argv = ["nbgrader", *sys.argv[1:]]
    nbgrader_main()


if __name__ == "__main__":
    main()
