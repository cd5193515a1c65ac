"""Generate ``release/`` from ``source/`` with nbgrader, byte-stable from run to run.

``release(root)`` syncs the provided cells, runs ``nbgrader generate_assignment
NN_topic --force`` for each unit from the course directory (so its
``nbgrader_config.py`` applies and the gradebook learns each assignment), and
rewrites each release notebook in the canonical form of ``units.write``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from autograder.notebooks.sync import sync
from autograder.notebooks.units import ROOT, Unit, normalise, read, units, write


class ReleaseError(RuntimeError):
    """nbgrader could not generate a unit's release notebook."""


def nbgrader_env() -> dict[str, str]:
    """The environment for the nbgrader command: it runs ``alembic`` from the venv's bin."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    return env


def generate(unit: Unit) -> None:
    """``nbgrader generate_assignment`` for one unit, then normalise its release notebook."""
    command = [sys.executable, "-m", "nbgrader", "generate_assignment", unit.name, "--force",
               f"--CourseDirectory.root={unit.root}"]
    done = subprocess.run(command, cwd=unit.root, env=nbgrader_env(), capture_output=True, text=True)
    if done.returncode != 0 or "ERROR" in done.stderr or not unit.release.exists():
        raise ReleaseError(f"nbgrader generate_assignment {unit} failed:\n{done.stderr[-4000:]}")
    write(normalise(read(unit.release)), unit.release)


def release(root: Path = ROOT, names: list[str] | None = None) -> list[Unit]:
    """Sync, then generate the release notebook of every unit (or of ``names``)."""
    sync(root)
    chosen = [u for u in units(root) if not names or u.name in names]
    missing = set(names or ()) - {u.name for u in chosen}
    if missing:
        raise ReleaseError(f"no such unit(s): {', '.join(sorted(missing))}")
    for unit in chosen:
        generate(unit)
    return chosen
