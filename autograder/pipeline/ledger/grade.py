"""Autograde a class: ``python -m autograder grade [--workers N | --scheduler ADDRESS] [units...]``.

The ledger of the grading service. It reads each submission into a ``Job`` (bytes:
nothing on a worker needs the course folder), hands the jobs to the executor (Dask:
``autograder.pipeline.executor.executor``) and, in this process alone, merges each result into
the course gradebook and installs its graded notebooks under ``autograded/`` as it
arrives. Stopping the run (Ctrl-C, a crash) loses at most the jobs in flight: a
submission whose files have not changed since it was last graded is skipped (``force``
regrades it), so running the command again grades only what is left. Manual grades and
comments are never touched. A job that fails still gets a score (zero, flagged for
review) and a graded notebook, so feedback can be generated for everyone; a cell, or a
whole job, that the grader itself failed on gets no score and waits for an instructor
(``autograder.pipeline.flags``), and is graded again by the next run.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.pipeline import gradebook, names
from autograder.pipeline.job import fingerprint
from autograder.pipeline.term import copies
from autograder.pipeline.sandbox import bwrap, cgroups
from autograder.pipeline.term import inert
from autograder.pipeline.course import RECORD, Course, digest, regular_files
from autograder.pipeline.executor.executor import Executor, ExecutorError, Stalled
from autograder.pipeline.flags import Flag
from autograder.pipeline.job.job import Job, Limits, Material, Result
from autograder.pipeline.executor.tls import TLSFiles


# A result's status, other than "graded": what the run's summary says of it
FLAGGED = {"failed": "could not grade, scored 0",
           "stopped": "stopped at the job's time budget, scored on what finished"}


class GradingError(RuntimeError):
    """The run cannot start (an assignment never generated, an unreachable cluster, ...)."""


@dataclass
class Summary:
    results: list[Result] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    where: str = ""
    sandbox: bool = True
    interrupted: bool = False
    stalled: str = ""           # why the run stopped waiting for workers (the rest left)
    newcomers: list[str] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)     # "student/unit (cell)", for review
    reviews: list[str] = field(default_factory=list)    # "student/unit (cell): why", scores kept
    refused: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[Result]:
        """Submissions that could not be graded (not through the grader's fault): scored 0,
        every cell flagged for review."""
        return [r for r in self.results if r.status != "graded" and not r.outcome.unscored]

    @property
    def unscored(self) -> list[Result]:
        """Submissions with cells left without a score (``flags``: the grader failed there)."""
        return [r for r in self.results if r.outcome.unscored]

    @property
    def flagged(self) -> list[Result]:
        """Every submission an instructor must look at."""
        return self.failed + self.unscored

    def __str__(self) -> str:
        rate = len(self.results) / self.seconds if self.seconds else 0.0
        text = (f"graded {len(self.results)} submission(s) in {self.seconds:.1f} s "
                f"({rate:.2f}/s) on {self.where}; {len(self.skipped)} unchanged, skipped; "
                f"{len(self.flagged)} flagged for review")
        for status, why in FLAGGED.items():
            names = [f"{r.outcome.student}/{r.outcome.assignment}" for r in self.failed
                     if r.status == status]
            if names:
                text += f" ({why}): {', '.join(names)}"
        for flag in Flag:
            text += _unscored_text(flag, self.unscored)
        if self.interrupted:
            text += "; INTERRUPTED: the rest was cancelled, run the command again to grade it"
        if self.stalled:
            text += f"; STOPPED: {self.stalled}; run the command again once workers are up"
        if not self.sandbox:
            text += "; UNSANDBOXED (--no-sandbox): student code ran with the grader's rights"
        if self.copies:
            more = f" and {len(self.copies) - 5} more" if len(self.copies) > 5 else ""
            text += (f"; {len(self.copies)} solution cell(s) copy the reference, for review "
                     f"(scores unchanged; the class report lists them): "
                     f"{', '.join(self.copies[:5])}{more}")
        if self.reviews:
            text += (f"; {len(self.reviews)} graded cell(s) for review (scores unchanged): "
                     + "; ".join(self.reviews))
        if self.refused:
            text += (f"; REFUSED {len(self.refused)} submission(s) with unsafe names (not graded, "
                     f"not added to the gradebook): {'; '.join(self.refused)}")
        if self.newcomers:
            text += ("; graded and added to the gradebook, but not on its student list before: "
                     f"{', '.join(self.newcomers)} (a typo, or a late enrolment? "
                     "`nbgrader db student list`)")
        return text


def _unscored_text(flag: Flag, results: list[Result]) -> str:
    """``; N cell(s) of M submission(s) without a score, needs review: FLAG: who (cells)``."""
    cells = {f"{r.outcome.student}/{r.outcome.assignment}": [
        grade_id for notebook in r.outcome.unscored.values()
        for grade_id, why in notebook.items() if why.flag is flag] for r in results}
    cells = {who: ids for who, ids in cells.items() if ids}
    if not cells:
        return ""
    return (f"; {sum(map(len, cells.values()))} cell(s) of {len(cells)} submission(s) without a "
            f"score, {flag.label}: " + ", ".join(f"{who} ({', '.join(ids)})"
                                                 for who, ids in cells.items()))


def _install(files: dict[str, bytes], destination: Path, trusted: set[str]) -> None:
    """Replace ``autograded/<student>/<assignment>`` by a result's graded notebooks and record,
    each notebook made inert first (``inert.clean_file``; ``trusted``: the instructor's cell
    sources, kept as written)."""
    incoming = destination.parent / f".{destination.name}.incoming"
    shutil.rmtree(incoming, ignore_errors=True)
    incoming.mkdir(parents=True)
    for name, data in files.items():
        if names.is_safe(name) or name == RECORD:
            inert_data = inert.clean_file(data, trusted) if name.endswith(".ipynb") else data
            (incoming / name).write_bytes(inert_data)
    shutil.rmtree(destination, ignore_errors=True)
    incoming.rename(destination)


def pending(course: Course, assignments: list[str], students: list[str] | None, force: bool
            ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """Submissions to grade, those skipped because they are unchanged since grading, and why
    each submission whose names are unsafe is refused (``Course.unsafe``). A submission
    stopped at its time budget is skipped too: grading it again would take as long."""
    todo, skipped, refused = [], [], []
    for student, assignment in course.submissions(assignments, students):
        why = course.unsafe(student, assignment)
        if why:
            refused.append(why)
            continue
        record = course.record(student, assignment)
        unchanged = (record.get("status") in ("graded", "stopped") and not record.get("unscored")
                     and record.get("digest") == digest(course.submitted(student, assignment)))
        (skipped if unchanged and not force else todo).append((student, assignment))
    return todo, skipped, refused


def longest_first(course: Course, todo: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``todo`` in the order to grade it. A run lasts until its last job ends, so the long jobs
    go first and the short ones fill the workers' gaps at the end (longest processing time
    first). How long a job takes is not known before it runs; the size of its notebooks
    stands for it (code, and the outputs the student saved): the reference course's largest
    units, 9 to 11, take 4-6 s to grade, its smallest, 1 and 2, under 1 s. In unit order the
    largest came last, and one worker idled for the last 1.6 s of the course."""
    def size(submission: tuple[str, str]) -> int:
        return sum(path.lstat().st_size for path in regular_files(course.submitted(*submission))
                   if path.suffix == ".ipynb")
    return sorted(todo, key=size, reverse=True)


def _newcomers(course: Course, todo: list[tuple[str, str]]) -> list[str]:
    """Students handing in who are not on the gradebook's student list, when it has one."""
    with Gradebook(course.db_url) as gb:
        roster = {student.id for student in gb.students}
    return sorted({student for student, _ in todo} - roster) if roster else []


def _choose(course: Course, known: list[str], assignments: list[str] | None) -> list[str]:
    if assignments:
        missing = [a for a in assignments if a not in known]
        if missing:
            raise GradingError(f"not in the gradebook: {', '.join(missing)}. Generate them first "
                               "(python -m autograder.notebooks release).")
        return list(assignments)
    return [unit for unit in course.units() if unit in known]


def material(course: Course, limits: Limits, sandbox: bool, keep: bool = False) -> Material:
    """What every job of the run needs from the course: the gradebook without its students,
    the configuration, each assignment's notebooks."""
    with tempfile.TemporaryDirectory(prefix="autograder-template-") as tmp:
        template = Path(tmp) / "gradebook.db"
        assignments = gradebook.template(course.gradebook, template)
        notebooks = {a: tuple(gradebook.notebooks(template, a)) for a in assignments}
        return Material(template.read_bytes(), course.config.read_text(encoding="utf-8"),
                        notebooks, limits, sandbox, str(course.root), fingerprint.installed(), keep)


def _jobs(course: Course, todo: list[tuple[str, str]],
          notebooks: dict[str, tuple[str, ...]]) -> Iterator[Job]:
    """Each submission read into a ``Job``, when the executor has room for it."""
    for student, assignment in todo:
        folder = course.submitted(student, assignment)
        releases = {name: (course.release(assignment) / f"{name}.ipynb").read_bytes()
                    for name in notebooks[assignment]}
        files, notes = course.handed_in(student, assignment)
        yield Job(student, assignment, files, releases, digest(folder), tuple(notes))


def grade(root: Path, assignments: list[str] | None = None, students: list[str] | None = None,
          workers: int = 2, limits: Limits = Limits(), force: bool = False,
          progress: bool = True, keep: bool = False, sandbox: bool = True,
          scheduler: str | None = None, tls_files: TLSFiles | None = None,
          insecure: bool = False) -> Summary:
    """Autograde every (or every chosen) submission of the course at ``root`` on a local
    cluster of ``workers`` processes, or on the Dask cluster at ``scheduler`` (reached with
    ``tls_files``; without TLS only if ``insecure``); each kernel in bubblewrap unless
    ``sandbox`` is False (refused when bubblewrap cannot run here)."""
    course, started = Course(Path(root).resolve()), time.monotonic()
    if not course.gradebook.exists():
        raise GradingError(f"no gradebook at {course.gradebook}: generate the assignments first.")
    why = bwrap.unavailable() if sandbox else None
    if why:
        raise GradingError(why)
    _say_without_cgroups(cgroups.unavailable())
    shared = material(course, limits, sandbox, keep)
    chosen = _choose(course, list(shared.notebooks), assignments)
    unreleased = [a for a in chosen if not course.release(a).is_dir()]
    if unreleased:
        raise GradingError(f"no release folder for {', '.join(unreleased)}: generate it first.")
    todo, skipped, refused = pending(course, chosen, students, force)
    todo = longest_first(course, todo)
    summary = Summary(skipped=skipped, sandbox=sandbox, newcomers=_newcomers(course, todo),
                      refused=refused)
    try:
        with Executor(scheduler, workers, tls_files, insecure) as executor:
            summary.where = executor.where
            if progress and executor.dashboard:
                print(f"Dask dashboard: {executor.dashboard}", file=sys.stderr)
            executor.check(shared.installed)
            _merge_all(course, executor, _jobs(course, todo, shared.notebooks), len(todo),
                       shared, summary, progress)
    except ExecutorError as error:
        raise GradingError(str(error)) from error
    summary.seconds = time.monotonic() - started
    return summary


def _say_without_cgroups(why: str | None) -> None:
    """Say, before grading, that this machine gives no job a control group of its own (so no
    job is held to one core, nor its whole memory and processes bounded, and budgets are on
    the clock): docs/deploying.md says how to give the grader one."""
    if why:
        print(f"No control group per grading job on this machine: {why}. Each job keeps its "
              "kernel's own limits and a time budget on the clock (see docs/deploying.md).",
              file=sys.stderr)


def _copies(course: Course, result: Result) -> list[str]:
    """The reference solution cells a result reproduces (written into its record)."""
    student, unit = result.outcome.student, result.outcome.assignment
    return [f"{student}/{unit} ({found['cell']})"
            for found in copies.flag(course, unit, result.files)]


def _merge_all(course: Course, executor: Executor, jobs: Iterator[Job], total: int,
               shared: Material, summary: Summary, progress: bool) -> None:
    """Merge each result into the gradebook and ``autograded/`` as it arrives; Ctrl-C, or no
    worker for the executor's bound (``Stalled``), keeps what was merged and cancels the rest."""
    trusted: dict[str, set[str]] = {}
    with Gradebook(course.db_url) as gb:
        try:
            for result in executor.results(jobs, total, shared, progress):
                student, assignment = result.outcome.student, result.outcome.assignment
                gradebook.merge(gb, result.outcome)
                summary.copies += _copies(course, result)
                summary.reviews += [f"{student}/{assignment} ({cell}): {why}"
                                    for cell, why in result.reviews.items()]
                if assignment not in trusted:
                    trusted[assignment] = inert.instructor_sources(course.release(assignment))
                _install(result.files, course.autograded(student, assignment), trusted[assignment])
                summary.results.append(result)
        except KeyboardInterrupt:
            summary.interrupted = True
        except Stalled as error:
            summary.stalled = str(error)
