"""The names a student controls: student ids, assignment names and file names.

A name travels from what a student hands in (an exchange folder, an LMS upload, a submitted
folder) into the gradebook, into paths on the instructor's disk and into pages the
instructor opens (Formgrader, feedback, the class report). Only names made of
``[A-Za-z0-9._-]``, not starting with a dot and of at most ``MAX_LENGTH`` characters are
accepted anywhere: no HTML, no path separators, no ``..``, no hidden files.
"""
from __future__ import annotations

import re

MAX_LENGTH = 100
ALLOWED = re.compile(r"[A-Za-z0-9._-]+")


def problem(name: str, what: str = "name") -> str | None:
    """Why ``name`` (a student id, an assignment or a file name) is refused, or None if it
    is safe; ``what`` names it in the message ("student id", "file name", ...)."""
    if not isinstance(name, str) or not name:
        return f"the {what} is empty"
    if len(name) > MAX_LENGTH:
        return f"the {what} {name[:MAX_LENGTH]!r}... is longer than {MAX_LENGTH} characters"
    if name.startswith("."):
        return f"the {what} {name!r} starts with a dot (hidden, or a path like '..')"
    if not ALLOWED.fullmatch(name):
        odd = sorted({c for c in name if not ALLOWED.fullmatch(c)})
        return (f"the {what} {name!r} holds characters other than letters, digits, '.', '_' "
                f"and '-': {', '.join(map(repr, odd))}")
    return None


def safe_form(name: str) -> str | None:
    """``name`` with every character outside ``[A-Za-z0-9._-]`` replaced by ``_`` and its
    leading dots dropped (a browser's ``03_module_linear (1).ipynb`` becomes
    ``03_module_linear__1_.ipynb``), or None when nothing safe is left."""
    form = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")[:MAX_LENGTH]
    return form if is_safe(form) and form.strip("_.-") else None


def is_safe(name: str) -> bool:
    """Whether ``name`` may enter the gradebook, a path or a page."""
    return problem(name) is None
