"""Benchmark 3, the measurement behind ``bench/autograde.py`` (see its docstring)."""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder import audit
from autograder.audit_remote import agent_kernel, graded_from_outside, use
from autograder.pipeline.course import tool_env
from autograder.pipeline.demo.scenario import Student, make_class, make_course, submit
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits
from autograder.registry import CHECKS
from bench._phases import PHASES, phases
from bench._timing import load_average, machine, peak_memory_mib, table

NBGRADER = str(Path(sys.executable).parent / "nbgrader")
PROJECTED = (500, (1, 8, 64))          # students, worker counts


def graded(root: Path, limits: Limits, workers: int, students: list[str],
           units: list[str] | None = None, sandbox: bool = True):
    summary = grade(root, units, students, workers=workers, limits=limits, force=True,
                    progress=False, sandbox=sandbox)
    if summary.flagged:
        raise SystemExit(f"could not grade: {[(r.outcome.student, r.outcome.assignment) for r in summary.flagged]}")
    return summary


def plain(root: Path, args: list[str]) -> float:
    """Seconds of one plain ``nbgrader autograde ARGS`` in (a copy of) the course."""
    started = time.monotonic()
    done = subprocess.run([NBGRADER, "autograde", *args, "--force"], cwd=root, env=tool_env(),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"nbgrader autograde {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return time.monotonic() - started


def plain_copy(root: Path, students: list[str], units: list[str]) -> Path:
    """A copy of the course holding only ``students``' submissions of ``units``."""
    copy = root.parent / "plain"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("submitted", "autograded"))
    for student in students:
        for unit in units:
            shutil.copytree(root / "submitted" / student / unit, copy / "submitted" / student / unit)
    return copy


def one_class(root: Path, unit: str, count: int, limits: Limits) -> None:
    """N submissions of one unit: our grader with 2 workers vs one serial plain nbgrader run."""
    templates = {s.name: s for s in make_class(root, [unit], with_bad=False, mutations=())}
    students = [Student(f"student-{n:02d}", "", templates["reference" if n % 2 == 0 else
                                                          "release"].builders, {})
                for n in range(count)]
    submit(root, students)
    names = [s.name for s in students]
    ours = graded(root, limits, 2, names, [unit])
    baseline = plain(plain_copy(root, names, [unit]), [unit])
    print(f"\nA class of {count} students on {unit} (half the reference, half the release):")
    print(table(("grader", "seconds", "seconds per submission"), [
        ("plain nbgrader autograde, serial", f"{baseline:.1f}", f"{baseline / count:.2f}"),
        ("ours, --workers 2 (cluster start included)", f"{ours.seconds:.1f}",
         f"{ours.seconds / count:.2f}")]))
    print(f"ours vs plain nbgrader: {baseline / ours.seconds:.2f}x faster (target: 3x)")


def one_student(root: Path, units: list[str], limits: Limits) -> list[float]:
    """The reference solutions of every unit: ours with 2 workers vs plain nbgrader unit by unit.
    Returns the worker-seconds of each job."""
    reference = [s for s in make_class(root, units, with_bad=False, mutations=())
                 if s.name == "reference"]
    submit(root, reference)
    ours = graded(root, limits, 2, ["reference"])
    copy = plain_copy(root, ["reference"], units)
    baseline = {unit: plain(copy, [unit, "--student", "reference"]) for unit in units}
    seconds = {r.outcome.assignment: r.seconds for r in ours.results}
    rows = [(unit, f"{baseline[unit]:.1f}", f"{seconds[unit]:.1f}") for unit in units]
    rows.append(("whole course (wall)", f"{sum(baseline.values()):.1f}", f"{ours.seconds:.1f}"))
    print(f"One student's whole course ({len(units)} units, reference solutions):")
    print(table(("unit", "plain nbgrader, s", "ours: job s (2 workers)"), rows))
    print(f"ours vs plain nbgrader: {sum(baseline.values()) / ours.seconds:.2f}x faster "
          f"(targets: <= 15 s wall, 4x)")
    split = {unit: phases(root / "autograded" / "reference" / unit, unit) for unit in units}
    rows = [(unit, f"{seconds[unit]:.1f}", *(f"{split[unit][p]:.2f}" for p in PHASES))
            for unit in units]
    rows.append(("sum", f"{sum(seconds.values()):.1f}",
                 *(f"{sum(s[p] for s in split.values()):.1f}" for p in PHASES)))
    print("\nWhere each job's seconds went:")
    print(table(("unit", "job s", *PHASES), rows))
    return list(seconds.values())


def projection(per_job: float, units: int) -> None:
    students, fleets = PROJECTED
    jobs = students * units
    rows = [(workers, f"{per_job * jobs / workers / 3600:.2f}") for workers in fleets]
    print(f"\nProjected from {per_job:.1f} worker-seconds per job (this machine): {students} "
          f"students x {units} units = {jobs} submissions")
    print(table(("workers", "hours"), rows))


def checks_cost(course_seconds: float) -> None:
    """Every check on the reference: in this process, and from outside a kernel that holds the
    classes (the agent serving, as in grading); the difference against one student's course."""
    inside = outside = 0.0
    with agent_kernel() as (client, channel):
        for check in CHECKS.values():
            started = time.monotonic()
            audit.run(check)
            inside += time.monotonic() - started
            use(client, check)
            started = time.monotonic()
            graded_from_outside(channel, check)
            outside += time.monotonic() - started
    extra = outside - inside
    print(f"\nThe {len(CHECKS)} checks on the reference: {inside:.1f} s in the grader's process, "
          f"{outside:.1f} s from outside the kernel: {extra:+.1f} s, {extra / course_seconds:.1%} "
          f"of one student's course ({course_seconds:.1f} worker-seconds)")


def sandbox_cost(root: Path, unit: str, names: list[str], limits: Limits) -> None:
    """The class with 2 workers without and with the sandbox, alternating; print the ratio."""
    seconds = {False: 0.0, True: 0.0}
    for sandbox in (False, True, False, True):
        seconds[sandbox] += graded(root, limits, 2, names, [unit], sandbox=sandbox).seconds
    print(f"\nThe OS sandbox (bubblewrap + Landlock, kernels forked from the zygote), 2 workers, "
          f"two runs each: {seconds[True]:.1f} s sandboxed vs {seconds[False]:.1f} s without "
          f"(kernels started from nothing): {seconds[True] / seconds[False]:.2f}x")


def main(usage: str) -> None:
    parser = argparse.ArgumentParser(description=usage, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=24, help="class size (0: skip the class)")
    parser.add_argument("--unit", default="03_module_linear", help="the class's unit")
    parser.add_argument("--timeout", type=int, default=30, help="seconds per cell")
    parser.add_argument("--sandbox-cost", action="store_true", help="also time bubblewrap on/off")
    parser.add_argument("--checks-cost", action="store_true",
                        help="also time the checks in-process and from outside a kernel")
    args = parser.parse_args()
    limits = Limits(cell_timeout=args.timeout)
    print(f"Autograding. {machine()}")
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        root = Path(tmp) / "course"
        units = make_course(root)
        jobs = one_student(root, units, limits)
        if args.students and args.unit in units:
            one_class(root, args.unit, args.students, limits)
            if args.sandbox_cost:
                sandbox_cost(root, args.unit, [f"student-{n:02d}" for n in range(args.students)],
                             limits)
        if args.checks_cost:
            checks_cost(sum(jobs))
        projection(sum(jobs) / len(jobs), len(units))
    print(f"\npeak memory: this process {peak_memory_mib():.0f} MiB ({load_average()} at the end)")

