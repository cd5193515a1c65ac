"""The nbgrader course directory: its units, submissions and gradebook, by path.

Submissions follow nbgrader's layout, ``submitted/<student>/<assignment>/``; the
grader writes ``autograded/<student>/<assignment>/`` (the executed notebooks and
``.grading.json``, what the pipeline recorded) and ``feedback/...``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.notebooks.units import units
from autograder.pipeline import names

REPO = Path(__file__).resolve().parents[2]   # where the autograder package lives
RECORD = ".grading.json"


@dataclass(frozen=True)
class Course:
    """A course directory (the repository root, or a scratch copy of it)."""

    root: Path

    @property
    def gradebook(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"

    @property
    def config(self) -> Path:
        return self.root / "nbgrader_config.py"

    def submitted(self, student: str, assignment: str) -> Path:
        return self.root / "submitted" / student / assignment

    def autograded(self, student: str, assignment: str) -> Path:
        return self.root / "autograded" / student / assignment

    def feedback(self, student: str, assignment: str) -> Path:
        return self.root / "feedback" / student / assignment

    def release(self, assignment: str) -> Path:
        return self.root / "release" / assignment

    def units(self) -> list[str]:
        """The course's units, in order (``source/NN_topic``)."""
        return [unit.name for unit in units(self.root)]

    def submissions(self, assignments: list[str], students: list[str] | None = None
                    ) -> list[tuple[str, str]]:
        """``(student, assignment)`` for every submitted folder, ordered by assignment, student."""
        found = []
        for assignment in assignments:
            for folder in sorted((self.root / "submitted").glob(f"*/{assignment}")):
                student = folder.parent.name
                if folder.is_dir() and (students is None or student in students):
                    found.append((student, assignment))
        return found

    def unsafe(self, student: str, assignment: str) -> str | None:
        """Why a submitted folder may not be graded (its student id or a file name in it would
        carry HTML or a path into the gradebook and the instructor's pages), or None."""
        why = names.problem(student, "student id")
        if why:
            return f"{why} ({assignment})"
        folder = self.submitted(student, assignment)
        for path in regular_files(folder):
            for part in path.relative_to(folder).parts:
                why = names.problem(part, "file name")
                if why:
                    return f"{why} (submitted/{student}/{assignment})"
        return None

    def record(self, student: str, assignment: str) -> dict:
        """What the pipeline recorded when it last graded this submission ({} if never)."""
        path = self.autograded(student, assignment) / RECORD
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}


def regular_files(folder: Path) -> list[Path]:
    """A submission folder's regular files, sorted (symbolic links, and what they lead to, left out)."""
    return sorted(path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()
                  and not any((folder / parent).is_symlink()
                              for parent in path.relative_to(folder).parents[:-1]))


def digest(folder: Path) -> str:
    """A hash of a submission folder's regular files (names and contents)."""
    hasher = hashlib.sha256()
    for path in regular_files(folder):
        hasher.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                hasher.update(block)
    return hasher.hexdigest()


def read_files(folder: Path) -> dict[str, bytes]:
    """A submission folder's regular files by relative path: what a grading job receives."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in regular_files(folder)}


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of nbgrader subprocesses: the venv's bin (alembic) and this repo importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    paths = [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(extra or {})
    return env
