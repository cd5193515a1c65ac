"""What a grading worker must have installed exactly as the instructor does.

A worker grades with its own copy of nbgrader, the kernel's libraries and the
course's packages (the checks, the reference, the student helpers). A worker with
another version of any of them could score the same submission differently, so
``installed()`` names each part with its version (the course's packages by a hash of
their source files) and the executor compares every worker's with the instructor's
before a grade is written (``differences``).
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import import_module, metadata
from pathlib import Path

DISTRIBUTIONS = ("nbgrader", "nbconvert", "nbclient", "nbformat", "jupyter_client", "ipykernel",
                 "numpy", "scipy", "matplotlib", "minitorch-course")
PACKAGES = ("autograder", "minitorch_ref", "course")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _source_hash(package: str) -> str:
    """A hash of a package's ``.py`` files (names and contents), wherever it is imported from."""
    try:
        module = import_module(package)
    except ImportError:
        return "not installed"
    if module.__file__ is None:       # a folder of that name without __init__.py came first
        return f"hidden by the folder {', '.join(module.__path__)} (no __init__.py)"
    folder = Path(module.__file__).parent
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        hasher.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return "source " + hasher.hexdigest()[:16]


@lru_cache(maxsize=1)
def installed() -> dict[str, str]:
    """This process's versions: ``{name: version or source hash}``."""
    return {**{d: _version(d) for d in DISTRIBUTIONS},
            **{f"{p} package": _source_hash(p) for p in PACKAGES}}


def differences(expected: dict[str, str], found: dict[str, str]) -> list[str]:
    """What differs, as ``name: expected here, found there`` lines (empty: the same)."""
    return [f"{name}: {expected[name]} here, {found.get(name, 'not reported')} there"
            for name in expected if found.get(name) != expected[name]]
