"""Grading on Dask: workers that cannot see the course, workers lost mid-run, a submission that
kills its worker every time, kernels that share nothing, clusters that must be refused.

Real schedulers and workers: ``dask scheduler`` and ``dask worker`` processes (each in a
process group of its own, so a test can kill a whole worker), or the ``LocalCluster``
that ``grade`` starts itself.
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from distributed import Client

from autograder.__main__ import main
from autograder.pipeline.grade import GradingError, grade
from autograder.pipeline.job import Limits
from grading_cluster import (LIMITS, UNIT, dask_cluster, free_port, hand_in, scratch_course,
                             tls_options, total)

pytestmark = pytest.mark.pipeline
# pidfd_send_signal raises no audit event, so the unsandboxed kernel's guard does not stop it
KILL_PARENT = ("import os, signal\n"
               "signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGKILL)")


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter) -> Path:
    return scratch_course(tmp_path_factory.mktemp("executor"))


def submissions_per_student(root: Path) -> dict[str, int]:
    with sqlite3.connect(root / "gradebook.db") as db:
        return dict(db.execute("SELECT student_id, COUNT(*) FROM submitted_assignment "
                               "GROUP BY student_id").fetchall())


def test_workers_that_cannot_see_the_course_grade_it(course, credentials, tmp_path):
    for student, kind in (("blind-a", "source"), ("blind-b", "release")):
        hand_in(course, student, kind)
    hidden = ("bwrap", "--dev-bind", "/", "/", "--tmpfs", str(course), "--")
    with dask_cluster(tmp_path, credentials, workers=1, wrap=hidden) as (address, _):
        with Client(address, security=credentials.security()) as client:
            seen = client.run(os.listdir, str(course))
        summary = grade(course, [UNIT], ["blind-a", "blind-b"], limits=LIMITS, progress=False,
                        scheduler=address, tls_files=credentials, force=True)
    assert list(seen.values()) == [[]]             # the worker saw an empty folder there
    assert address in summary.where
    assert [r.status for r in summary.results] == ["graded", "graded"]
    assert (total(course, "blind-a"), total(course, "blind-b")) == (10, 0)
    graded = course / "autograded" / "blind-a" / UNIT
    assert sorted(p.name for p in graded.iterdir()) == [".grading.json", f"{UNIT}.ipynb",
                                                         "timestamp.txt"]


def _kill_when_grading(worker: subprocess.Popen, killed: threading.Event) -> None:
    """SIGKILL the worker's whole process group once one of its kernels runs (a job in flight:
    ``spawn`` stands for a sandboxed kernel the zygote forked)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed.is_set():
        try:
            family = psutil.Process(worker.pid).children(recursive=True)
            if any("autograder.pipeline.spawn" in " ".join(p.cmdline()) for p in family):
                os.killpg(worker.pid, signal.SIGKILL)
                killed.set()
                return
        except psutil.Error:
            pass
        time.sleep(0.05)


def test_a_worker_killed_mid_run_loses_no_grade(course, credentials, tmp_path):
    students = [f"lost-{n}" for n in range(6)]
    for n, student in enumerate(students):
        hand_in(course, student, "source" if n % 2 == 0 else "release")
    killed = threading.Event()
    with dask_cluster(tmp_path, credentials, workers=2) as (address, workers):
        killer = threading.Thread(target=_kill_when_grading, args=(workers[0], killed))
        killer.start()
        summary = grade(course, [UNIT], students, limits=LIMITS, progress=False,
                        scheduler=address, tls_files=credentials, force=True)
        killer.join()
    assert killed.is_set(), "no job of the first worker was caught in flight"
    assert workers[0].poll() is not None
    assert sorted(r.outcome.student for r in summary.results) == students   # each exactly once
    assert all(r.status == "graded" for r in summary.results)
    assert {r.worker for r in summary.results} != set()
    assert [total(course, s) for s in students] == [10, 0, 10, 0, 10, 0]
    counts = submissions_per_student(course)
    assert all(counts[s] == 1 for s in students)


