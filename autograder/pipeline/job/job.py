"""One submission graded: bytes in, a ``Result`` out (the job of the grading service).

``run(job, material)`` runs on a grading worker (``autograder.pipeline.executor.executor``)
and needs the installed packages, never the instructor's course folder: the
``Job`` carries the submission's files and its unit's release notebooks, the
``Material`` (the same for every job of a run) the gradebook template (the
assignments, no student), the course's nbgrader configuration and the limits.

In a scratch course of its own (``autograder.pipeline.job.station``) the job runs
nbgrader's ``Autograde`` in the worker's process, where nbgrader and its
libraries are imported already. The kernel runs in an OS sandbox
(``autograder.pipeline.sandbox.kernelspec``: bubblewrap, Landlock) with
``autograder.pipeline.sandbox.kernel``'s bounds (memory, file size, CPU, output), one kernel
per submission, so a submission sees nothing of the course, the machine or another
student. The kernel and everything it starts run in the job's control group where the worker
can make one (``Station.job``): one core at most, its memory and processes bounded, its CPU
time the job's budget (``autograder.pipeline.job.budget``). The result holds the scores, notes for the student (also put in a markdown
cell at the top of the graded notebook, so feedback shows them) and the files for
``autograded/<student>/<assignment>/``; the instructor's process merges it.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import capture_log
from sqlalchemy.exc import SAWarning
from traitlets.config.loader import PyFileConfigLoader

from autograder.pipeline import claim, flags, gradebook
from autograder.pipeline.course import RECORD
from autograder.pipeline.job import budget, fingerprint, job_gradebook, sanitize
from autograder.pipeline.job import launch  # noqa: F401  (nbgrader, faster: see its docstring)
from autograder.pipeline.job.execute import BUDGET_ERROR
from autograder.pipeline.job.station import SPENT, Station
from autograder.pipeline.sandbox import kernelspec
from autograder.pipeline.sandbox.cgroup_base import Cgroup
from autograder.pipeline.sandbox.limits import Limits as GroupLimits
from autograder.registry import SECONDS_PER_CHECK

GiB = 1 << 30
# nbclient waits this long after a cell's reply for its last output (default 4 s), and nbgrader
# raises when the wait ends (raise_on_iopub_timeout), which stops the notebook's grading: on a
# busy machine, output that lagged could leave a correct submission ungraded.
IOPUB_SECONDS = 20
TIMEOUT_ERRORS = ("KeyboardInterrupt", "CellTimeoutError")
NOTES_TITLE = "#### Notes from the grader"
# Besides the graded notebooks: our record, and what nbgrader's own later steps read
# (the export's timestamp; release_feedback's submission_secret.txt, written by collect).
KEPT = (RECORD, "timestamp.txt", "submission_secret.txt")
# nbgrader's log of a job, kept out of the worker's own (capture_log reads it)
LOG = logging.getLogger("autograder.job")
LOG.propagate = False
LOG.setLevel(logging.INFO)
# A worker process grades one submission at a time: a job sets the process's environment and
# grades into the worker's one job gradebook (``Station.gradebook``).
ONE_AT_A_TIME = threading.Lock()


@dataclass(frozen=True)
class Limits:
    """Bounds for one submission; ``cell_timeout=None`` keeps the course's ``c.Execute.timeout``."""

    cell_timeout: int | None = None
    memory_bytes: int = 4 * GiB
    output_chars: int = 1_000_000
    file_bytes: int = 100 << 20
    disk_bytes: int = 512 << 20     # the sandbox's two tmpfs mounts together (working folder, /scratch)
    cpu_seconds: int = 1800
    job_seconds: int | None = None  # None: the unit's budget (autograder.pipeline.job.budget)
    processes: int = 256            # the job's control group: processes and threads at once
    cpus: float = 1.0               # and its CPU share, in cores (the machine's equal share below)
    # How long a check waits for the kernel: the backstop of its computing limit, so a kernel
    # given a small share of a busy machine's cores may need more before its computing is up.
    check_wait_seconds: float = 2 * SECONDS_PER_CHECK


@dataclass(frozen=True)
class Material:
    """What every job of a run shares; sent to each worker once."""

    template: bytes                          # gradebook.db: the assignments, no student
    config: str                              # the course's nbgrader_config.py
    notebooks: dict[str, tuple[str, ...]]    # assignment: its notebooks' names
    limits: Limits
    sandbox: bool = True
    course: str = ""                         # the instructor's folder: no unsandboxed kernel writes there
    installed: dict[str, str] = field(default_factory=dict)   # fingerprint.installed() of the instructor
    keep: bool = False                       # leave the scratch course behind (debugging)


