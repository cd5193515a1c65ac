"""The notebook rules on the real course, and the tools on a tiny made-up course (no kernels)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.notebooks.lint import release_problems, source_problems, uncalled_problems
from autograder.notebooks.sync import SyncError, providers, solutions_carried, sync
from autograder.notebooks.units import ROOT, Unit, points, read, write

CHECKS = {"linear_forward"}


# ---------------------------------------------------------------------------- the real course
def test_every_provided_cell_is_in_sync():
    assert sync(ROOT, check=True) == [], "run: python -m autograder.notebooks sync"


def test_source_notebook_follows_the_rules(unit):
    assert source_problems(unit) == []


def test_every_registered_check_is_called_by_a_notebook():
    from autograder import check
    assert uncalled_problems(set(dir(check))) == []


def test_release_notebook_has_no_solution_hidden_test_or_grader_import(unit):
    assert release_problems(unit) == []


def test_every_unit_is_worth_points(unit):
    assert points(read(unit.source)) > 0


# ---------------------------------------------------------------------------- a made-up course
def nbgrader(cell_id: str, **flags) -> dict:
    meta = {"schema_version": 3, "grade": False, "solution": False, "locked": False,
            "task": False, "grade_id": cell_id}
    meta.update(flags)
    return {"nbgrader": meta}


def frame(*cells) -> list:
    """A notebook's cells between a title with learning objectives and a recap."""
    return [new_markdown_cell("# Unit 1: test\n\n## Learning objectives", id="title"), *cells,
            new_markdown_cell("## Recap", id="recap")]


def solution_cell(cell_id: str, source: str, provides: list[str] | None = None):
    meta = nbgrader(cell_id, solution=True)
    if provides:
        meta["minitorch"] = {"provides": provides}
    return new_code_cell(source, id=cell_id, metadata=meta)


def locked_cell(cell_id: str, source: str, **minitorch):
    meta = nbgrader(cell_id, locked=True)
    if minitorch:
        meta["minitorch"] = minitorch
    return new_code_cell(source, id=cell_id, metadata=meta)


def visible_test_cell(cell_id: str, source: str):
    meta = nbgrader(cell_id, locked=True)
    meta["tags"] = ["visible-test"]
    return new_code_cell(source, id=cell_id, metadata=meta)


def grade_cell(cell_id: str, source: str, points: int = 10):
    return new_code_cell(source, id=cell_id, metadata=nbgrader(cell_id, grade=True, locked=True,
                                                               points=points))


def save(root: Path, name: str, cells: list) -> Unit:
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                  "language": "python"}, "language_info": {"name": "python"}}
    unit = Unit(name, root)
    write(nb, unit.source)
    return unit


SQUARE = "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION"
HIDDEN = ("### BEGIN HIDDEN TESTS\nfrom autograder import check\n"
          "check.linear_forward(Linear)\n### END HIDDEN TESTS")


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """Unit 01 provides ``square`` (a solution) and ``K`` (read-only); unit 02 uses them."""
    save(tmp_path, "01_first", frame(
        new_markdown_cell("### Exercise 1: `square` (10 points)", id="exercise"),
        solution_cell("square", SQUARE, provides=["square"]),
        locked_cell("constant", "K = 3", provides=["K"]),
        grade_cell("hidden", HIDDEN),
        visible_test_cell("visible", "assert square(3) == 9"),
    ))
    save(tmp_path, "02_second", frame(
        locked_cell("all-of-01", "", provided_from=["01_first"]),
        locked_cell("only-k", "", provided_from=["K"]),
    ))
    return tmp_path


SQUARE_CELL, CONSTANT_CELL, HIDDEN_CELL = 2, 3, 4   # positions in 01_first


def cell(root: Path, unit: str, cell_id: str):
    return next(c for c in read(Unit(unit, root).source).cells if c.id == cell_id)


def test_sync_copies_earlier_solutions_without_markers(course):
    assert sync(course) == ["source/02_second/02_second.ipynb: provided cell(s) all-of-01, "
                            "only-k out of sync"]
    provided = cell(course, "02_second", "all-of-01").source
    assert provided.startswith("# Provided, read-only: the reference solution of unit 01_first: "
                               "square, K.")
    assert "def square(x):\n    return x * x\n\n\nK = 3" in provided
    assert "SOLUTION" not in provided
    assert cell(course, "02_second", "only-k").source.endswith("\n\n\nK = 3")
    assert sync(course) == [], "a second sync changes nothing"


def test_sync_check_reports_and_writes_nothing(course):
    before = Unit("02_second", course).source.read_text()
    assert len(sync(course, check=True)) == 1
    assert Unit("02_second", course).source.read_text() == before


def test_sync_follows_a_change_of_the_solution(course):
    sync(course)
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[SQUARE_CELL].source = SQUARE.replace("x * x", "x ** 2")
    write(nb, unit.source)
    assert sync(course, check=True) != []
    sync(course)
    assert "return x ** 2" in cell(course, "02_second", "all-of-01").source


def test_sync_strips_outputs(course):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[CONSTANT_CELL].outputs = [new_output("stream", name="stdout", text="3\n")]
    nb.cells[CONSTANT_CELL].execution_count = 4
    write(nb, unit.source)
    assert any("01_first" in line for line in sync(course))
    assert cell(course, "01_first", "constant").outputs == []


