"""One submission, graded by ``nbgrader autograde`` in a scratch course of its own.

A job's folder holds a course with nothing but a gradebook (the template: the
assignments, no other student), a generated ``nbgrader_config.py`` (the course's,
plus the kernel and output bounds) and the one submission. The kernel runs in an OS
sandbox (``autograder.pipeline.kernelspec``: bubblewrap, Landlock) with
``autograder.pipeline.kernel``'s bounds (memory, file size, CPU, output), so a
submission sees nothing of the course or the machine and can damage nothing but
its own scratch folders. Afterwards ``run`` reads the scores, notes what went wrong for
the student (in a markdown cell at the top of the graded notebook, so feedback
shows it) and leaves ``autograded/<student>/<assignment>/`` for the grader to merge.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import psutil

from autograder.pipeline import gradebook, kernelspec, runner, sanitize
from autograder.remote import hidden
from autograder.pipeline.course import RECORD, Course, digest, tool_env
from course.datasets.digits import CACHE_ENV, default_cache_dir

GiB = 1 << 30
# Run once per grading run, outside the guard: the caches kernels may read but never write.
WARM_CACHES = ("import matplotlib.font_manager\n"
               "from course.datasets import load_digits, load_mnist\n"
               "load_mnist(); load_digits()")
# nbclient waits this long after a cell's reply for its last output (default 4 s), and nbgrader
# raises when the wait ends (raise_on_iopub_timeout), which stops the notebook's grading: on a
# busy machine, output that lagged could leave a correct submission ungraded.
IOPUB_SECONDS = 20
TIMEOUT_ERRORS = ("KeyboardInterrupt", "CellTimeoutError")
NOTES_TITLE = "#### Notes from the grader"


@dataclass(frozen=True)
class Limits:
    """Bounds for one submission; ``cell_timeout=None`` keeps the course's ``c.Execute.timeout``."""

    cell_timeout: int | None = None
    memory_bytes: int = 4 * GiB
    output_chars: int = 1_000_000
    file_bytes: int = 100 << 20
    disk_bytes: int = 512 << 20     # the sandbox's two tmpfs mounts together (working folder, /scratch)
    cpu_seconds: int = 1800
    job_seconds: int = 1200


@dataclass
class Result:
    """A graded submission: its outcome for the gradebook, notes, and where its files are."""

    outcome: gradebook.Outcome
    notes: list[str] = field(default_factory=list)
    status: str = "graded"          # or "failed": nbgrader produced no graded notebook
    seconds: float = 0.0
    folder: Path | None = None      # the job's autograded/<student>/<assignment>/


class Workspace:
    """What every job of a grading run shares: a template gradebook, caches (matplotlib's fonts,
    the course's digits) that kernels read but may not write, and whether kernels are sandboxed."""

    def __init__(self, course: Course, limits: Limits, keep: bool = False,
                 sandbox: bool = True) -> None:
        self.course, self.limits, self.keep, self.sandbox = course, limits, keep, sandbox
        self.dir = Path(tempfile.mkdtemp(prefix="autograder-run-"))
        self.template = self.dir / "template.db"
        self.assignments = gradebook.template(course.gradebook, self.template)
        self.notebooks = {a: gradebook.notebooks(self.template, a) for a in self.assignments}
        # Units whose every hidden check runs in the grader: their kernels get no reference.
        self.remote_only = {a for a in self.assignments if not any(
            call and call[0] in hidden.IN_KERNEL
            for call in map(hidden.parse, gradebook.sources(self.template, a)))}
        self.shared = kernelspec.Shared(self.dir, course.root, self.dir / "matplotlib",
                                        default_cache_dir(), CACHE_ENV)
        self._count = 0
        self._warm_caches()

    def _warm_caches(self) -> None:
        """Build matplotlib's font cache and the digit caches once (the first grading on a new
        machine would otherwise have every capstone kernel try, and be refused, to write them)."""
        subprocess.run([sys.executable, "-c", WARM_CACHES], check=False, env=tool_env(
            {"MPLCONFIGDIR": str(self.shared.matplotlib), CACHE_ENV: str(self.shared.datasets)}))

    def next_dir(self) -> Path:
        self._count += 1
        return self.dir / "jobs" / f"{self._count:05d}"

    def close(self) -> None:
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def _config(course: Course, root: Path, limits: Limits) -> str:
    timeout = "" if limits.cell_timeout is None else f"c.Execute.timeout = {limits.cell_timeout}\n"
    return (
        '"""Written by autograder.pipeline.job: the course\'s configuration, bounded."""\n'
        "import runpy\n"
        "from nbconvert.preprocessors import ClearMetadataPreprocessor\n"
        "from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata,\n"
        "                                    IgnorePattern, LimitOutput, SaveAutoGrades)\n"
        "from autograder.pipeline.execute import Execute\n"
        "from autograder.pipeline.outputs import LimitOutputSize\n\n"
        "c = get_config()\n"
        f"runpy.run_path({str(course.config)!r}, init_globals={{'get_config': lambda: c}})\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"{timeout}"
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


def _copy_files(source: Path, destination: Path) -> None:
    """Copy a submission's regular files (symbolic links are left out)."""
    destination.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.rglob("*")):
        if path.is_file() and not path.is_symlink() and not any(p.is_symlink() for p in path.parents):
            target = destination / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _environment(ws: Workspace, job: Path, graded: Path, assignment: str) -> dict[str, str]:
    """The nbgrader process's variables: its kernelspec's, and a memory backstop."""
    reference = assignment not in ws.remote_only
    return tool_env({**kernelspec.write(job, graded, ws.shared, ws.limits, ws.sandbox, reference),
                     **kernelspec.THREADS,
                     "AUTOGRADER_PROCESS_MEMORY": str(ws.limits.memory_bytes + 3 * GiB)})