@dataclass(frozen=True)
class Job:
    """One submission: its files by relative path, and the release notebooks of its unit."""

    student: str
    assignment: str
    files: dict[str, bytes]
    releases: dict[str, bytes]               # notebook name: the release notebook
    digest: str                              # course.digest of the submitted folder
    notes: tuple[str, ...] = ()              # the ledger's notes for the student (Course.handed_in)


@dataclass
class Result:
    """A graded submission: its outcome for the gradebook, notes, and its graded files."""

    outcome: gradebook.Outcome
    notes: list[str] = field(default_factory=list)
    status: str = "graded"   # "failed": nbgrader produced no graded notebook; "stopped": at its time budget
    seconds: float = 0.0
    files: dict[str, bytes] = field(default_factory=dict)   # for autograded/<student>/<assignment>/
    worker: str = ""
    reviews: dict[str, str] = field(default_factory=dict)   # grade id: why, the score kept (flags)


class MismatchError(RuntimeError):
    """This worker cannot grade as the instructor's machine would (other packages, more than one
    submission at a time): it must not grade."""


def _config(root: Path, db: Path, limits: Limits) -> str:
    """The job's ``nbgrader_config.py``: the course's, in the scratch course at ``root``, with
    the gradebook ``db`` (whatever the course's names), the grader's preprocessors and bounds."""
    timeout = "" if limits.cell_timeout is None else f"c.Execute.timeout = {limits.cell_timeout}\n"
    return (
        '"""Written by autograder.pipeline.job.job: the course\'s configuration, bounded."""\n'
        "import runpy\n"
        "from nbconvert.preprocessors import ClearMetadataPreprocessor\n"
        "from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata,\n"
        "                                    IgnorePattern, LimitOutput, SaveAutoGrades)\n"
        "from autograder.pipeline.job.execute import Execute\n"
        "from autograder.pipeline.job.outputs import LimitOutputSize\n\n"
        "c = get_config()\n"
        f"runpy.run_path({str(root / 'course_config.py')!r}, init_globals={{'get_config': lambda: c}})\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {job_gradebook.url(db)!r}\n"
        f"{timeout}"
        f"c.Execute.check_wait_seconds = {limits.check_wait_seconds!r}\n"
        "c.Execute.kernel_name = 'python3'\n"
        "c.KernelManager.transport = 'ipc'   # sandboxed kernels have no network\n"
        f"c.KernelManager.ip = {str(root.parent / 'run' / 'kernel')!r}\n"
        f"c.KernelManager.connection_file = {str(root.parent / 'run' / 'kernel.json')!r}\n"
        f"c.Execute.iopub_timeout = {IOPUB_SECONDS}\n"
        "c.Autograde.autograde_preprocessors = [Execute, IgnorePattern, ClearMetadataPreprocessor,\n"
        "    LimitOutput, LimitOutputSize, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]\n"
        f"c.LimitOutputSize.max_chars = {limits.output_chars}\n"
        # The grader's own bound, above the kernel's (which a submission can undo)
        f"c.Execute.max_cell_output = {2 * limits.output_chars}\n"
    )


def _group_limits(limits: Limits) -> GroupLimits:
    """What the job's control group holds all its processes to."""
    return GroupLimits(memory=limits.memory_bytes, processes=limits.processes, cpus=limits.cpus)


def _budget_config(ends: float, job_budget: budget.Budget, folder: Path, record: Path | None,
                   group: Cgroup | None) -> str:
    """The lines of the job's configuration that keep it to ``job_budget``, whose clock ends
    at ``ends`` on the monotonic clock (its CPU time is watched by ``Station.deadline``, which
    writes ``SPENT`` in the job's ``folder``), and find its kernel's CPU time: its control
    group ``group``, else ``record``, the sandbox's record (None if unsandboxed)."""
    return (f"c.Execute.job_deadline = {ends!r}\n"
            f"c.Execute.job_budget = {job_budget.describe()!r}\n"
            f"c.Execute.job_spent = {str(folder / SPENT)!r}\n"
            f"c.Execute.job_cgroup = {group.name if group else ''!r}\n"
            f"c.Execute.sandbox_record = {str(record or '')!r}\n")


