"""``nbgrader release_assignment`` and Formgrader's Release button follow the term's schedule:
a unit whose provided cells carry the solutions of a unit still open is refused, naming it; it
goes out once that unit has closed. "Now" is given (``--ScheduledReleaseAssignment.as_of``),
never waited for."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from classroom import Ran, nbgrader

from autograder.notebooks.units import ROOT
from autograder.pipeline.course import tool_env

pytestmark = pytest.mark.pipeline
UNITS = ("01_setup", "02_gradients", "03_module_linear", "04_activations")
TERM = """\
# One table per unit: the other way TOML spells what the course's schedule.toml writes inline.
[units.01_setup]
opens = 2026-11-02
closes = 2026-11-08

[units.02_gradients]
opens = 2026-11-09
closes = 2026-11-15T18:00:00Z

[units.03_module_linear]
opens = 2026-11-16
closes = 2026-12-01
"""
REFUSAL = ("refusing to release 04_activations: it carries the solutions of 03_module_linear, "
           "which closes on 2026-12-01")
# What Formgrader's Release button runs: its handler's NbGraderAPI, built on the configuration
# the server extension loads from the course directory (nbgrader's formgrader/base.py).
FORMGRADER_RELEASE = textwrap.dedent("""
    import json, sys
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.apps.baseapp import NbGrader
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    app = NbGrader()
    app.load_config_file()
    for option in sys.argv[2:]:
        section, _, rest = option.lstrip("-").partition(".")
        key, _, value = rest.partition("=")
        setattr(getattr(app.config, section), key, value)
    coursedir = CourseDirectory(parent=app)
    api = NbGraderAPI(coursedir, Authenticator(parent=app), parent=app)
    result = api.release_assignment(sys.argv[1])
    result["class"] = api.exchange.release_assignment.__module__ + "." + api.exchange.release_assignment.__name__
    print(json.dumps(result))
""")


@pytest.fixture
def course(tmp_path: Path, isolated_jupyter) -> tuple[Path, Path]:
    """Units 01-04 as generated in the repository, the course's configuration, the term above."""
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    for unit in UNITS:
        for folder in ("source", "release"):
            shutil.copytree(ROOT / folder / unit, root / folder / unit)
    shutil.copy(ROOT / "nbgrader_config.py", root)
    (root / "schedule.toml").write_text(TERM)
    exchange.mkdir(mode=0o777)
    return root, exchange


def release(root: Path, exchange: Path, unit: str, *options: str) -> Ran:
    return nbgrader(root, "release_assignment", unit, f"--Exchange.root={exchange}", *options,
                    check=False)


def outbound(exchange: Path, unit: str) -> Path:
    return exchange / "minitorch" / "outbound" / unit / f"{unit}.ipynb"


def test_a_unit_is_refused_while_a_unit_it_carries_is_open_and_goes_out_once_it_closes(course):
    root, exchange = course
    done = release(root, exchange, "04_activations",
                   "--ScheduledReleaseAssignment.as_of=2026-11-30T12:00")
    assert done.code != 0
    assert REFUSAL in done.output, done.output
    assert "--ScheduledReleaseAssignment.ignore_schedule=True" in done.output
    assert not outbound(exchange, "04_activations").exists()
    done = release(root, exchange, "04_activations", "--ScheduledReleaseAssignment.as_of=2026-12-02")
    assert done.code == 0, done.output
    assert outbound(exchange, "04_activations").read_bytes() == \
        (root / "release" / "04_activations" / "04_activations.ipynb").read_bytes()


def test_the_override_releases_and_says_what_went_out(course):
    root, exchange = course
    done = release(root, exchange, "04_activations", "--ScheduledReleaseAssignment.as_of=2026-11-30",
                   "--ScheduledReleaseAssignment.ignore_schedule=True")
    assert done.code == 0, done.output
    assert ("releasing 04_activations with the solutions of 02_gradients and 03_module_linear "
            "without checking the schedule") in done.output
    assert outbound(exchange, "04_activations").exists()


def test_a_malformed_schedule_refuses_every_release_naming_the_entry(course):
    root, exchange = course
    (root / "schedule.toml").write_text(TERM.replace("closes = 2026-11-08", 'closes = "soon"'))
    done = release(root, exchange, "01_setup")
    assert done.code != 0
    assert "01_setup: closes = 'soon' is not a TOML date or date-time" in done.output, done.output
    assert not outbound(exchange, "01_setup").exists()


def test_formgraders_release_button_goes_through_the_same_class_and_refuses(course):
    root, exchange = course
    script = root.parent / "formgrader_release.py"
    script.write_text(FORMGRADER_RELEASE)

    def press(*options: str) -> dict:
        done = subprocess.run([sys.executable, str(script), "04_activations",
                               f"--Exchange.root={exchange}", *options], cwd=root,
                              env=tool_env(), capture_output=True, text=True, timeout=120)
        return json.loads(done.stdout.strip().splitlines()[-1])

    refused = press("--ScheduledReleaseAssignment.as_of=2026-11-30")
    assert refused["class"] == ("autograder.pipeline.term.exchange.release."
                                "ScheduledReleaseAssignment")
    assert refused["success"] is False and REFUSAL in refused["log"]
    assert not outbound(exchange, "04_activations").exists()
    assert press("--ScheduledReleaseAssignment.as_of=2026-12-02")["success"] is True
    assert outbound(exchange, "04_activations").exists()
