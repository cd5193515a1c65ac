"""Unit 16's notebook states what its graded runs are: the budgets, thresholds and samples of
``autograder.checks.gpt_training``, and grade cells scored by its verdicts."""
from __future__ import annotations

import re

import pytest

from autograder.cells import visible
from autograder.checks import gpt_training as gpt
from autograder.notebooks.units import Unit, read

NOTEBOOK = read(Unit("16_gpt").source)


def _cell(cell_id: str) -> str:
    return next(cell.source for cell in NOTEBOOK.cells if cell.get("id") == cell_id)


def _constant(cell_id: str, name: str) -> float:
    return float(re.search(rf"^{name} = ([\d.]+)", _cell(cell_id), re.MULTILINE).group(1))


@pytest.mark.parametrize("cell_id, name, value", [
    ("sorter-run", "SORTER_BUDGET", gpt.SORTER_BUDGET),
    ("sorter-run", "SORT_THRESHOLD", gpt.SORT_THRESHOLD),
    ("namer-run", "NAMER_BUDGET", gpt.NAMER_BUDGET),
    ("namer-run", "NLL_THRESHOLD", gpt.NLL_THRESHOLD),
    ("name-sequences", "NAME_BLOCK", gpt.BLOCK_SIZE),
])
def test_the_notebook_states_the_graders_budgets_and_thresholds(cell_id, name, value):
    assert _constant(cell_id, name) == value


def test_the_notebook_trains_on_the_graders_problems_and_caches_where_the_grader_writes():
    run = _cell("sorter-run")
    assert f"sorting_problems({gpt.TRAINING_PROBLEMS}, seed=0)" in run
    assert f"{gpt.SORTER.cache} = {{}}" in run and f"{gpt.NAMER.cache} = {{}}" in _cell("namer-run")
    assert "(build_sorter, train_sorter)" in run and "(build_namer, train_namer)" in _cell("namer-run")


@pytest.mark.parametrize("grade_id, verdict", [
    ("grade-gpt-sorter", (gpt.sorter_run, gpt.gpt_sorter_run)),
    ("grade-gpt-namer", (gpt.namer_run, gpt.gpt_namer_run)),
])
def test_each_grade_cell_is_scored_by_the_graders_run(grade_id, verdict):
    cell = next(c for c in NOTEBOOK.cells if c.get("id") == grade_id)
    assert cell.metadata.nbgrader["grade"] and cell.metadata.nbgrader["points"] == 4
    assert visible.VERDICTS[grade_id] == verdict
