"""minitorch_ref.models.recipes: unit 16's training loop records what the grader and the
notebook's curves read, and learns."""
from __future__ import annotations

import numpy as np

from course.datasets import sorting_problems
from minitorch_ref import manual_seed
from minitorch_ref.data import sort_examples
from minitorch_ref.models import GPTConfig
from minitorch_ref.models.recipes import SORTER, build, train_gpt

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
