"""What students get installs alone, holds no reference or autograder, and runs.

The virtual environment is new and empty (no ``--system-site-packages``, which would
see the development packages). Its wheels come from a wheelhouse kept between runs in
``~/.cache/minitorch-course/wheelhouse`` (``MINITORCH_COURSE_CACHE``): the first run
fills it from the package index, later runs install offline from it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.notebooks.handout import HandoutError
from autograder.notebooks.schedule import load, moment
from autograder.notebooks.units import units
from autograder.pipeline.term.bundle import FORBIDDEN, audit, build

pytestmark = [pytest.mark.pipeline, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
RUN_TO_FIRST_STUB = textwrap.dedent("""
    import sys
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    path = sys.argv[1]
    nb = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell(
        "import importlib.util, sys\\n"
        "assert sys.prefix == %r, sys.prefix\\n"
        "assert importlib.util.find_spec('minitorch_ref') is None\\n"
        "assert importlib.util.find_spec('autograder') is None")
    nb.cells.insert(0, probe)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}})
    try:
        client.execute()
    except CellExecutionError as error:
        print("STOPPED", error.ename)
    else:
        print("FINISHED")
""")

# What JupyterLab's Validate button runs, with the configuration its handler loads
# (the Jupyter config path, so the student wheel's etc/jupyter/nbgrader_config.py).
VALIDATE_AS_THE_BUTTON_DOES = textwrap.dedent("""
    import sys
    from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
    from nbgrader.validator import Validator
    config = ValidateAssignmentHandler.load_config(None)
    result = Validator(config=config).validate(sys.argv[1])
    print("validate_all", config.Validator.validate_all)
    failed = result.get("failed", [])
    print("first failure is a stub", bool(failed) and "NotImplementedError" in failed[0]["raw_error"])
""")


def wheelhouse() -> Path:
    base = os.environ.get("MINITORCH_COURSE_CACHE", str(Path.home() / ".cache" / "minitorch-course"))
    return Path(base) / "wheelhouse"


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
    """A moment after every unit of the course's schedule has closed: every unit goes out."""
    schedule = load(ROOT, [u.name for u in units(ROOT)])
    return max(window.closes for window in schedule.windows.values())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build(ROOT, tmp_path_factory.mktemp("bundle") / "student-bundle", now=after_the_term())


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


def test_bundle_holds_release_notebooks_a_course_wheel_and_requirements(bundle):
    assert sorted(p.parent.name for p in (bundle / "notebooks").glob("*/*.ipynb")) == \
        sorted(p.parent.name for p in (ROOT / "release").glob("*/*.ipynb"))
    wheel = next((bundle / "wheels").glob("minitorch_course-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names if ".dist-info/" not in name and ".data/" not in name} \
        == {"course"}
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


def test_bundle_installs_alone_and_runs_every_notebook_to_its_first_stub(bundle, tmp_path):
    venv = tmp_path / "venv"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install(python, bundle)
    print(f"\nfresh venv with the student requirements: {time.monotonic() - started:.0f} s")
    env = clean_env()
    for name in ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "MPLCONFIGDIR", "JUPYTER_PATH"):
        env[name] = str(tmp_path / "state" / name.lower())
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    for package in ("minitorch_ref", "autograder"):
        done = subprocess.run([str(python), "-c", f"import {package}"], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert "ModuleNotFoundError" in done.stderr, package
    subprocess.run([str(python), "-c", "import course.datasets, course.plots, course.widgets, "
                    "course.testing"], cwd=tmp_path, env=env, check=True)
    script = tmp_path / "run.py"
    script.write_text(RUN_TO_FIRST_STUB % str(venv))

    def run(notebook: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), str(script), str(notebook)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)

    notebooks = sorted((bundle / "notebooks").glob("*/*.ipynb"))
    with ThreadPoolExecutor(max_workers=2) as pool:     # one kernel per core
        for notebook, done in zip(notebooks, pool.map(run, notebooks)):
            assert done.stdout.strip().splitlines()[-1:] == ["STOPPED NotImplementedError"], \
                (notebook.name, done.stdout[-2000:], done.stderr[-2000:])
    assert not [word for word in FORBIDDEN if (bundle / word).exists()]
    validate = tmp_path / "validate.py"
    validate.write_text(VALIDATE_AS_THE_BUTTON_DOES)
    done = subprocess.run([str(python), str(validate), str(notebooks[1])], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.stdout.splitlines()[-2:] == ["validate_all True", "first failure is a stub True"], \
        (done.stdout[-2000:], done.stderr[-2000:])
