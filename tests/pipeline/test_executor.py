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
from nbgrader.api import Gradebook

from autograder.__main__ import main
from autograder.pipeline.term import feedback
from autograder.pipeline.course import Course
from autograder.pipeline.executor import executor
from autograder.pipeline.ledger.grade import GradingError, grade, pending
from autograder.pipeline.job.job import Limits
from autograder.pipeline.term.report import write_report
from browser import free_port
from grading_cluster import LIMITS, UNIT, dask_cluster, hand_in, tls_options, total

pytestmark = pytest.mark.pipeline
# pidfd_send_signal raises no audit event, so the unsandboxed kernel's guard does not stop it
KILL_PARENT = ("import os, signal\n"
               "signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGKILL)")


@pytest.fixture(scope="module")
def course(tmp_path_factory, isolated_jupyter, new_course) -> Path:
    root = tmp_path_factory.mktemp("executor") / "course"
    new_course(root, [UNIT])
    return root


def cell_grades(root: Path, student: str) -> dict[str, tuple[float | None, bool]]:
    """Each grade cell's ``(auto_score, needs_manual_grade)`` for ``student``."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {grade.name: (grade.auto_score, grade.needs_manual_grade)
                for grade in gb.find_submission_notebook(UNIT, UNIT, student).grades}


def _reported(root: Path, student: str) -> int:
    """How many of ``student``'s cells the class report lists as waiting for an instructor."""
    page = write_report(root).read_text()
    section = page.split("Cells without a score")[1].split("<h2>")[0]
    return section.count(f"<tr><td>{student}</td><td>{UNIT}</td>")


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
            if any("autograder.pipeline.sandbox.spawn" in " ".join(p.cmdline()) for p in family):
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


