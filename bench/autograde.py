"""Speed-up of the parallel grader: a class graded with 1 worker, then with 2, in one run.

    .venv/bin/python bench/autograde.py                  # 20 students, unit 03
    .venv/bin/python bench/autograde.py --students 20 --units 01_setup 02_gradients

Builds a scratch course (``autograder.pipeline.demo.scenario``), gives it N students
who hand in the reference solution, the untouched release or one of the catalogued
bugs, grades every submission with ``--workers 1`` and again (``force``) with
``--workers 2``, and prints both times and their ratio. The machine's other load
changes the numbers; the ratio is measured within one run.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.pipeline.demo.scenario import Student, make_class, make_course, submit  # noqa: E402
from autograder.pipeline.grade import grade  # noqa: E402
from autograder.pipeline.job import Limits  # noqa: E402


def make_students(root: Path, units: list[str], count: int) -> list[Student]:
    """``count`` students, each handing in what one made-up student of the demo hands in."""
    templates = [s for s in make_class(root, units, with_bad=False)]
    students = []
    for number, template in zip(range(count), itertools.cycle(templates)):
        students.append(Student(f"student-{number:02d}", template.story, template.builders,
                                template.loses))
    return students


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--units", nargs="+", default=["03_module_linear"])
    parser.add_argument("--timeout", type=int, default=30, help="seconds per cell")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as tmp:
        root = Path(tmp) / "course"
        units = make_course(root, args.units)
        students = make_students(root, units, args.students)
        submit(root, students)
        jobs = sum(len(s.builders) for s in students)
        print(f"{len(students)} students, {jobs} submissions of {', '.join(units)}; "
              f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
        seconds = {}
        for workers in (1, 2):
            summary = grade(root, workers=workers, limits=Limits(cell_timeout=args.timeout),
                            force=True, progress=False)
            assert len(summary.results) == jobs and all(r.status == "graded" for r in summary.results)
            seconds[workers] = summary.seconds
            print(f"workers={workers}: {summary.seconds:6.1f} s  ({summary.seconds / jobs:.2f} s per "
                  f"submission)")
        print(f"speed-up with 2 workers: {seconds[1] / seconds[2]:.2f}x "
              f"(load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