def test_a_submission_that_kills_its_worker_is_flagged_not_retried_forever(course):
    hand_in(course, "poison", "source", KILL_PARENT)
    hand_in(course, "bystander", "source")
    started = time.monotonic()
    summary = grade(course, [UNIT], ["poison", "bystander"], workers=2, limits=LIMITS,
                    progress=False, force=True, sandbox=False)
    results = {r.outcome.student: r for r in summary.results}
    assert time.monotonic() - started < 240
    assert results["bystander"].status == "graded" and total(course, "bystander") == 10
    assert results["poison"].status == "failed" and total(course, "poison") == 0
    assert "its grading worker died 3 times" in results["poison"].notes[0]
    record = json.loads((course / "autograded" / "poison" / UNIT / ".grading.json").read_text())
    assert record["status"] == "failed"
    graded = nbformat.read(str(course / "autograded" / "poison" / UNIT / f"{UNIT}.ipynb"), 4)
    assert "worker died" in graded.cells[0].source
    with sqlite3.connect(course / "gradebook.db") as db:
        flags = db.execute("SELECT COUNT(*) FROM grade g JOIN submitted_notebook n ON "
                           "g.notebook_id = n.id JOIN submitted_assignment a ON "
                           "n.assignment_id = a.id WHERE a.student_id = 'poison' AND "
                           "g.needs_manual_grade = 0").fetchone()[0]
    assert flags == 0                                  # every cell flagged for review


