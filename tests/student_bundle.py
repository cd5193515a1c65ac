"""The student bundle of the whole term, installed alone in a fresh virtual environment, and
each of its release notebooks validated there once, as the students' Validate button does.

One session builds these once (tests/workers.py keeps their readers on one worker):
tests/pipeline/test_bundle.py reads what the bundle holds, how it installs and how each
notebook ran; tests/notebooks/test_validation.py reads the inverted verdict of the same run.
The virtual environment is new and empty (no ``--system-site-packages``, which would see the
development packages). Its wheels come from a wheelhouse kept between runs in
``~/.cache/minitorch-course/wheelhouse`` (``MINITORCH_COURSE_CACHE``): the first run fills it
from the package index, later runs install offline from it.
(Loaded as a plugin by tests/conftest.py: pytest puts tests/ on ``sys.path``.)
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.hub.student_env import wheelhouse
from autograder.notebooks.schedule import load
from autograder.notebooks.units import ROOT, units
from autograder.pipeline.term.bundle import build

VALIDATE = Path(__file__).with_name("student_validate.py")
JUPYTER_STATE = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "MPLCONFIGDIR", "JUPYTER_PATH")


@dataclass
class StudentEnv:
    venv: Path
    python: Path
    env: dict[str, str]      # the environment a student's processes get: no development tree
    seconds: float           # making the venv and installing the requirements


def clean_env() -> dict[str, str]:
    """The environment without the development tree: a PYTHONPATH naming the repository
    would show pip the full project's metadata, and Python the reference packages."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def install(python: Path, bundle: Path) -> None:
    """Offline from the wheelhouse if it has everything; otherwise fill it first. The
    course's own wheel always comes from the bundle, never from the cache."""
    house = wheelhouse()
    house.mkdir(parents=True, exist_ok=True)
    # --no-compile halves the install; modules the notebooks import compile on first use.
    offline = [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "--no-index",
               "--find-links", str(house), "-r", str(bundle / "requirements.txt")]
    if subprocess.run(offline, cwd=bundle, env=clean_env(), capture_output=True).returncode != 0:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(house),
                        "-r", str(bundle / "requirements.txt")], cwd=bundle, env=clean_env(), check=True)
        for stale in house.glob("minitorch_course-*"):
            stale.unlink()
        subprocess.run(offline, cwd=bundle, env=clean_env(), check=True)


def after_the_term() -> object:
    """A moment after every unit of the course's schedule has closed: all of them go out."""
    schedule = load(ROOT, [u.name for u in units(ROOT)])
    return max(window.closes for window in schedule.windows.values())


@pytest.fixture(scope="session")
def student_bundle(tmp_path_factory) -> Path:
    return build(ROOT, tmp_path_factory.mktemp("bundle") / "student-bundle", now=after_the_term())


@pytest.fixture(scope="session")
def student_env(student_bundle, tmp_path_factory) -> StudentEnv:
    """A new virtual environment with the bundle's requirements, and a student's environment
    variables (Jupyter's state in a folder of its own, the venv first on PATH)."""
    base = tmp_path_factory.mktemp("student-env")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    install(base / "venv" / "bin" / "python", student_bundle)
    env = clean_env() | {name: str(base / "state" / name.lower()) for name in JUPYTER_STATE}
    env["PATH"] = os.pathsep.join([str(base / "venv" / "bin"), env.get("PATH", "")])
    return StudentEnv(base / "venv", base / "venv" / "bin" / "python", env,
                      time.monotonic() - started)


@pytest.fixture(scope="session")
def release_runs(student_bundle, student_env, tmp_path_factory) -> dict[str, dict]:
    """Each release notebook of the bundle validated once in the student environment
    (tests/student_validate.py), in a copy of its folder, by unit: two processes, one kernel
    per core, each validating every other notebook (nbgrader imported once per process)."""
    work = tmp_path_factory.mktemp("student-work")
    copies = [shutil.copytree(folder, work / folder.name) / f"{folder.name}.ipynb"
              for folder in sorted((student_bundle / "notebooks").iterdir())]

    def run(notebooks: list[Path]) -> list[dict]:
        done = subprocess.run([str(student_env.python), str(VALIDATE), *map(str, notebooks)],
                              cwd=work, env=student_env.env, capture_output=True, text=True,
                              timeout=1200)
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {report["unit"]: report for half in pool.map(run, [copies[0::2], copies[1::2]])
                for report in half}