def _autograde(ws: Workspace, root: Path, student: str, assignment: str, env: dict) -> str | None:
    """Run nbgrader; return why it failed, or None."""
    args = ["autograde", assignment, "--student", student, "--force", f"--CourseDirectory.root={root}"]
    code = runner.run(args, root, env, root.parent / "nbgrader.log", timeout=ws.limits.job_seconds)
    pidfile = root.parent / "kernel.pid"
    if pidfile.exists():   # a kernel nbgrader could not shut down, or one left by a killed run
        for pid in pidfile.read_text().split():
            if psutil.pid_exists(int(pid)) and "autograder.pipeline.kernel" in " ".join(
                    _cmdline(int(pid))):
                runner.kill_tree(int(pid))
    if code is None:
        return f"grading took longer than {ws.limits.job_seconds} s and was stopped"
    return None if code == 0 else f"nbgrader autograde exited with code {code}"


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


def _timeouts(path: Path) -> list[str]:
    """The cells of a graded notebook that were stopped at the time limit."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [cell["metadata"].get("nbgrader", {}).get("grade_id") or cell.get("id", "?")
            for cell in cells if cell["cell_type"] == "code"
            and any(o.get("ename") in TIMEOUT_ERRORS for o in cell["outputs"])]


def _annotate(path: Path, notes: list[str]) -> None:
    """Put the notes in a markdown cell at the top of a graded notebook."""
    if not notes:
        return
    nb = nbformat.read(str(path), as_version=4)
    text = NOTES_TITLE + "\n\n" + "\n".join(f"- {note}" for note in notes)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))
    path.chmod(0o644)
    nbformat.write(nb, str(path))


def _fallback(submitted: Path, graded: Path) -> None:
    """A graded notebook for a submission nbgrader could not grade: the code, no outputs."""
    graded.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(str(submitted), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, str(graded))


def run(ws: Workspace, student: str, assignment: str, job: Path | None = None) -> Result:
    """Grade ``submitted/<student>/<assignment>`` of ``ws.course`` in a job folder of its own."""
    started, job = time.monotonic(), job or ws.next_dir()
    root = job / "course"
    submitted, graded = root / "submitted" / student / assignment, root / "autograded" / student / assignment
    original = ws.course.submitted(student, assignment)
    _copy_files(original, submitted)
    shutil.copy(ws.template, root / "gradebook.db")
    (root / "nbgrader_config.py").write_text(_config(ws.course, root, ws.limits))
    notes = []
    for name in ws.notebooks[assignment]:
        release = ws.course.release(assignment) / f"{name}.ipynb"
        notes += sanitize.prepare(submitted, name, release)
    failure = _autograde(ws, root, student, assignment,
                         _environment(ws, job, graded, assignment))
    result = Result(gradebook.Outcome(student, assignment), notes, folder=graded)
    for name in ws.notebooks[assignment]:
        path = graded / f"{name}.ipynb"
        if failure is None and path.exists():
            stopped = _timeouts(path)
            if stopped:
                notes.append(f"Cells stopped at the time limit: {', '.join(stopped)}. What they "
                             "had defined before that was graded.")
        else:
            result.status = "failed"
            notes.append(f"The grader could not run this notebook ({failure or 'no output'}); "
                         "it scores zero until an instructor looks at it.")
            _fallback(submitted / f"{name}.ipynb", path)
    try:
        result.outcome = gradebook.read(root / "gradebook.db", student, assignment)
    except Exception:  # noqa: BLE001 - no submission recorded: nbgrader failed before grading
        result.status = "failed"
    result.outcome.review = result.status == "failed"
    for name in ws.notebooks[assignment]:
        _annotate(graded / f"{name}.ipynb", notes)
    result.seconds = time.monotonic() - started
    (graded / RECORD).write_text(json.dumps({
        "digest": digest(original), "status": result.status, "notes": notes, "sandbox": ws.sandbox,
        "seconds": round(result.seconds, 1), "graded_at": datetime.now(timezone.utc).isoformat(),
    }, indent=1))
    return result