@pytest.mark.parametrize("entries, message", [
    (["03_third"], "not an earlier unit"),
    (["late"], "not an earlier unit"),
    (["nothing_provides_this"], "no unit provides 'nothing_provides_this'"),
])
def test_sync_refuses_what_no_earlier_unit_provides(course, entries, message):
    save(course, "03_third", frame(solution_cell("late", SQUARE.replace("square", "late"),
                                                 provides=["late"])))
    save(course, "02_second", frame(locked_cell("wrong", "", provided_from=entries)))
    with pytest.raises(SyncError, match=message):
        sync(course)


def test_a_provided_cell_carries_the_solutions_of_solution_cells_only(course):
    """Unit 02's whole-unit cell holds 01's solution ``square``; a cell with only the read-only
    ``K`` carries no solution (what decides whether 02 may go out before 01 closes)."""
    sync(course)
    unit, by_unit = Unit("02_second", course), providers([Unit("01_first", course),
                                                          Unit("02_second", course)])
    assert solutions_carried(read(unit.source), unit, by_unit) == ["01_first"]
    only_k = read(unit.source)
    only_k.cells = [c for c in only_k.cells if c.get("id") != "all-of-01"]
    assert solutions_carried(only_k, unit, by_unit) == []
    only_k.cells[1].metadata["minitorch"]["provided_from"] = ["K", "00_not_in_this_course"]
    assert solutions_carried(only_k, unit, by_unit) == []


def test_lint_accepts_the_made_up_unit(course):
    assert source_problems(Unit("01_first", course), CHECKS) == []


@pytest.mark.parametrize("source, problem", [
    ("x = 1\n" + HIDDEN, "only comments"),
    (HIDDEN.replace("linear_forward", "no_such_check"), "not a registered check"),
    (HIDDEN.replace("from autograder import check\n", ""), "must be exactly"),
    ("import autograder", "mentions 'autograder'"),
])
def test_lint_rejects_a_bad_test_cell(course, source, problem):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[HIDDEN_CELL].source = source
    write(nb, unit.source)
    assert any(problem in line for line in source_problems(unit, CHECKS))


def test_lint_wants_a_visible_test_after_each_solution(course):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    del nb.cells[HIDDEN_CELL + 1]
    write(nb, unit.source)
    assert any("no visible test" in line for line in source_problems(unit, CHECKS))


def test_lint_wants_round_points(course):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[HIDDEN_CELL].metadata.nbgrader.points = 3
    write(nb, unit.source)
    assert any("multiple of 10" in line for line in source_problems(unit, CHECKS))


def test_lint_counts_points_graded_by_hand_in_the_total(course):
    """8 autograded points and a written answer worth 2, graded by hand, make a round 10."""
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[HIDDEN_CELL].metadata.nbgrader.points = 8
    nb.cells[1].source = "### Exercise 1: `square` (8 points)"
    task = new_markdown_cell("### Question 1.1 (2 points, graded by hand): why?", id="question",
                             metadata=nbgrader("question", locked=True, task=True, points=2))
    nb.cells.insert(HIDDEN_CELL + 2, task)
    write(nb, unit.source)
    assert source_problems(unit, CHECKS) == []
    task.metadata.nbgrader.points = 3
    task.source = "### Question 1.1 (3 points, graded by hand): why?"
    write(nb, unit.source)
    assert any("total points 11 is not" in line for line in source_problems(unit, CHECKS))


@pytest.mark.parametrize("heading, problem", [
    ("### Exercise 1: `square` (8 points)", "promises 8 points but the cells in its section score 10"),
    ("### Exercise 1: `square`", "under no heading that says how many points"),
])
def test_lint_wants_headings_to_state_the_points_graded_under_them(course, heading, problem):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells[1].source = heading
    write(nb, unit.source)
    assert any(problem in line for line in source_problems(unit, CHECKS))


def test_a_section_ends_at_the_next_heading_of_its_level(course):
    unit = Unit("01_first", course)
    nb = read(unit.source)
    nb.cells.insert(HIDDEN_CELL, new_markdown_cell("### Exercise 2: more", id="next"))
    write(nb, unit.source)
    assert any("promises 10 points but the cells in its section score 0" in line
               for line in source_problems(unit, CHECKS))


def released(course: Path, change) -> list[str]:
    """The release problems of unit 01 when its release is its source changed by ``change``."""
    unit = Unit("01_first", course)
    nb = copy.deepcopy(read(unit.source))
    nb.cells[SQUARE_CELL].source = "def square(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    nb.cells[HIDDEN_CELL].source = ""
    change(nb)
    write(nb, unit.release)
    return release_problems(unit)


def test_release_rules_accept_a_correct_release(course):
    assert released(course, lambda nb: None) == []


@pytest.mark.parametrize("change, problem", [
    (lambda nb: setattr(nb.cells[SQUARE_CELL], "source", SQUARE), "solution or hidden-test marker"),
    (lambda nb: setattr(nb.cells[SQUARE_CELL], "source", "def square(x):\n    return x * x\n"
                        "raise NotImplementedError()  # padding to be long"), "solution code"),
    (lambda nb: setattr(nb.cells[SQUARE_CELL], "source", "def square(x):\n    pass"), "stubs"),
    (lambda nb: setattr(nb.cells[HIDDEN_CELL], "source", "from autograder import check"), "mentions"),
    (lambda nb: nb.cells.pop(CONSTANT_CELL), "differ from the source"),
])
def test_release_rules_catch_leaks(course, change, problem):
    assert any(problem in line for line in released(course, change))
