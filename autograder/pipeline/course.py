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
        """Why a submitted folder may not be graded (its student id or assignment would carry
        HTML or a path into the gradebook and the instructor's pages), or None."""
        why = names.problem(student, "student id") or names.problem(assignment, "assignment")
        return f"{why} (submitted/{student}/{assignment})" if why else None

    def handed_in(self, student: str, assignment: str) -> tuple[dict[str, bytes], list[str]]:
        """The submission's files for its grading job, and notes for the student. A file whose
        path holds an unsafe name (``names.problem``) is left out (``.ipynb_checkpoints/``,
        ``<svg onload=...>.png``), except a notebook in the folder itself, which travels
        under its ``names.safe_form``: a browser's ``03_module_linear (1).ipynb`` is still
        graded in place of a missing ``03_module_linear.ipynb``."""
        folder, files, left_out = self.submitted(student, assignment), {}, []
        for path in regular_files(folder):
            name = str(path.relative_to(folder))
            if all(names.is_safe(part) for part in path.relative_to(folder).parts):
                files[name] = path.read_bytes()
            elif path.parent == folder and path.suffix == ".ipynb" and _free(
                    form := names.safe_form(path.name), folder, files):
                files[form] = path.read_bytes()
                left_out.append(f"{name!r} (graded as {form})")
            else:
                left_out.append(repr(name))
        notes = [f"Files whose names hold characters other than letters, digits, '.', '_' and "
                 f"'-', or start with a dot, were not graded as named: {', '.join(left_out)}."
                 ] if left_out else []
        return files, notes

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


def _free(name: str | None, folder: Path, taken: dict[str, bytes]) -> bool:
    """Whether a notebook may travel under ``name``: no file of the folder has it already."""
    return name is not None and name not in taken and not (folder / name).exists()


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of nbgrader subprocesses: the venv's bin (alembic) and this repo importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    paths = [str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(extra or {})
    return env
