"""What students get installs alone, holds no reference or autograder, and runs.

The bundle of the whole term, its fresh virtual environment and one Validate run of each
release notebook there come from tests/student_bundle.py (built once a session;
tests/notebooks/test_validation.py reads the same run); the schedule's tests build bundles
of their own from a made-up term.
"""
from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.notebooks.handout import HandoutError
from autograder.notebooks.schedule import moment
from autograder.pipeline.term.bundle import FORBIDDEN, audit, build

pytestmark = [pytest.mark.pipeline, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


TERM = """\
[units]
01_setup         = { opens = 2026-11-02, closes = 2026-11-08 }
02_gradients     = { opens = 2026-11-09, closes = 2026-11-15 }
03_module_linear = { opens = 2026-11-16, closes = 2026-11-22 }
04_activations   = { opens = 2026-11-20, closes = 2026-11-29 }
"""


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """The repository's course (linked) with a term of four units, the fourth opening too early."""
    root = tmp_path / "course"
    root.mkdir()
    for name in ("course", "source", "release", "pyproject.toml"):
        (root / name).symlink_to(ROOT / name)
    (root / "schedule.toml").write_text(TERM)
    return root


def test_a_bundle_ships_only_the_units_the_schedule_has_opened(course, tmp_path):
    out = build(course, tmp_path / "bundle", now=moment("2026-11-16T10:00"))
    assert sorted(p.name for p in (out / "notebooks").iterdir()) == \
        ["01_setup", "02_gradients", "03_module_linear"]
    rows = [line for line in (out / "README.md").read_text().splitlines() if line.startswith("| Unit ")]
    assert len(rows) == 3 and audit(out) == []


def test_a_bundle_that_would_carry_an_open_units_solutions_is_refused(course, tmp_path):
    with pytest.raises(HandoutError, match="refusing to release 04_activations: it carries the "
                       "solutions of 03_module_linear, which closes on 2026-11-22"):
        build(course, tmp_path / "bundle", now=moment("2026-11-21"))
    assert not (tmp_path / "bundle").exists()


def test_the_bundle_command_names_what_it_refuses_and_what_it_ships_early(course, tmp_path, capsys):
    out = tmp_path / "bundle"
    assert main(["--course", str(course), "bundle", "--out", str(out), "--as-of", "2026-11-21"]) == 2
    assert "error: refusing to release 04_activations" in capsys.readouterr().err
    assert main(["--course", str(course), "bundle", "--out", str(out), "--units", "03_module_linear",
                 "--as-of", "2026-11-10"]) == 2
    assert "carries the solutions of 02_gradients, which closes on 2026-11-15" in capsys.readouterr().err
    assert main(["--course", str(course), "bundle", "--out", str(out), "--units", "03_module_linear",
                 "--as-of", "2026-11-10", "--ignore-schedule"]) == 0
    assert "warning: releasing 03_module_linear with the solutions of 02_gradients" in \
        capsys.readouterr().err
    assert [p.name for p in (out / "notebooks").iterdir()] == ["03_module_linear"]


def test_bundle_holds_release_notebooks_a_course_wheel_and_requirements(student_bundle):
    bundle = student_bundle
    assert sorted(p.parent.name for p in (bundle / "notebooks").glob("*/*.ipynb")) == \
        sorted(p.parent.name for p in (ROOT / "release").glob("*/*.ipynb"))
    wheel = next((bundle / "wheels").glob("minitorch_course-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names if ".dist-info/" not in name and ".data/" not in name} \
        == {"course"}
    assert "course/datasets/data/names.txt" in names, "unit 14's corpus ships in the wheel"
    assert [name.split(".data/")[1] for name in names if ".data/" in name] == \
        ["data/etc/jupyter/nbgrader_config.py"]
    assert audit(bundle) == []
    guide = (bundle / "README.md").read_text()
    rows = [line for line in guide.splitlines() if line.startswith("| Unit ")]
    assert [row.split("`")[1] for row in rows] == [f"{p.parent.name}/{p.name}" for p in
                                                  sorted((ROOT / "release").glob("*/*.ipynb"))]
    assert rows[0].endswith("| 10 |") and rows[10].endswith("| 20 + 10 graded by hand |"), rows
    assert "(with a stretch exercise)" in rows[4] and "stretch" not in rows[5]
    assert "--find-links ./wheels" in (bundle / "requirements.txt").read_text()


def test_bundle_installs_alone_and_runs_every_notebook_to_its_first_stub(student_bundle, student_env,
                                                                     release_runs):
    """Every notebook runs in the student environment (its kernel's interpreter the venv's,
    nothing of the instructor's importable) up to a stub's NotImplementedError, and Validate,
    run as JupyterLab's button runs it, reports every cell and a stub first."""
    print(f"\nfresh venv with the student requirements: {student_env.seconds:.0f} s")
    for package in ("minitorch_ref", "autograder", "names"):     # names: the held-out names
        done = subprocess.run([str(student_env.python), "-c", f"import {package}"],
                              cwd=student_env.venv.parent, env=student_env.env,
                              capture_output=True, text=True)
        assert "ModuleNotFoundError" in done.stderr, package
    subprocess.run([str(student_env.python), "-c", "import course.datasets, course.plots, "
                    "course.widgets, course.testing"], cwd=student_env.venv.parent,
                   env=student_env.env, check=True)
    assert sorted(release_runs) == sorted(p.name for p in (student_bundle / "notebooks").iterdir())
    for unit, run in release_runs.items():
        assert run["probe"] == {"prefix": str(student_env.venv), "instructor": []}, (unit, run["probe"])
        assert run["first_error"] == "NotImplementedError", (unit, run["first_error"])
        failed = run["button"].get("failed", [])
        assert run["validate_all"] is True and failed, (unit, run["button"])
        assert "NotImplementedError" in failed[0]["raw_error"], (unit, failed[0])
    assert not [word for word in FORBIDDEN if (student_bundle / word).exists()]
