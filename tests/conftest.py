"""Settings for the whole test session, and the graded course the notebook and pipeline tests share.

``scratch_course`` is a course with every unit of ``source/`` generated
(``release/`` made afresh); ``graded_units`` is that course once a ``reference``
student has handed in the source notebooks and a ``release`` student the
untouched release notebooks, graded once per session by the parallel grader. tests/notebooks reads what the course's
notebooks do from it (the solutions run cleanly to full marks, the stubs stop at
``NotImplementedError`` and score zero); tests/pipeline adds its class of buggy
and bad students to the same course. Kernels run with Jupyter's and matplotlib's
state in a temporary folder (``isolated_jupyter``), so they neither read nor
change the user's.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

pytest_plugins = ["workers", "soak", "student_bundle", "scratch"]     # tests/<name>.py

# Kernels and processes the tests start (nbval, nbgrader, the browser test) inherit this.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

JUPYTER_STATE = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "MPLCONFIGDIR")
CELL_TIMEOUT = 30   # seconds: above the checks' own limits (10 s computing, 20 s waiting), so their message shows
# A check's wait for the kernel: 9 times its computing limit (10 s), so that a loop in a kernel
# that gets a sixth of a core (two test workers on a busy 2-core machine) still uses up its
# computing first, as it would on a grading worker of its own, and says so.
CHECK_WAIT = 90


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """The matrices in tests are tiny: on a busy 2-core machine OpenBLAS's threads spin
    against each other and make training tests ten times slower, not faster."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="session")
def isolated_jupyter(tmp_path_factory) -> dict[str, str]:
    """Point Jupyter's and matplotlib's state at a temporary folder for the session."""
    state = tmp_path_factory.mktemp("jupyter-state")
    saved = {name: os.environ.get(name) for name in JUPYTER_STATE}
    for name in JUPYTER_STATE:
        os.environ[name] = str(state / name.lower())
    yield dict(os.environ)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def tree_hash(folder: Path) -> str:
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        hasher.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


@dataclass
class GradedClass:
    root: Path
    units: list[str]
    students: list = field(default_factory=list)     # scenario.Student
    results: list = field(default_factory=list)      # job.Result, every run's
    source_hash: str = ""                            # source/ before any grading

    def student(self, name: str):
        return next(s for s in self.students if s.name == name)

    def source_unchanged(self) -> bool:
        return tree_hash(self.root / "source") == self.source_hash

    def grade(self, students: list, cell_timeout: int = CELL_TIMEOUT) -> None:
        """Hand in and grade ``students`` (two workers, ``cell_timeout`` seconds a cell), and
        remember them."""
        from autograder.pipeline.demo.scenario import submit
        from autograder.pipeline.ledger.grade import grade
        from autograder.pipeline.job.job import Limits
        submit(self.root, students)
        summary = grade(self.root, workers=2,
                        limits=Limits(cell_timeout=cell_timeout, check_wait_seconds=CHECK_WAIT),
                        progress=False, students=[s.name for s in students])
        self.students += students
        self.results += summary.results


@pytest.fixture(scope="session")
def scratch_course(tmp_path_factory, isolated_jupyter) -> Path:
    """A course with every unit of ``source/`` generated afresh in it (nothing graded)."""
    from autograder.notebooks.units import units
    from autograder.pipeline.demo.scenario import make_course
    root = tmp_path_factory.mktemp("scratch") / "course"
    assert make_course(root) == [unit.name for unit in units()], "a unit does not generate"
    return root


@pytest.fixture(scope="session")
def graded_units(scratch_course, tmp_path_factory) -> GradedClass:
    """``scratch_course`` with the reference and release students graded in every unit, as on
    a new machine: with no digits cached yet (the grader caches them; kernels may not)."""
    from autograder.notebooks.units import units
    from autograder.pipeline.demo.scenario import make_class
    made = [unit.name for unit in units(scratch_course)]
    graded = GradedClass(scratch_course, made, source_hash=tree_hash(scratch_course / "source"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINITORCH_COURSE_CACHE", str(tmp_path_factory.mktemp("no-digits-yet")))
        graded.grade(make_class(scratch_course, made, with_bad=False, mutations=()))
    return graded
