"""minitorch_ref.models.recipes: unit 16's training loop records what the grader and the
notebook's curves read, and learns."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course.datasets import sorting_problems
from minitorch_ref import manual_seed
from minitorch_ref.data import sort_examples
from minitorch_ref.models import GPTConfig
from minitorch_ref.models.recipes import (GRADED_NAMER, GRADED_NAMER_STEPS, GRADED_SORTER,
                                         GRADED_SORTER_STEPS, SORTER, build, train_gpt)

TINY = GPTConfig(vocab_size=10, block_size=11, n_layer=1, n_head=2, n_embd=16)


def test_the_history_has_an_entry_per_hundred_steps_and_one_for_the_rest():
    X, Y = sort_examples(sorting_problems(500, seed=0))
    manual_seed(0)
    history = train_gpt(build(TINY), X, Y, steps=150, batch_size=16, warmup=10,
                        val=sort_examples(sorting_problems(100, seed=1)))
    assert set(history) == {"train_loss", "val_loss"}
    assert len(history["train_loss"]) == len(history["val_loss"]) == 2
    assert history["train_loss"][1] < history["train_loss"][0] < np.log(10) + 0.1
    assert history["val_loss"][1] < history["val_loss"][0]


def test_without_a_validation_split_only_the_training_loss_is_kept():
    X, Y = sort_examples(sorting_problems(100, seed=0))
    history = train_gpt(build(TINY), X, Y, steps=20, batch_size=8, warmup=5)
    assert list(history) == ["train_loss"] and len(history["train_loss"]) == 1


def test_the_models_are_float32_gpts_of_the_recipes_sizes():
    model = build(SORTER)
    assert model.wte.weight.data.dtype == np.float32
    assert model(np.zeros((2, 11), dtype=np.int64)).shape == (2, 11, 10)


def _solution_keywords(function: str) -> dict:
    """The literal keyword arguments of the one call that unit 16's solution ``function``
    returns, read from the source notebook."""
    notebook = nbformat.read(Path(__file__).parents[2] / "source" / "16_gpt" / "16_gpt.ipynb", 4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and f"def {function}(" in cell.source:
            tree = next(node for node in ast.walk(ast.parse(cell.source))
                        if isinstance(node, ast.FunctionDef) and node.name == function)
            call = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Return))
            return {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
    raise AssertionError(f"no {function} in source/16_gpt/16_gpt.ipynb")


@pytest.mark.parametrize("build_name, train_name, config, steps", [
    ("build_sorter", "train_sorter", GRADED_SORTER, GRADED_SORTER_STEPS),
    ("build_namer", "train_namer", GRADED_NAMER, GRADED_NAMER_STEPS)])
def test_the_graded_recipes_are_the_notebooks_solution(build_name, train_name, config, steps):
    sizes = _solution_keywords(build_name)
    assert sizes == {k: v for k, v in dataclasses.asdict(config).items() if k in sizes}
    assert {"n_layer", "n_head", "n_embd"} <= set(sizes)
    assert _solution_keywords(train_name) == steps