def _write_files(files: dict[str, bytes], folder: Path) -> None:
    """Write a submission's files under ``folder`` (paths that would leave it are refused)."""
    for name, data in files.items():
        target = (folder / name).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise ValueError(f"a submission file outside its folder: {name!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@contextmanager
def _process_state(env: dict[str, str]):
    """The job's variables in ``os.environ`` (its kernelspec's), and the worker's environment and
    import path as they were afterwards (the course's configuration changes both)."""
    saved_env, saved_path = dict(os.environ), list(sys.path)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path


def _autograde(root: Path, student: str, assignment: str) -> tuple[bool, str]:
    """nbgrader's ``Autograde`` on the scratch course at ``root``: whether it succeeded, its log."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.student_id = student
    config.CourseDirectory.assignment_id = assignment
    config.BaseConverter.force = True
    converter = Autograde(coursedir=CourseDirectory(config=config), config=config, log=LOG)
    with warnings.catch_warnings():   # nbgrader's add_submission warns under SQLAlchemy 2
        warnings.simplefilter("ignore", SAWarning)
        outcome = capture_log(converter)
    return bool(outcome["success"]), outcome.get("log", "") + outcome.get("error", "")


def _stopped_cells(cells: list[dict], errors: tuple[str, ...]) -> list[str]:
    """The cells of a graded notebook with an error output named in ``errors``."""
    return [cell["metadata"].get("nbgrader", {}).get("grade_id") or cell.get("id", "?")
            for cell in cells if cell["cell_type"] == "code"
            and any(o.get("ename") in errors for o in cell["outputs"])]


def annotate(path: Path, notes: list[str]) -> None:
    """Put the notes in a markdown cell at the top of a graded notebook."""
    if not notes:
        return
    nb = nbformat.read(str(path), as_version=4)
    text = NOTES_TITLE + "\n\n" + "\n".join(f"- {note}" for note in notes)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))
    path.chmod(0o644)
    nbformat.write(nb, str(path))


def fallback(submitted: Path, graded: Path) -> None:
    """A graded notebook for a submission nbgrader could not grade: the code, no outputs."""
    graded.parent.mkdir(parents=True, exist_ok=True)
    try:
        nb = nbformat.read(str(submitted), as_version=4)
    except Exception:  # noqa: BLE001 - not even readable: an empty notebook says so
        nb = nbformat.v4.new_notebook()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, str(graded))


def record(job: Job, result: Result, seconds: float, sandbox: bool) -> bytes:
    """The ``.grading.json`` kept with the graded notebooks (what the next run compares, and
    the cells left without a score, for the class report)."""
    return json.dumps({
        "digest": job.digest, "status": result.status, "notes": result.notes, "sandbox": sandbox,
        "unscored": flags.to_record(result.outcome.unscored), "reviews": result.reviews,
        "seconds": round(seconds, 1), "graded_at": datetime.now(timezone.utc).isoformat(),
    }, indent=1).encode()


def _could_not(reason: str) -> str:
    return (f"The grader could not run this notebook ({reason}); it scores zero until an "
            "instructor looks at it.")


def _unscored_note(unscored: dict[str, dict[str, flags.Unscored]]) -> str:
    return (f"The grader failed on {', '.join(flags.cells_of(unscored))}, not your code: "
            "no score there until an instructor grades it.")


def lost(job: Job, notebooks: tuple[str, ...], reason: str, sandbox: bool) -> Result:
    """The result of a submission the grader lost (its worker died too often, the grader's
    own code raised): no score on any cell, each flagged ``needs review: grader fault``, its
    notebooks without outputs and with the reason on top."""
    why = flags.Unscored(flags.Flag.GRADER_FAULT, reason)
    outcome = gradebook.Outcome(job.student, job.assignment, unscored={
        name: dict.fromkeys(flags.grade_cells(json.loads(job.releases[name])["cells"]), why)
        for name in notebooks})
    notes = [f"The grader could not run this notebook ({reason}); through no fault of your code, "
             "it has no score until an instructor grades it."]
    result = Result(outcome, notes, "failed")
    with tempfile.TemporaryDirectory(prefix="autograder-lost-") as tmp:
        folder = Path(tmp)
        _write_files(job.files, folder / "submitted")
        for name in notebooks:
            path = folder / "graded" / f"{name}.ipynb"
            fallback(folder / "submitted" / f"{name}.ipynb", path)
            annotate(path, notes)
            result.files[path.name] = path.read_bytes()
    result.files[RECORD] = record(job, result, 0.0, sandbox)
    return result


def run(job: Job, material: Material) -> Result:
    """Grade one submission on this worker; see the module's docstring."""
    started, station = time.monotonic(), Station.get()
    if not ONE_AT_A_TIME.acquire(blocking=False):
        raise MismatchError(f"worker {station.name} was given a second submission while it graded "
                            "one: start grading workers with one thread each (dask worker "
                            "ADDRESS --nthreads 1)")
    try:
        differences = fingerprint.differences(material.installed, fingerprint.installed())
        if differences:
            raise MismatchError(f"worker {station.name} has other packages than the instructor: "
                                + "; ".join(differences))
        with station.job(material.keep, _group_limits(material.limits)) as (folder, group):
            result = _grade(job, material, station, folder, group, started)
    finally:
        ONE_AT_A_TIME.release()
    result.seconds, result.worker = time.monotonic() - started, station.name
    return result


def _grade(job: Job, material: Material, station: Station, folder: Path, group: Cgroup | None,
           started: float) -> Result:
    root, notebooks = folder / "course", material.notebooks[job.assignment]
    submitted = root / "submitted" / job.student / job.assignment
    graded = root / "autograded" / job.student / job.assignment
    _write_files(job.files, submitted)
    job_gradebook.replace(station.gradebook, material.template)
    (root / "course_config.py").write_text(material.config)
    (root / "nbgrader_config.py").write_text(_config(root, station.gradebook, material.limits))
    notes = list(job.notes) + claim.believed_at_grading(submitted, claim.now())
    for name in notebooks:
        release = folder / "release" / f"{name}.ipynb"
        release.parent.mkdir(parents=True, exist_ok=True)
        release.write_bytes(job.releases[name])
        notes += sanitize.prepare(submitted, name, release)
    shared = station.shared(Path(material.course), material.sandbox)
    procs = [str(path) for path in group.procs_files()] if group else None
    env = {**kernelspec.write(folder, graded, shared, material.limits, material.sandbox, procs),
           **kernelspec.THREADS}
    job_budget = budget.of(job.assignment, material.limits, group is not None)
    ends = started + job_budget.wall - budget.FINISH_SECONDS
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(_budget_config(ends, job_budget, folder, kernelspec.sandbox_record(folder)
                                    if material.sandbox else None, group))
    with _process_state(env), station.deadline(folder, ends - time.monotonic(), group,
                                               job_budget.cpu) as deadline:
        success, _ = _autograde(root, job.student, job.assignment)
    failure = (None if success else f"its time budget of {job_budget.describe()} ran out"
               if deadline.passed else "nbgrader autograde failed")
    result = _collect(job, material, root, station.gradebook, failure, notes, started)
    if material.keep:
        shutil.copyfile(station.gradebook, root / "gradebook.db")
    return result


def _collect(job: Job, material: Material, root: Path, db: Path, failure: str | None,
             notes: list[str], started: float) -> Result:
    """Read what nbgrader left in the scratch course and the gradebook ``db`` into a ``Result``."""
    submitted = root / "submitted" / job.student / job.assignment
    graded = root / "autograded" / job.student / job.assignment
    result, unscored = Result(gradebook.Outcome(job.student, job.assignment), notes), {}
    for name in material.notebooks[job.assignment]:
        path = graded / f"{name}.ipynb"
        if failure is None and path.exists():
            unscored[name] = _read_graded(path, notes, result)
        else:
            result.status = "failed"
            notes.append(_could_not(failure or "no output"))
            fallback(submitted / f"{name}.ipynb", path)
    try:
        result.outcome = gradebook.read(db, job.student, job.assignment)
    except Exception:  # noqa: BLE001 - no submission recorded: nbgrader failed before grading
        result.status = "failed"
    result.outcome.review = result.status != "graded"
    if result.status != "failed":
        result.outcome.unscored = {name: cells for name, cells in unscored.items() if cells}
    if result.outcome.unscored:
        notes.append(_unscored_note(result.outcome.unscored))
    for name in material.notebooks[job.assignment]:
        annotate(graded / f"{name}.ipynb", notes)
    for path in graded.iterdir():
        if path.is_file() and (path.suffix == ".ipynb" or path.name in KEPT):
            result.files[path.name] = path.read_bytes()
    result.files[RECORD] = record(job, result, time.monotonic() - started, material.sandbox)
    return result


def _read_graded(path: Path, notes: list[str], result: Result) -> dict[str, flags.Unscored]:
    """A graded notebook's cells left without a score; notes on the cells that were stopped:
    at the cell time limit, or at the job's time budget (then the result is "stopped",
    flagged for review)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    budget_cells = _stopped_cells(cells, (BUDGET_ERROR,))
    timed_out = [cell for cell in _stopped_cells(cells, TIMEOUT_ERRORS) if cell not in budget_cells]
    if timed_out:
        notes.append(f"Cells stopped at the time limit: {', '.join(timed_out)}. What they "
                     "had defined before that was graded.")
    if budget_cells:
        result.status = "stopped"
        notes.append(f"Stopped at the job's time budget: the cells from {budget_cells[0]} on "
                     "did not finish and score zero; what finished before was graded. An "
                     "instructor will look at this submission.")
    result.reviews.update(flags.reviews(cells))
    return flags.marked(cells)
