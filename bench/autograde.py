"""Benchmark 3: autograding time, for one student's whole course and for a class.

    .venv/bin/python bench/autograde.py                  # all units; class of 20 on unit 03
    .venv/bin/python bench/autograde.py --students 0     # one student's course only
    .venv/bin/python bench/autograde.py --students 20 --units 01_setup 02_gradients

Builds a scratch course with every unit (``autograder.pipeline.demo.scenario``),
then, in one run:

1. one student who hands in the reference solutions of every unit, graded with
   one worker: seconds for the whole course and per unit (each unit is one
   ``nbgrader autograde`` job: process start, kernel start, running the notebook);
2. a class of N students on ``--units``, each handing in what one made-up student
   of the demo hands in (the reference, the untouched release or a catalogued
   bug), graded with ``--workers 1`` and again (``force``) with ``--workers 2``;
3. what the OS sandbox costs: the same class with 2 workers, without and with
   bubblewrap, twice each, alternating (so drift in the machine's load evens out).

The machine's other load changes the numbers; the ratio is measured within one run.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.pipeline.demo.scenario import Student, make_class, make_course, submit  # noqa: E402
from autograder.pipeline.grade import grade  # noqa: E402
from autograder.pipeline.job import Limits  # noqa: E402
from bench._timing import (load_average, machine, peak_child_memory_mib,  # noqa: E402
                           peak_memory_mib, table)


def make_students(root: Path, units: list[str], count: int) -> list[Student]:
    """``count`` students, each handing in what one made-up student of the demo hands in."""
    templates = [s for s in make_class(root, units, with_bad=False) if s.builders]
    students = []
    for number, template in zip(range(count), itertools.cycle(templates)):
        students.append(Student(f"student-{number:02d}", template.story, template.builders,
                                template.loses))
    return students


def graded(root: Path, limits: Limits, workers: int, students: list[str] | None = None,
           units: list[str] | None = None, sandbox: bool = True):
    summary = grade(root, units, students, workers=workers, limits=limits, force=True,
                    progress=False, sandbox=sandbox)
    failed = [r for r in summary.results if r.status != "graded"]
    if failed:
        raise SystemExit(f"could not grade: {[(r.outcome.student, r.outcome.assignment) for r in failed]}")
    return summary


def one_student(root: Path, units: list[str], limits: Limits) -> None:
    """Grade the reference solutions of every unit with one worker; print per-unit seconds."""
    reference = [s for s in make_class(root, units, with_bad=False) if s.name == "reference"]
    submit(root, reference)
    summary = graded(root, limits, workers=1, students=["reference"])
    seconds = {r.outcome.assignment: r.seconds for r in summary.results}
    rows = [(unit, f"{seconds[unit]:.1f}") for unit in units]
    rows.append(("whole course", f"{summary.seconds:.1f}"))
    print(f"One student's whole course ({len(units)} units, reference solutions), 1 worker:")
    print(table(("unit", "seconds to grade"), rows))
    for result in summary.results:
        for note in result.notes:   # e.g. a cell stopped at the time limit: the time includes it
            print(f"note on {result.outcome.assignment}: {note}")


def one_class(root: Path, units: list[str], count: int, limits: Limits) -> None:
    """Grade ``count`` students on ``units`` with 1 worker, then 2; print times and speed-up."""
    students = make_students(root, units, count)
    submit(root, students)
    names = [s.name for s in students]
    jobs = sum(len(s.builders) for s in students)
    rows, seconds = [], {}
    for workers in (1, 2):
        summary = graded(root, limits, workers, names, units)
        assert len(summary.results) == jobs
        seconds[workers] = summary.seconds
        rows.append((workers, f"{summary.seconds:.1f}", f"{summary.seconds / jobs:.2f}"))
    print(f"\nA class of {count} students, {jobs} submissions of {', '.join(units)}:")
    print(table(("workers", "seconds", "seconds per submission"), rows))
    print(f"speed-up with 2 workers: {seconds[1] / seconds[2]:.2f}x")
    sandbox_cost(root, units, names, limits)


def sandbox_cost(root: Path, units: list[str], names: list[str], limits: Limits) -> None:
    """Grade the class with 2 workers without and with the sandbox, alternating; print the ratio."""
    seconds = {False: 0.0, True: 0.0}
    for sandbox in (False, True, False, True):
        seconds[sandbox] += graded(root, limits, 2, names, units, sandbox=sandbox).seconds
    print(f"\nThe OS sandbox (bubblewrap + Landlock), 2 workers, two runs each: "
          f"{seconds[True]:.1f} s sandboxed vs {seconds[False]:.1f} s without: "
          f"{seconds[True] / seconds[False]:.2f}x ({100 * (seconds[True] / seconds[False] - 1):+.0f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=20, help="class size (0: skip the class)")
    parser.add_argument("--units", nargs="+", default=["03_module_linear"], help="the class's units")
    parser.add_argument("--timeout", type=int, default=30, help="seconds per cell")
    args = parser.parse_args()
    limits = Limits(cell_timeout=args.timeout)
    print(f"Autograding. {machine()}")
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        root = Path(tmp) / "course"
        units = make_course(root)
        one_student(root, units, limits)
        if args.students:
            one_class(root, [u for u in args.units if u in units], args.students, limits)
    print(f"\npeak memory: this process {peak_memory_mib():.0f} MiB, largest grading process "
          f"or kernel {peak_child_memory_mib():.0f} MiB ({load_average()} at the end)")


if __name__ == "__main__":
    main()
