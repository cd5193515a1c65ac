"""``make demo`` (``python -m autograder demo``): the whole instructor job on a scratch course.

Generates every unit of ``source/`` in ``build/demo/course``, adds a made-up class
(``scenario``), autogrades it in parallel, generates feedback, exports the grades
to CSV, writes the class report, and prints a per-student, per-unit table with,
for each student, whether they lost exactly the grade cells they had to.
"""
from __future__ import annotations

import time
from pathlib import Path

from autograder.pipeline import feedback, report
from autograder.pipeline.demo.scenario import (
    Student, actual_lost, expected_lost, make_class, make_course, submit,
)
from autograder.pipeline.grade import grade
from autograder.pipeline.job import Limits


def verdicts(root: Path, students: list[Student]) -> dict[str, bool]:
    """For each student: did every unit they handed in lose exactly the expected cells?"""
    lost = actual_lost(root)
    return {s.name: all(lost.get((s.name, unit), (None,))[0] == expected_lost(root, unit, loses)
                        for unit, loses in s.loses.items())
            for s in students}


def table(root: Path, students: list[Student], made: list[str]) -> str:
    lost, ok = actual_lost(root), verdicts(root, students)
    width = max(len(s.name) for s in students) + 2
    header = f"{'student':{width}}" + "".join(f"{u[:16]:>18}" for u in made) + "  as expected"
    lines = [header, "-" * len(header)]
    for student in students:
        cells = []
        for unit in made:
            entry = lost.get((student.name, unit))
            cells.append(f"{entry[1]:g}/{entry[2]:g}" if entry else "-")
        lines.append(f"{student.name:{width}}" + "".join(f"{c:>18}" for c in cells)
                     + f"  {'yes' if ok[student.name] else 'NO'}")
    met = sum(ok.values())
    lines.append(f"\n{met}/{len(ok)} students scored exactly as expected "
                 "(reference: full marks; release: zero; each bug: exactly the checks it breaks).")
    return "\n".join(lines)


def run_demo(out: Path, workers: int = 2, timeout: int = 15) -> int:
    started = time.monotonic()
    root = out / "course"
    print(f"Scratch course: {root}")
    made = make_course(root)
    students = make_class(root, made)
    submit(root, students)
    print(f"{len(made)} units generated; {len(students)} students, "
          f"{sum(len(s.builders) for s in students)} submissions.")
    summary = grade(root, workers=workers, limits=Limits(cell_timeout=timeout))
    print(summary)
    print(feedback.generate(root, workers=workers))
    print(f"grades exported to {feedback.export(root)}")
    print(f"class report: {report.write_report(root)}")
    print()
    print(table(root, students, made))
    for student in students:
        print(f"  {student.name}: {student.story}")
    print(f"\nDemo finished in {time.monotonic() - started:.0f} s.")
    return 0 if all(verdicts(root, students).values()) else 1
