"""Autograde a class in parallel: ``python -m autograder grade --workers N [assignments...]``.

Up to N jobs run at once, each an ``nbgrader autograde`` process in a scratch
course of its own (``autograder.pipeline.job``). The main thread is the only
writer of the course gradebook: it merges each job's results as the job ends and
installs its graded notebooks under ``autograded/``. A submission whose files
have not changed since it was last graded is skipped (``force`` regrades it), so
running the command again changes nothing; manual grades and comments are never
touched. A job that fails still gets a score (zero, flagged for review) and a
graded notebook, so feedback can be generated for everyone.
"""
from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.pipeline import bwrap, gradebook, job
from autograder.pipeline.course import RECORD, Course, digest
from autograder.pipeline.progress import Progress


# Besides the graded notebooks: our record, and what nbgrader's own later steps read
# (the export's timestamp; release_feedback's submission_secret.txt, written by collect).
KEPT = (RECORD, "timestamp.txt", "submission_secret.txt")


class GradingError(RuntimeError):
    """The run cannot start (e.g. an assignment that was never generated)."""


@dataclass
class Summary:
    results: list[job.Result] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1
    sandbox: bool = True

    def __str__(self) -> str:
        failed = [r for r in self.results if r.status != "graded"]
        text = (f"graded {len(self.results)} submission(s) in {self.seconds:.1f} s with "
                f"{self.workers} worker(s); {len(self.skipped)} unchanged, skipped")
        if not self.sandbox:
            text += "; UNSANDBOXED (--no-sandbox): student code ran with the grader's rights"
        if failed:
            text += "; could not grade (scored 0, flagged for review): " + ", ".join(
                f"{r.outcome.student}/{r.outcome.assignment}" for r in failed)
        return text


def _install(folder: Path | None, destination: Path) -> None:
    """Replace ``autograded/<student>/<assignment>`` by the job's graded notebooks and record."""
    if folder is None or not folder.exists():
        return
    incoming = destination.parent / f".{destination.name}.incoming"
    shutil.rmtree(incoming, ignore_errors=True)
    incoming.mkdir(parents=True)
    for path in folder.iterdir():
        if path.is_file() and (path.suffix == ".ipynb" or path.name in KEPT):
            shutil.copyfile(path, incoming / path.name)
    shutil.rmtree(destination, ignore_errors=True)
    incoming.rename(destination)


def pending(course: Course, assignments: list[str], students: list[str] | None,
            force: bool) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Submissions to grade, and those skipped because they are unchanged since grading."""
    todo, skipped = [], []
    for student, assignment in course.submissions(assignments, students):
        record = course.record(student, assignment)
        unchanged = (record.get("status") == "graded"
                     and record.get("digest") == digest(course.submitted(student, assignment)))
        (skipped if unchanged and not force else todo).append((student, assignment))
    return todo, skipped


def _choose(course: Course, known: list[str], assignments: list[str] | None) -> list[str]:
    if assignments:
        missing = [a for a in assignments if a not in known]
        if missing:
            raise GradingError(f"not in the gradebook: {', '.join(missing)}. Generate them first "
                               "(python -m autograder.notebooks release).")
        return list(assignments)
    return [unit for unit in course.units() if unit in known]


def grade(root: Path, assignments: list[str] | None = None, students: list[str] | None = None,
          workers: int = 2, limits: job.Limits = job.Limits(), force: bool = False,
          progress: bool = True, keep: bool = False, sandbox: bool = True) -> Summary:
    """Autograde every (or every chosen) submission of the course at ``root``; each kernel in
    bubblewrap unless ``sandbox`` is False (refused when bubblewrap cannot run here)."""
    course, started = Course(Path(root).resolve()), time.monotonic()
    if not course.gradebook.exists():
        raise GradingError(f"no gradebook at {course.gradebook}: generate the assignments first.")
    why = bwrap.unavailable() if sandbox else None
    if why:
        raise GradingError(why)
    ws = job.Workspace(course, limits, keep=keep, sandbox=sandbox)
    lock = threading.Lock()

    def run_one(student: str, assignment: str) -> job.Result:
        with lock:
            folder = ws.next_dir()
        return job.run(ws, student, assignment, folder)

    try:
        chosen = _choose(course, ws.assignments, assignments)
        todo, skipped = pending(course, chosen, students, force)
        summary = Summary(skipped=skipped, workers=workers, sandbox=sandbox)
        with ThreadPoolExecutor(max_workers=workers) as pool, \
                Gradebook(course.db_url) as gb, \
                Progress(len(todo), "autograding", enabled=progress) as bar:
            futures = {pool.submit(run_one, s, a): (s, a) for s, a in todo}
            for future in as_completed(futures):
                student, assignment = futures[future]
                result = _result(future, student, assignment)
                gradebook.merge(gb, result.outcome)
                _install(result.folder, course.autograded(student, assignment))
                summary.results.append(result)
                bar.step(f"{student} {assignment}: {result.status}")
    finally:
        ws.close()
    summary.seconds = time.monotonic() - started
    return summary


def _result(future, student: str, assignment: str) -> job.Result:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a bug in a job must not stop the class
        outcome = gradebook.Outcome(student, assignment, review=True)
        return job.Result(outcome, [f"The grader failed: {type(error).__name__}: {error}"],
                          status="failed")
