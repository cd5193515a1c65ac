"""The answers to the notebooks' questions, as the source notebooks' solution cells set them.

The mutation audit grades every check on the reference; for a question check
(``autograder.checks.questions``) the reference is the answer of the source notebook, the
one the course's reference student hands in, read from the solution cell that sets
``answer_<unit>_<key> = ...``. So the audit proves that each notebook's answer and its check's
agree, without a copy of either.
"""
from __future__ import annotations

import re

from autograder.notebooks.sync import reference_code
from autograder.notebooks.units import is_solution, read, units

NAME = re.compile(r"^answer_(?P<unit>\d{2})_\w+$")


def answer(name: str) -> object:
    """The source notebook's answer held by the variable ``name``; LookupError if none."""
    match = NAME.match(name)
    if match is None:
        raise LookupError(f"{name!r} is not the name of an answer")
    namespace: dict[str, object] = {}
    for unit in units():
        if unit.name.startswith(match["unit"] + "_"):
            for cell in read(unit.source).cells:
                if is_solution(cell) and re.search(rf"^{name}\s*=", cell.source, re.MULTILINE):
                    code = compile(reference_code(cell.source), f"<{unit} {name}>", "exec")
                    exec(code, namespace)
    if name not in namespace:
        raise LookupError(f"no solution cell sets {name}")
    return namespace[name]
