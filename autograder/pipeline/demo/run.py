"""``make demo`` (``python -m autograder demo``): the whole instructor job on a scratch course.

Generates every unit of ``source/`` in ``build/demo/course``, adds a made-up class
(``scenario``), autogrades it in parallel, generates feedback, exports the grades
to CSV, writes the class report, and prints a per-student, per-unit table with,
for each student, whether they lost exactly the grade cells they had to.

What the class holds, and why no more: the reference and the release students hand
in every unit (full marks and zero prove each unit's hidden tests are put back and
run); every bad submission is handed in (each is a different way to break the
grader); of the catalogued bugs, a representative few (``REPRESENTATIVE``: one per
solution cell, a forward and a backward bug of ``Linear``, and one student per classic
mistake of unit 14's language model, of unit 15's attention and block and of unit 16's GPT: no
causal mask, positions not added, the tied gradient not summed, weight decay on everything, the
prompt counted, the context not cropped), each only in its unit. Grading all of them would add a job each and prove nothing the demo is for:
the mutation audit runs every catalogued bug through the checks in-process
(tests/autograder), and tests/pipeline grades every notebook mutation through nbgrader.
One student carries unit 14's held-out names (``carried``): full marks, and its graded run
must be listed for review; so must unit 16's student who never adds the position embeddings
(``Mutation.reviewed``: its own forward beats the grader's rebuilt one), and no other.
"""
from __future__ import annotations

import time
from pathlib import Path

from autograder.pipeline.term import feedback, report
from autograder.pipeline.course import Course
from autograder.pipeline.demo.mutations import MUTATIONS, REPRESENTATIVE
from autograder.pipeline.demo.scenario import (
    Student, actual_lost, expected_lost, make_class, make_course, submit,
)
from autograder.pipeline.ledger.grade import grade
from autograder.pipeline.job.job import Limits


def verdicts(root: Path, students: list[Student]) -> dict[str, bool]:
    """For each student: did every unit they handed in lose exactly the expected cells?"""
    lost = actual_lost(root)
    return {s.name: all(lost.get((s.name, unit), (None,))[0] == expected_lost(root, unit, loses)
                        for unit, loses in s.loses.items())
            for s in students}


def bad_submissions(root: Path, summary, students: list[Student]) -> str:
    """How many bad submissions got a score (graded, no crash) and feedback, of how many."""
    course, graded = Course(root), {r.outcome.student for r in summary.results if r.status == "graded"}
    bad = [s for s in students if s.name.startswith("bad-")]
    handled = [s for s in bad if s.name in graded and all(
        any(course.feedback(s.name, unit).glob("*.html")) for unit in s.builders)]
    return f"bad submissions graded with a score and feedback: {len(handled)}/{len(bad)}"


def reviews(summary, students: list[Student]) -> tuple[str, bool]:
    """The graded runs listed for review, and whether they are exactly the expected ones."""
    listed = {(r.outcome.student, r.outcome.assignment) for r in summary.results if r.reviews}
    expected = {(s.name, unit) for s in students for unit in s.reviewed}
    return (f"graded runs listed for review (scores unchanged): {len(listed & expected)}/"
            f"{len(expected)} expected, {len(listed - expected)} others"), listed == expected


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
                 "(reference: full marks; release: zero; each bug: exactly the checks it breaks).\n"
                 "Task cells graded by hand (a reflection, say) score 0 until an instructor "
                 "grades them: they are in the maximum, not in the verdict.")
    return "\n".join(lines)


def run_demo(out: Path, workers: int = 2, timeout: int = 30, sandbox: bool = True) -> int:
    started = time.monotonic()
    root = out / "course"
    print(f"Scratch course: {root}")
    made = make_course(root)
    students = make_class(root, made, mutations=REPRESENTATIVE)
    submit(root, students)
    print(f"{len(made)} units generated in {time.monotonic() - started:.0f} s; "
          f"{len(students)} students, {sum(len(s.builders) for s in students)} submissions "
          f"({len(REPRESENTATIVE)} of the {len(MUTATIONS)} notebook bugs: see the docstring of "
          "autograder/pipeline/demo/run.py).")
    summary = grade(root, workers=workers, limits=Limits(cell_timeout=timeout), sandbox=sandbox)
    print(summary)
    print(feedback.generate(root, workers=workers))
    print(f"grades exported to {feedback.export(root)}")
    print(f"class report: {report.write_report(root)}")
    print()
    print(table(root, students, made))
    for student in students:
        print(f"  {student.name}: {student.story}")
    print(bad_submissions(root, summary, students))
    listed, as_expected = reviews(summary, students)
    print(listed)
    print(f"\nDemo finished in {time.monotonic() - started:.0f} s.")
    return 0 if all(verdicts(root, students).values()) and as_expected else 1
