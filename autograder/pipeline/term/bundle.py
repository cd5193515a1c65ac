"""``make student-bundle``: what an instructor hands out, and nothing else.

``build(root, out)`` writes ``out/``:

- ``notebooks/NN_topic/NN_topic.ipynb``: the release notebooks of the units handed out: those
  named (``units``), else those ``schedule.toml`` has opened. A unit whose provided cells
  carry the solutions of a unit still open is refused (``autograder.notebooks.handout``),
  unless ``ignore_schedule``, which prints what goes out early;
- ``wheels/minitorch_course-<version>-py3-none-any.whl``: the ``course`` helper package
  alone. The repository's ``pyproject.toml`` packages ``course``, ``minitorch_ref`` and
  ``autograder`` together, so the student distribution is built from a separate,
  generated project that contains only ``course*``; it keeps the name
  ``minitorch-course`` and the version, which unit 1's environment check asks for;
- ``requirements.txt``: the student environment pinned to the versions the course
  is tested with (read from this environment), and the wheel through ``--find-links``;
- ``README.md``: the student guide (``student_guide.py``): install, the units, how to
  work through one, how to hand in.

The wheel also installs ``<prefix>/etc/jupyter/nbgrader_config.py``, which Jupyter reads
wherever it is started from that environment: it makes the Validate button report every
cell that raises or writes to stderr (``Validator.validate_all``), not only graded cells.
Without it Validate says "Success" on an untouched notebook, because a release notebook's
hidden-test cells hold a comment until grading.

It refuses to finish if anything in the bundle names ``minitorch_ref``,
``autograder`` or ``source/``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

from autograder.notebooks import handout
from autograder.pipeline.course import Course
from autograder.pipeline.term.student_guide import guide

# What students run: Jupyter, the notebooks' imports, the course's own dependencies,
# and nbgrader (its Validate button; unit 1's environment check asks for it).
STUDENT_PACKAGES = ("numpy", "scipy", "matplotlib", "ipywidgets", "ipykernel", "jupyterlab",
                    "notebook", "nbgrader", "mlxtend", "scikit-learn", "threadpoolctl")
COURSE_DEPENDENCIES = ("numpy", "matplotlib", "ipywidgets", "mlxtend", "scikit-learn",
                       "threadpoolctl")
FORBIDDEN = ("minitorch_ref", "autograder", "source/")

PYPROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "{version}"
description = "The course helpers students import: datasets, plots, widgets, test messages."
requires-python = "{python}"
dependencies = {dependencies}

[tool.setuptools.packages.find]
include = ["course*"]

[tool.setuptools.package-data]
{package_data}

[tool.setuptools.data-files]
"etc/jupyter" = ["nbgrader_config.py"]
"""

# Read by JupyterLab's Validate button (nbgrader's validate handler loads the
# Jupyter config path, which includes the environment's etc/jupyter).
NBGRADER_CONFIG = """# Installed by the minitorch-course student wheel.
c = get_config()  # noqa: F821
# Validate reports every cell that raises or writes to stderr, not only graded cells:
# the hidden tests are placeholders until grading, so only this shows unfinished work.
c.Validator.validate_all = True
"""


class BundleError(RuntimeError):
    """The bundle would contain something students must not get."""


def _pyproject(root: Path) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))


def _project(root: Path) -> dict:
    return _pyproject(root)["project"]


def _course_package_data(root: Path) -> str:
    """The repository's ``package-data`` lines for ``course*`` (e.g. unit 14's names), as TOML."""
    tables = _pyproject(root).get("tool", {}).get("setuptools", {}).get("package-data", {})
    return "\n".join(f"{json.dumps(package)} = {json.dumps(patterns)}"
                     for package, patterns in tables.items() if package.startswith("course"))


def build_wheel(root: Path, wheels: Path) -> Path:
    """A wheel of ``course*`` alone, named and versioned like the course distribution."""
    project = _project(root)
    deps = [d for d in project["dependencies"]
            if d.split(">")[0].split("=")[0].split("<")[0].strip() in COURSE_DEPENDENCIES]
    with tempfile.TemporaryDirectory(prefix="student-wheel-") as tmp:
        shutil.copytree(root / "course", Path(tmp) / "course",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (Path(tmp) / "nbgrader_config.py").write_text(NBGRADER_CONFIG)
        (Path(tmp) / "pyproject.toml").write_text(PYPROJECT.format(
            name=project["name"], version=project["version"],
            python=project.get("requires-python", ">=3.10"),
            package_data=_course_package_data(root),
            dependencies="[" + ", ".join(f'"{d}"' for d in deps) + "]"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--wheel-dir", str(wheels), tmp], check=True)
    return next(wheels.glob("*.whl"))


def requirements(root: Path) -> str:
    project = _project(root)
    pins = "\n".join(f"{name}=={version(name)}" for name in STUDENT_PACKAGES)
    return ("# The student environment, pinned to the versions the course is tested with.\n"
            "# From this folder:  python -m pip install -r requirements.txt\n"
            "--find-links ./wheels\n"
            f"{project['name']}=={project['version']}\n{pins}\n")


def audit(out: Path) -> list[str]:
    """Paths in the bundle (and inside its wheels) that name forbidden code."""
    names = [str(p.relative_to(out)) for p in out.rglob("*")]
    for wheel in out.rglob("*.whl"):
        names += [f"{wheel.name}:{n}" for n in zipfile.ZipFile(wheel).namelist()]
    return [n for n in names if any(word in n for word in FORBIDDEN)]


def handed_out(course: Course, units: list[str] | None, now: datetime | None,
               ignore_schedule: bool) -> list[str]:
    """The units that go out now (named, else opened by the schedule), each allowed to: a
    ``HandoutError`` names every unit that would carry an open unit's solutions."""
    chosen = handout.chosen(course.root, units, now)
    try:
        warnings = handout.check(course.root, chosen, now, ignore_schedule)
    except handout.HandoutError as error:
        raise handout.HandoutError(f"{error}\n(to ship it anyway: --ignore-schedule)") from None
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return chosen


def build(root: Path, out: Path, units: list[str] | None = None, now: datetime | None = None,
          ignore_schedule: bool = False) -> Path:
    """Write the bundle of ``units`` (default: what the schedule has opened by ``now``)."""
    course, out = Course(Path(root).resolve()), Path(out).resolve()
    chosen = handed_out(course, units, now, ignore_schedule)
    shutil.rmtree(out, ignore_errors=True)
    (out / "notebooks").mkdir(parents=True)
    notebooks = [course.release(unit) / f"{unit}.ipynb" for unit in chosen]
    for notebook in notebooks:
        (out / "notebooks" / notebook.parent.name).mkdir()
        shutil.copy(notebook, out / "notebooks" / notebook.parent.name / notebook.name)
    build_wheel(course.root, out / "wheels")
    (out / "requirements.txt").write_text(requirements(course.root))
    (out / "README.md").write_text(guide(notebooks, _project(course.root).get("requires-python", ">=3.10")))
    leaks = audit(out)
    if leaks:
        raise BundleError("the bundle would contain " + ", ".join(leaks[:5]))
    return out
