"""The environment student servers run from: the student bundle's, plus JupyterHub's
single-user server, and nothing of the instructor's (no ``minitorch_ref``, no ``autograder``, no
``names``: its lists hold the grader's held-out names).

``python -m autograder.hub.student_env VENV`` (``make hub`` runs it) builds the student
bundle (``autograder.pipeline.term.bundle``) and installs its ``requirements.txt`` into a new
virtual environment ``VENV`` made from this interpreter, with ``jupyterhub`` at the hub's own
version. Wheels come from the wheelhouse the bundle test keeps
(``~/.cache/minitorch-course/wheelhouse``, ``MINITORCH_COURSE_CACHE``), filled from the
package index the first time. A stamp in ``VENV`` records what was installed: a second run
with the same bundle does nothing.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import version
from pathlib import Path

from autograder.pipeline.term.bundle import build as build_bundle
from autograder.pipeline.course import REPO

STAMP = ".student-bundle.sha256"
# the reference, the grader, and the `names` package, whose lists hold the grader's held-out
# names (autograder.held_out)
FORBIDDEN_MODULES = ("minitorch_ref", "autograder", "names")


def wheelhouse() -> Path:
    base = os.environ.get("MINITORCH_COURSE_CACHE") or Path.home() / ".cache" / "minitorch-course"
    return Path(base) / "wheelhouse"


def interpreter(venv: Path) -> Path:
    """The Python prefix ``venv`` was made from (its ``pyvenv.cfg`` ``home`` is its bin/)."""
    for line in (venv / "pyvenv.cfg").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return Path(value.strip()).resolve().parent
    raise ValueError(f"{venv / 'pyvenv.cfg'} names no home interpreter")


def build(venv: Path, course: Path = REPO) -> Path:
    """Make ``venv`` the student environment of ``course``'s bundle (a no-op if it is)."""
    venv = Path(venv).resolve()
    with tempfile.TemporaryDirectory(prefix="hub-student-bundle-") as tmp:
        bundle = build_bundle(course, Path(tmp) / "bundle")
        requirements = bundle / "requirements.txt"
        with requirements.open("a") as pins:
            pins.write(f"jupyterhub=={version('jupyterhub')}\n")
        key = _fingerprint(bundle)
        if (venv / STAMP).is_file() and (venv / STAMP).read_text() == key:
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                        str(venv)], check=True)
        _install(venv / "bin" / "python", bundle)
    _audit(venv)
    (venv / STAMP).write_text(key)
    return venv


def _fingerprint(bundle: Path) -> str:
    """The requirements and the contents of the course wheel (not its bytes: zip times vary)."""
    digest = hashlib.sha256((bundle / "requirements.txt").read_bytes())
    for wheel in sorted((bundle / "wheels").glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for name in sorted(archive.namelist()):
                digest.update(name.encode() + archive.read(name))
    return digest.hexdigest()


def _install(python: Path, bundle: Path) -> None:
    """Offline from the wheelhouse; when it lacks a wheel, fill it from the index first.
    The course wheel always comes from the bundle."""
    house = wheelhouse()
    house.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    offline = [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--find-links",
               str(house), "-r", "requirements.txt"]
    if subprocess.run(offline, cwd=bundle, env=env, capture_output=True).returncode != 0:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(house),
                        "-r", "requirements.txt"], cwd=bundle, env=env, check=True)
        for stale in house.glob("minitorch_course-*"):
            stale.unlink()
        subprocess.run(offline, cwd=bundle, env=env, check=True)


def _audit(venv: Path) -> None:
    """Refuse an environment where the reference, the autograder or the held-out names import."""
    probe = "import importlib.util, sys; print([m for m in sys.argv[1:] if importlib.util.find_spec(m)])"
    found = subprocess.run([str(venv / "bin" / "python"), "-c", probe, *FORBIDDEN_MODULES],
                           cwd="/", capture_output=True, text=True, check=True,
                           env={"PATH": "/usr/bin:/bin"}).stdout.strip()
    if found != "[]":
        raise RuntimeError(f"the student environment {venv} imports {found}: it must not")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m autograder.hub.student_env VENV")
    print(f"student environment: {build(Path(sys.argv[1]))}")
