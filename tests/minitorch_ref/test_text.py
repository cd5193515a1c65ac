"""minitorch_ref.data.text: the character tokenizer and the context windows of unit 14."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref.data import CharTokenizer, context_windows

WORDS = ["emma", "olivia", "ava"]


def test_vocabulary_is_the_boundary_then_the_sorted_characters():
    tok = CharTokenizer(WORDS)
    assert tok.itos == [".", "a", "e", "i", "l", "m", "o", "v"]
    assert tok.vocab_size == 8 and tok.boundary_index == 0 and tok.stoi["."] == 0


def test_vocabulary_does_not_depend_on_the_order_of_the_words():
    assert CharTokenizer(WORDS).itos == CharTokenizer(reversed(WORDS)).itos


def test_lowercase_alphabet_gives_makemores_indices():
    tok = CharTokenizer(["abcdefghijklmnopqrstuvwxyz"])
    assert tok.stoi["a"] == 1 and tok.stoi["z"] == 26 and tok.vocab_size == 27


@pytest.mark.parametrize("text", ["emma", ".ava.", "", "m"])
def test_decode_inverts_encode(text):
    tok = CharTokenizer(WORDS)
    encoded = tok.encode(text)
    assert encoded.dtype == np.int64 and encoded.shape == (len(text),)
    assert tok.decode(encoded) == text


def test_decode_takes_a_list_of_ints():
    assert CharTokenizer(WORDS).decode([5, 1, 0]) == "ma."


def test_another_boundary_character():
    tok = CharTokenizer(["st.john"], boundary="#")
    assert tok.itos[0] == "#" and "." in tok.stoi


def test_context_windows_of_emma_as_in_the_docstring():
    tok = CharTokenizer(WORDS)
    X, y = context_windows(["emma"], tok, block_size=3)
    contexts = ["".join(tok.decode(row)) for row in X]
    assert contexts == ["...", "..e", ".em", "emm", "mma"]
    assert tok.decode(y) == "emma."


@pytest.mark.parametrize("block_size", [1, 2, 5])
def test_context_windows_give_one_sample_per_character_and_end(block_size):
    tok = CharTokenizer(WORDS)
    X, y = context_windows(WORDS, tok, block_size)
    assert X.shape == (sum(len(w) + 1 for w in WORDS), block_size) and y.shape == (len(X),)
    assert X.dtype == np.int64 and y.dtype == np.int64
    assert (y == 0).sum() == len(WORDS), "each word ends once with the boundary token"
    assert np.all(X[0] == 0), "the first context is all boundary tokens"


def test_context_windows_of_no_words_are_empty_with_the_right_shapes():
    X, y = context_windows([], CharTokenizer(WORDS), 3)
    assert X.shape == (0, 3) and y.shape == (0,)