@pytest.mark.skipif(os.environ.get("CI") != "true" and subprocess.run(
    ["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True).returncode != 0,
    reason="bubblewrap cannot run here (CI installs it)")
def test_the_same_submission_in_the_sandbox_cannot_reach_its_worker(course):
    hand_in(course, "poison-boxed", "source", KILL_PARENT)
    summary = grade(course, [UNIT], ["poison-boxed"], workers=1, limits=LIMITS, progress=False,
                    force=True)
    assert [r.status for r in summary.results] == ["graded"]
    assert total(course, "poison-boxed") == 10


LEAVE = ("import numpy, os, pathlib\n"
         "numpy.left_behind = 'first'\n"
         "os.environ['LEFT_BEHIND'] = 'first'\n"
         "pathlib.Path(os.path.expanduser('~/left-behind.txt')).write_text('first')\n"
         "pathlib.Path('left-behind.txt').write_text('first')\n"
         "leftover = 'first'")
LOOK = ("import numpy, os\n"
        "print('seen:', hasattr(numpy, 'left_behind'), os.environ.get('LEFT_BEHIND'),\n"
        "      os.path.exists(os.path.expanduser('~/left-behind.txt')),\n"
        "      os.path.exists('left-behind.txt'), 'leftover' in globals())")


def test_nothing_of_one_student_reaches_the_next(course):
    hand_in(course, "leak-1-first", "source", LEAVE)
    hand_in(course, "leak-2-next", "source", LOOK)
    summary = grade(course, [UNIT], ["leak-1-first", "leak-2-next"], workers=1, limits=LIMITS,
                    progress=False, force=True)
    first, second = sorted(summary.results, key=lambda r: json.loads(
        r.files[".grading.json"])["graded_at"])
    assert (first.outcome.student, second.outcome.student) == ("leak-1-first", "leak-2-next")
    assert first.worker == second.worker                       # the same worker process
    graded = nbformat.reads(second.files[f"{UNIT}.ipynb"].decode(), 4)
    printed = "".join(o.get("text", "") for c in graded.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "seen: False None False False False" in printed


def test_an_unreachable_scheduler_is_named_within_seconds(course, credentials, capsys):
    before = (course / "gradebook.db").read_bytes()
    hand_in(course, "never-graded", "source")
    address = f"tls://127.0.0.1:{free_port()}"
    started = time.monotonic()
    code = main(["--course", str(course), "grade", UNIT, "--scheduler", address,
                 *tls_options(credentials)])
    assert code == 2 and time.monotonic() - started < 20
    assert f"cannot reach the Dask scheduler at {address}" in capsys.readouterr().err
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded" / "never-graded").exists()


def test_workers_with_other_packages_are_refused_before_any_grade(course, credentials, tmp_path):
    other = tmp_path / "other_numpy.py"
    other.write_text("from autograder.pipeline import fingerprint\n"
                     "real = fingerprint.installed()\n"
                     "fingerprint.installed = lambda: {**real, 'numpy': '1.26.4'}\n")
    hand_in(course, "refused", "source")
    before = (course / "gradebook.db").read_bytes()
    with dask_cluster(tmp_path, credentials, workers=1, preload=str(other)) as (address, _):
        with pytest.raises(GradingError) as refused:
            grade(course, [UNIT], ["refused"], limits=LIMITS, progress=False, scheduler=address,
                  tls_files=credentials)
    assert "numpy" in str(refused.value) and "1.26.4 there" in str(refused.value)
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded" / "refused").exists()


def test_workers_of_more_than_one_thread_are_refused_before_any_grade(course, credentials,
                                                                      tmp_path):
    """Two submissions at once in one worker process would share its environment and its job
    gradebook."""
    hand_in(course, "crowded", "source")
    before = (course / "gradebook.db").read_bytes()
    with dask_cluster(tmp_path, credentials, workers=1, threads=2) as (address, _):
        with pytest.raises(GradingError, match=r"\(2 threads\).*--nthreads 1"):
            grade(course, [UNIT], ["crowded"], limits=LIMITS, progress=False, scheduler=address,
                  tls_files=credentials)
    assert (course / "gradebook.db").read_bytes() == before
    assert not (course / "autograded" / "crowded").exists()


def test_a_worker_refuses_a_second_submission_while_it_grades_one():
    """What stops a worker that joined after the check: its second job at once stops the run."""
    from autograder.pipeline.job import ONE_AT_A_TIME, MismatchError, run
    with ONE_AT_A_TIME:
        with pytest.raises(MismatchError, match="second submission while it graded one"):
            run(None, None)
    assert not ONE_AT_A_TIME.locked()


def test_workers_without_the_course_packages_are_refused(course, credentials, tmp_path):
    missing = tmp_path / "no_autograder.py"
    missing.write_text("import sys\nfor name in [m for m in sys.modules if m.startswith('autograder')]:\n"
                       "    del sys.modules[name]\nsys.modules['autograder'] = None\n")
    hand_in(course, "refused-too", "source")
    with dask_cluster(tmp_path, credentials, workers=1, preload=str(missing)) as (address, _):
        with pytest.raises(GradingError, match="cannot report their packages"):
            grade(course, [UNIT], ["refused-too"], limits=LIMITS, progress=False,
                  scheduler=address, tls_files=credentials)
    assert not (course / "autograded" / "refused-too").exists()


def test_ctrl_c_keeps_what_was_merged_and_a_rerun_grades_the_rest(course):
    students = [f"interrupted-{n}" for n in range(8)]
    for student in students:
        hand_in(course, student, "source")
    command = [sys.executable, "-m", "autograder", "--course", str(course), "grade", UNIT,
               "--workers", "1", "--timeout", "30"]
    for student in students:
        command += ["--student", student]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    first = course / "autograded" / students[0] / UNIT / ".grading.json"
    deadline = time.monotonic() + 180
    while not first.exists() and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGINT)          # what Ctrl-C in a terminal sends
    out, err = run.communicate(timeout=120)
    assert run.returncode == 130, err[-3000:]
    assert "INTERRUPTED" in out
    kept = [s for s in students if (course / "autograded" / s / UNIT / ".grading.json").exists()]
    assert students[0] in kept and len(kept) < len(students)
    assert all(total(course, s) == 10 for s in kept)
    rest = grade(course, [UNIT], students, workers=1, limits=LIMITS, progress=False)
    assert sorted(r.outcome.student for r in rest.results) == sorted(set(students) - set(kept))
    assert sorted(rest.skipped) == sorted((s, UNIT) for s in kept)
    assert all(total(course, s) == 10 for s in students)


def test_a_job_past_its_time_limit_is_stopped_and_the_worker_goes_on(course):
    hand_in(course, "too-slow", "source", "import time\ntime.sleep(120)")
    hand_in(course, "after-too-slow", "source")
    started = time.monotonic()
    summary = grade(course, [UNIT], ["too-slow", "after-too-slow"], workers=1, force=True,
                    limits=Limits(cell_timeout=100, job_seconds=10), progress=False)
    results = {r.outcome.student: r for r in summary.results}
    assert time.monotonic() - started < 90
    assert results["too-slow"].status == "failed" and total(course, "too-slow") == 0
    assert any("took longer than 10 s and was stopped" in note for note in results["too-slow"].notes)
    assert results["after-too-slow"].status == "graded" and total(course, "after-too-slow") == 10
    assert results["too-slow"].worker == results["after-too-slow"].worker


def test_a_cluster_without_workers_or_a_local_one_of_none_is_refused(course, credentials, tmp_path,
                                                                    monkeypatch):
    from autograder.pipeline import executor
    monkeypatch.setattr(executor, "WORKER_WAIT_SECONDS", 2)
    with dask_cluster(tmp_path, credentials, workers=0) as (address, _):
        with pytest.raises(GradingError, match="no worker joined"):
            grade(course, [UNIT], ["nobody"], limits=LIMITS, progress=False, scheduler=address,
                  tls_files=credentials)
    with pytest.raises(GradingError, match="--workers must be at least 1, not 0"):
        grade(course, [UNIT], ["nobody"], workers=0, limits=LIMITS, progress=False)


def _profiling() -> bool:
    import dask
    return dask.config.get("distributed.worker.profile.enabled")


def test_the_local_workers_spend_no_cpu_on_dasks_profiler():
    from autograder.pipeline.executor import Executor
    with Executor(None, 1) as executor:
        assert list(executor.client.run(_profiling).values()) == [False]
