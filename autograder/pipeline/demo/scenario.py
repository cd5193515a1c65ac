"""The demo's scratch course and made-up class, and what each student must score.

``make_course`` copies ``source/`` and the configuration into a scratch folder and
generates every unit there (a unit that fails to generate, e.g. one still being
written, is left out with a message). ``make_class`` lists the students: one hands
in the reference solutions, one the untouched release notebooks, one per
catalogued bug (``mutations``), one per bad submission (``bad``) and one who carries unit
14's held-out names (``carried``: full marks, listed for review; a bug's student may be listed
too, ``Mutation.reviewed``); ``submit``
writes their folders; ``expected_lost`` says which grade cells each must lose.
"""
from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat
from nbgrader.api import Gradebook, TaskCell

from autograder.notebooks.release import ReleaseError
from autograder.notebooks.sync import SyncError, sync
from autograder.notebooks.units import ROOT, Unit, normalise, read, units, write
from autograder.pipeline.job import runner
from autograder.pipeline.course import tool_env
from autograder.pipeline.demo import bad, carried
from autograder.pipeline.demo.mutations import MUTATIONS, MutationError

TIMESTAMP = "2026-01-05 09:00:00.000000 UTC"
HIDDEN_CHECK = re.compile(r"^\s*check\.(\w+)\(", re.MULTILINE)
Builder = Callable[[Path], None]   # writes one submission folder


@dataclass
class Student:
    name: str
    story: str
    builders: dict[str, Builder] = field(default_factory=dict)      # unit: builder
    loses: dict[str, object] = field(default_factory=dict)          # unit: "none"|"hidden"|"all"|set
    reviewed: set[str] = field(default_factory=set)     # units whose graded run is listed for review


def make_course(root: Path, names: list[str] | None = None, source: Path = ROOT) -> list[str]:
    """A scratch course at ``root`` with the units of ``source`` (or ``names``) generated."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "source").mkdir(parents=True)
    shutil.copy(source / "nbgrader_config.py", root / "nbgrader_config.py")
    for unit in units(source):
        if names is None or unit.name in names:
            shutil.copytree(unit.source.parent, root / "source" / unit.name)
    try:
        sync(root)
    except SyncError as error:   # expected when earlier units are left out: source/ is synced
        if names is None:
            print(f"note: provided cells not synced ({error})", file=sys.stderr)
    made = []
    for unit in units(root):
        try:
            _generate(unit)
            made.append(unit.name)
        except ReleaseError as error:
            print(f"note: {unit} left out, it does not generate: {str(error)[-300:]}", file=sys.stderr)
            shutil.rmtree(unit.source.parent)
    return made


def _generate(unit: Unit) -> None:
    """``release.generate`` run by the pipeline's fork server, where nbgrader is imported
    already: a fresh ``python -m nbgrader`` spends 2-4 s importing, per unit."""
    code, log = runner.run_captured(["generate_assignment", unit.name, "--force",
                                     f"--CourseDirectory.root={unit.root}"], unit.root, tool_env())
    if code != 0 or "ERROR" in log or not unit.release.exists():
        raise ReleaseError(f"nbgrader generate_assignment {unit} failed:\n{log[-4000:]}")
    write(normalise(read(unit.release)), unit.release)


def _copy(path: Path) -> Builder:
    def build(folder: Path) -> None:
        shutil.copy(path, folder / path.name)
    return build


def _mutated(mutation, source: Path) -> Builder:
    nb = mutation.apply(nbformat.read(str(source), as_version=4))
    return lambda folder: nbformat.write(nb, str(folder / source.name))


def make_class(root: Path, made: list[str], with_bad: bool = True,
               mutations: tuple = MUTATIONS) -> list[Student]:
    course = [Unit(name, root) for name in made]
    students = [
        Student("reference", "hands in the reference solutions",
                {u.name: _copy(u.source) for u in course}, {u.name: "none" for u in course}),
        Student("release", "hands in the untouched release notebooks",
                {u.name: _copy(u.release) for u in course}, {u.name: "all" for u in course}),
    ]
    for mutation in mutations:
        if mutation.unit not in made:
            continue
        unit = Unit(mutation.unit, root)
        try:
            builder = _mutated(mutation, unit.source)
        except MutationError as error:
            print(f"note: mutation {mutation.mutant} left out: {error}", file=sys.stderr)
            continue
        students.append(Student(mutation.student, f"has the bug {mutation.mutant}",
                                {unit.name: builder}, {unit.name: mutation.loses},
                                {unit.name} if mutation.reviewed else set()))
    if with_bad and bad.UNIT in made:
        unit = Unit(bad.UNIT, root)
        ctx = bad.Context(nbformat.read(str(unit.source), as_version=4),
                          nbformat.read(str(unit.release), as_version=4), root)
        for case in bad.CASES:
            students.append(Student(case.student, case.story,
                                    {case.unit: (lambda folder, c=case: c.build(ctx, folder))},
                                    {case.unit: case.loses}))
    if with_bad and carried.UNIT in made:
        students.append(Student(carried.STUDENT, carried.STORY,
                                {carried.UNIT: carried.builder(Unit(carried.UNIT, root).source)},
                                {carried.UNIT: "none"}, {carried.UNIT}))
    return students


def submit(root: Path, students: list[Student]) -> None:
    """Write every student's submission folders and add them to the gradebook."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student in students:
            gb.update_or_create_student(student.name)
    for student in students:
        for unit, build in student.builders.items():
            folder = root / "submitted" / student.name / unit
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            if not (folder / "timestamp.txt").exists() and any(folder.iterdir()):
                (folder / "timestamp.txt").write_text(TIMESTAMP)


def grade_cells(root: Path, unit: str) -> dict[str, str | None]:
    """Every grade cell of a unit's source: grade id -> the check it calls (None: visible test)."""
    nb = nbformat.read(str(Unit(unit, root).source), as_version=4)
    cells = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            found = HIDDEN_CHECK.search(cell.source) if "BEGIN HIDDEN TESTS" in cell.source else None
            cells[meta["grade_id"]] = found.group(1) if found else None
    return cells


def expected_lost(root: Path, unit: str, loses: object) -> set[str]:
    """The grade ids a student must lose in ``unit``."""
    cells = grade_cells(root, unit)
    if loses == "none":
        return set()
    if loses == "all":
        return set(cells)
    if loses == "hidden":
        return {grade_id for grade_id, check in cells.items() if check}
    if isinstance(loses, tuple) and loses[0] == "checks":
        failing = set(loses[1].expected_checks())
        checked = {grade_id for grade_id, check in cells.items() if check in failing}
        return checked | set(loses[1].loses_run)
    return set(loses)


def actual_lost(root: Path) -> dict[tuple[str, str], tuple[set[str], float, float]]:
    """(student, unit) -> (grade ids below full marks, score, max score), from the gradebook.

    Only grade cells count as lost: a task cell (e.g. a reflection) is graded by hand
    and scores zero until an instructor grades it; the score and maximum include it.
    """
    found = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                grades = [g for nb in submission.notebooks for g in nb.grades
                          if not isinstance(g.cell, TaskCell)]
                lost = {g.name for g in grades if (g.score or 0) < g.max_score}
                found[(submission.student.id, assignment.name)] = (
                    lost, float(submission.score), float(submission.max_score))
    return found