def _kill_after_first_grade(root: Path, students: list[str], worker: subprocess.Popen) -> None:
    """SIGKILL the worker's whole process group once one student's grade is merged."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not any(
            (root / "autograded" / s / UNIT / ".grading.json").exists() for s in students):
        time.sleep(0.1)
    os.killpg(worker.pid, signal.SIGKILL)


def test_a_cluster_whose_workers_all_die_stops_the_run_and_keeps_every_grade(
        course, credentials, tmp_path, monkeypatch, capsys):
    """It waited on its futures with no bound and no word (17 minutes, stopped by hand): now
    it says so after 2 s without a worker, stops after 6 s with the count left, keeps what was
    merged, and the next run grades the rest. The bar counts the connected workers."""
    monkeypatch.setattr(executor, "NOTICE_SECONDS", 2)
    monkeypatch.setattr(executor, "STALL_SECONDS", 6)
    students = [f"orphan-{n}" for n in range(4)]
    for student in students:
        hand_in(course, student, "source")
    finished = {}
    with dask_cluster(tmp_path, credentials, workers=1) as (address, workers):
        killer = threading.Thread(target=_kill_after_first_grade, args=(course, students, workers[0]))
        killer.start()
        run = threading.Thread(target=lambda: finished.update(summary=grade(
            course, [UNIT], students, limits=LIMITS, progress=True, scheduler=address,
            tls_files=credentials, force=True)), daemon=True)
        run.start()
        run.join(timeout=240)
        killer.join()
    assert "summary" in finished, "the run still waits for a worker"
    summary, err = finished["summary"], capsys.readouterr().err
    kept = sorted(r.outcome.student for r in summary.results)
    assert kept and len(kept) < len(students) and all(total(course, s) == 10 for s in kept)
    assert f"ran a job of this run for 6 s (0 connected): stopped, {len(students) - len(kept)} " \
        "submission(s) left ungraded for the next run" in str(summary)
    assert "has run a job of this run for 2 s (0 connected)" in err and "workers=1" in err
    rest = grade(course, [UNIT], students, workers=1, limits=LIMITS, progress=False)
    assert sorted(r.outcome.student for r in rest.results) == sorted(set(students) - set(kept))
    assert all(total(course, s) == 10 for s in students)


def test_a_job_lost_beyond_its_retries_leaves_every_cell_to_an_instructor(course):
    """A worker that dies three times under one job: the grader lost it, so no cell is
    scored (nbgrader's "needs manual grade"), the summary counts them, the class report lists
    them, and the next run grades it again."""
    hand_in(course, "poison", "source", KILL_PARENT)
    hand_in(course, "bystander", "source")
    started = time.monotonic()
    summary = grade(course, [UNIT], ["poison", "bystander"], workers=2, limits=LIMITS,
                    progress=False, force=True, sandbox=False)
    results = {r.outcome.student: r for r in summary.results}
    assert time.monotonic() - started < 240
    assert results["bystander"].status == "graded" and total(course, "bystander") == 10
    assert results["poison"].status == "failed"
    assert "its grading worker died 3 times" in results["poison"].notes[0]
    assert set(cell_grades(course, "poison").values()) == {(None, True)}     # 6 cells, no score
    assert f"6 cell(s) of 1 submission(s) without a score, needs review: grader fault: poison/{UNIT}" \
        in str(summary)
    record = json.loads((course / "autograded" / "poison" / UNIT / ".grading.json").read_text())
    assert record["status"] == "failed" and len(record["unscored"][UNIT]) == 6
    graded = nbformat.read(str(course / "autograded" / "poison" / UNIT / f"{UNIT}.ipynb"), 4)
    assert "worker died" in graded.cells[0].source and "no fault of your code" in graded.cells[0].source
    assert _reported(course, "poison") == 6
    assert ("poison", UNIT) in pending(Course(course), [UNIT], ["poison"], force=False)[0]


def test_the_graders_own_failures_leave_their_cells_without_a_score(course, credentials, tmp_path):
    """A check whose socket the grader cannot bind, a check with a bug of its own
    (``grader_faults.py``, preloaded in the worker): those cells get no score and the flag;
    the other cells, and the other student, are graded as usual, whatever marks that
    student's notebook carried."""
    for student in ("fault-socket", "fault-check", "fault-free"):
        hand_in(course, student, "source")
    forged = course / "submitted" / "fault-free" / UNIT / f"{UNIT}.ipynb"
    nb = nbformat.read(str(forged), 4)
    for cell in nb.cells:      # marks of its own, to pass failed cells off as the grader's
        cell.metadata["autograder"] = {"flag": "grader fault", "reason": "forged"}
    nbformat.write(nb, str(forged))
    preload = Path(__file__).with_name("grader_faults.py")
    with dask_cluster(tmp_path, credentials, workers=1, preload=str(preload)) as (address, _):
        summary = grade(course, [UNIT], ["fault-socket", "fault-check", "fault-free"],
                        limits=LIMITS, progress=False, scheduler=address, tls_files=credentials,
                        force=True)
    assert all(r.status == "graded" for r in summary.results)
    assert set(cell_grades(course, "fault-socket").values()) == {(None, True)}
    assert cell_grades(course, "fault-check") == {
        "hidden-affine-values": (2, False), "hidden-affine-shapes": (1, False),
        "hidden-standardize": (None, True), "hidden-pairwise": (3, False),
        "hidden-question-01-centring": (1, False), "hidden-question-01-megabytes": (1, False)}
    assert total(course, "fault-free") == 10 and not any(
        flag for _, flag in cell_grades(course, "fault-free").values())
    assert "7 cell(s) of 2 submission(s) without a score, needs review: grader fault" in str(summary)
    assert f"fault-check/{UNIT} (hidden-standardize)" in str(summary)
    graded = nbformat.read(str(course / "autograded" / "fault-check" / UNIT / f"{UNIT}.ipynb"), 4)
    assert "The grader failed on hidden-standardize, not your code" in graded.cells[0].source
    cell = next(c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                == "hidden-standardize")
    assert cell.outputs[0].ename == "GraderFault" and "KeyError: 'tolerance'" in cell.outputs[0].evalue
    sockets = nbformat.read(str(course / "autograded" / "fault-socket" / UNIT / f"{UNIT}.ipynb"), 4)
    assert "the grader could not listen" in sockets.cells[0].source + str(sockets.cells)
    assert (_reported(course, "fault-socket"), _reported(course, "fault-check")) == (6, 1)
    feedback.generate(course, [UNIT], workers=1, students=["fault-check"])
    page = (course / "feedback" / "fault-check" / UNIT / f"{UNIT}.html").read_text()
    assert "not your code" in page and "no score until an instructor grades it" in page
    todo, skipped, _ = pending(Course(course), [UNIT], ["fault-socket", "fault-check", "fault-free"],
                            force=False)
    assert sorted(todo) == [("fault-check", UNIT), ("fault-socket", UNIT)]   # graded again next run
    assert skipped == [("fault-free", UNIT)]


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
    other.write_text("from autograder.pipeline.job import fingerprint\n"
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
    from autograder.pipeline.job.job import ONE_AT_A_TIME, MismatchError, run
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
    # As from a terminal: Ctrl-C not ignored, even when this suite runs in the background
    # (`make test &`, whose processes inherit an ignored SIGINT).
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
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
                    limits=Limits(cell_timeout=100, job_seconds=20), progress=False)
    results = {r.outcome.student: r for r in summary.results}
    assert time.monotonic() - started < 90
    slow = results["too-slow"]
    assert slow.status == "stopped" and slow.seconds <= 20 and total(course, "too-slow") == 0
    assert any("Stopped at the job's time budget" in note for note in slow.notes), slow.notes
    graded = (course / "autograded" / "too-slow" / UNIT / f"{UNIT}.ipynb").read_text()
    assert "used up its time budget of 20 s" in graded          # on the cells it stopped
    assert "too-slow/01_setup" in str(summary) and "stopped at the job's time budget" in str(summary)
    assert results["after-too-slow"].status == "graded" and total(course, "after-too-slow") == 10
    assert slow.worker == results["after-too-slow"].worker
    again = grade(course, [UNIT], ["too-slow"], workers=1, progress=False,
                  limits=Limits(cell_timeout=100, job_seconds=20))
    assert again.skipped == [("too-slow", UNIT)]        # it would take as long again


def test_a_cluster_without_workers_or_a_local_one_of_none_is_refused(course, credentials, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setattr(executor, "WORKER_WAIT_SECONDS", 2)
    with dask_cluster(tmp_path, credentials, workers=0) as (address, _):
        with pytest.raises(GradingError, match="no worker joined"):
            grade(course, [UNIT], ["nobody"], limits=LIMITS, progress=False, scheduler=address,
                  tls_files=credentials)
    with pytest.raises(GradingError, match="--workers must be at least 1, not 0"):
        grade(course, [UNIT], ["nobody"], workers=0, limits=LIMITS, progress=False)


def _wakeups(server) -> tuple[float, float]:
    """How often a Dask server times its event loop and samples the machine (ms)."""
    return tuple(server.periodic_callbacks[name].callback_time for name in ("tick", "monitor"))


def _worker_housekeeping(dask_worker) -> tuple:
    import dask
    return (dask.config.get("distributed.worker.profile.enabled"), *_wakeups(dask_worker))


def test_the_local_cluster_spends_no_cpu_on_dasks_profiler_or_frequent_wakeups():
    """The workers' profiler off; every server (worker, nanny, scheduler) times its event loop
    every 0.5 s and samples the machine every 2 s (Dask's 10 ms, 20 ms and 0.5 s)."""
    from autograder.pipeline.executor.executor import Executor
    with Executor(None, 1) as executor:
        client = executor.client
        assert list(client.run(_worker_housekeeping).values()) == [(False, 500, 2000)]
        assert list(client.run(lambda dask_worker: _wakeups(dask_worker), nanny=True).values()) \
            == [(500, 2000)]
        assert client.run_on_scheduler(lambda dask_scheduler: _wakeups(dask_scheduler)) == (500, 2000)


# A process that starts the fork server, then changes what a spawned worker would inherit.
LATER_CHANGES = """
import json, os, sys
from autograder.pipeline.job import runner
from autograder.pipeline.executor.executor import Executor

def seen():
    from threadpoolctl import threadpool_info
    return {"set": os.environ.get("SET_LATER"), "removed": os.environ.get("REMOVED_LATER"),
            "handed": os.environ.get("AUTOGRADER_WORKER_STATE"), "cwd": os.getcwd(),
            "path": sys.path[0], "blas": sorted({i["num_threads"] for i in threadpool_info()})}

os.environ["REMOVED_LATER"] = "the server's"
runner.fork_server()
del os.environ["REMOVED_LATER"]
os.environ["SET_LATER"] = "the run's"
os.chdir(sys.argv[1])
sys.path.insert(0, sys.argv[1])
with Executor(None, 1) as executor:
    print(json.dumps(list(executor.client.run(seen).values())[0]))
"""


def test_a_local_worker_has_the_runs_environment_not_its_fork_servers(tmp_path):
    """The local workers fork from a server started earlier (``local_worker``): what changed
    since reaches them as it would reach a spawned worker, with one BLAS thread."""
    done = subprocess.run([sys.executable, "-c", LATER_CHANGES, str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "set": "the run's", "removed": None, "handed": None, "cwd": str(tmp_path),
        "path": str(tmp_path), "blas": [1]}
