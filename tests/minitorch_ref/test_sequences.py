"""minitorch_ref.data.sort_examples and name_sequences: unit 16's (input, target) sequences,
the targets shifted by one and -100 where the loss must not count."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn
from minitorch_ref.data import IGNORE_INDEX, CharTokenizer, name_sequences, sort_examples


def test_a_sorting_example_is_the_problem_then_its_sorted_digits_shifted_by_one():
    X, Y = sort_examples(np.array([[3, 1, 2]]))
    assert X.tolist() == [[3, 1, 2, 1, 2]] and Y.tolist() == [[-100, -100, 1, 2, 3]]
    assert X.dtype == Y.dtype == np.int64


def test_six_digit_problems_give_eleven_tokens_and_count_the_six_sorted_only():
    problems = np.random.default_rng(0).integers(0, 10, (50, 6))
    X, Y = sort_examples(problems)
    assert X.shape == Y.shape == (50, 11)
    assert np.all(Y[:, :5] == IGNORE_INDEX)
    assert np.array_equal(Y[:, 5:], np.sort(problems, axis=1))
    assert np.array_equal(X[:, :6], problems) and np.array_equal(X[:, 6:], Y[:, 5:10])


def test_the_loss_ignores_the_prompt_targets():
    """CrossEntropyLoss's default ignore_index drops the -100 targets from the mean."""
    X, Y = sort_examples(np.array([[4, 0, 7, 7, 2, 9]]))
    logits = np.random.default_rng(1).standard_normal((1, 11, 10))
    counted = nn.CrossEntropyLoss()(logits[:, 5:], Y[:, 5:])
    assert nn.CrossEntropyLoss()(logits, Y) == pytest.approx(counted, rel=1e-12)


@pytest.mark.parametrize("problems, message", [
    (np.array([3, 1, 2]), r"shape \(N, L\), got int64 \(3,\)\. Did you forget the batch"),
    (np.array([[0.5, 1.0]]), "expected integer problems"),
    (np.array([[1, -2]]), "tokens must be >= 0, got -2"),
])
def test_bad_problems_are_refused_with_what_was_wrong(problems, message):
    with pytest.raises(ValueError, match=message):
        sort_examples(problems)


TOKENIZER = CharTokenizer(["abcdefghijklmnopqrstuvwxyz"])


def test_a_name_is_framed_by_boundaries_padded_and_its_padding_targets_ignored():
    X, Y = name_sequences(["emma"], TOKENIZER, 8)
    assert X.tolist() == [[0, 5, 13, 13, 1, 0, 0, 0]]
    assert Y.tolist() == [[5, 13, 13, 1, 0, -100, -100, -100]]


def test_names_make_one_row_each_of_the_block_size():
    X, Y = name_sequences(["ann", "bo", "christopher"], TOKENIZER, 16)
    assert X.shape == Y.shape == (3, 16) and X.dtype == Y.dtype == np.int64
    assert [int((row != IGNORE_INDEX).sum()) for row in Y] == [4, 3, 12]


def test_a_name_longer_than_the_block_is_cut_and_every_target_counts():
    X, Y = name_sequences(["abcdef"], TOKENIZER, 4)
    assert X.tolist() == [[0, 1, 2, 3]] and Y.tolist() == [[1, 2, 3, 4]]


def test_the_targets_are_the_inputs_shifted_by_one():
    X, Y = name_sequences(["olivia", "liam"], TOKENIZER, 10)
    counted = Y[:, :-1] != IGNORE_INDEX
    assert np.array_equal(X[:, 1:][counted], Y[:, :-1][counted])


@pytest.mark.parametrize("block_size", [0, 2.5, True])
def test_a_bad_block_size_is_refused(block_size):
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        name_sequences(["emma"], TOKENIZER, block_size)


def test_a_character_outside_the_vocabulary_is_named():
    with pytest.raises(ValueError, match="character 'É' at position 0"):
        name_sequences(["Émile"], TOKENIZER, 8)
