"""``python -m autograder.pipeline.job.launch ARGS``: ``nbgrader ARGS``, faster and bounded.

- jsonschema's slow optional import is skipped (``autograder/__init__.py`` says why);
- importing this module imports nbgrader (``autograder.pipeline.job.runner``'s fork server
  preloads it);
- a new gradebook (``generate_assignment``'s first) takes nbgrader's schema version from its
  migration scripts in this process (``alembic_head``), where nbgrader starts an ``alembic``
  process for it: a new interpreter that imports SQLAlchemy and nbgrader, 2 s of CPU;
- nbgrader checks each cell's metadata with ``jsonschema.validate``, which checks the schema
  itself first, every time: its validator is built once here (``CompiledSchemas``), for the
  same verdicts (unit 09's notebook: 0.002 s instead of 0.022 s, twice in each grading job);
- nbformat compiles its notebook schema at a process's first validation (0.06 s for the two
  a grading job uses): done here, so the fork server's children start with it;
- ``AUTOGRADER_PROCESS_MEMORY``: an ``RLIMIT_AS`` for this process and, inherited,
  its kernels: a backstop behind the grading kernel's own, lower limit.

A grading job imports this module for the same speed (``autograder.pipeline.job.job``).
"""
from __future__ import annotations

import json
import os
import resource
import sys

import jsonschema
import nbformat
import nbgrader.api
import nbgrader.nbgraderformat.common
from alembic.script import ScriptDirectory
from nbgrader.apps.nbgraderapp import main as nbgrader_main
from nbgrader.dbutil import ALEMBIC_DIR


def alembic_head() -> str:
    """The revision ``alembic heads`` names first for nbgrader's migrations: the version a
    new gradebook is stamped with."""
    return ScriptDirectory(ALEMBIC_DIR).get_current_head()


nbgrader.api.get_alembic_version = alembic_head


class CompiledSchemas:
    """``jsonschema`` as nbgrader's metadata validator uses it, ``validate(instance, schema)``
    with the same verdict and error, each schema checked and its validator built once."""

    def __init__(self) -> None:
        self._validators: dict[str, jsonschema.protocols.Validator] = {}

    def validate(self, instance, schema: dict) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            self._validators[key] = cls(schema)
        error = jsonschema.exceptions.best_match(self._validators[key].iter_errors(instance))
        if error is not None:
            raise error


nbgrader.nbgraderformat.common.jsonschema = CompiledSchemas()
for relaxed in (False, True):     # reading and writing a notebook; nbconvert's preprocessors
    nbformat.validator.get_validator(nbformat.v4.nbformat, nbformat.v4.nbformat_minor,
                                     relax_add_props=relaxed)


def main() -> None:
    memory = int(os.environ.get("AUTOGRADER_PROCESS_MEMORY", "0"))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.argv = ["nbgrader", *sys.argv[1:]]
    nbgrader_main()


if __name__ == "__main__":
    main()
