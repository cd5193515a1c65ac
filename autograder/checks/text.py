"""Checks of unit 14's text pipeline: the character tokenizer, the (context, next character)
samples, and the bigram model's table of counts and its negative log-likelihood.

The tokenizer is compared with the reference's (``minitorch_ref.data.CharTokenizer``); the
samples are judged on the student's own tokenizer's tokens, so a tokenizer bug costs only
the tokenizer's cell; the bigram functions get integer arrays the grader chose.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import expect_value_error, method
from autograder.registry import check
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, transposed, when
from course.testing.failure import expect, fail
from minitorch_ref import data

WORDS = ["mia", "anne-marie", "zoe", "bob", "eve"]


def _vocabulary(tokenizer) -> list:
    itos = getattr(tokenizer, "itos", None)
    expect(isinstance(itos, (list, tuple)) and all(isinstance(c, str) for c in itos),
           f"CharTokenizer.itos should be a list of characters, got {itos!r:.80}.")
    return list(itos)


def _expect_vocabulary(tokenizer, expected: list, boundary: str) -> None:
    itos = _vocabulary(tokenizer)
    if itos == expected:
        return
    if boundary not in itos:
        fail(f"CharTokenizer's vocabulary {''.join(itos)!r} has no boundary token {boundary!r}: "
             "put it first, at index 0, so that every word can be framed by it.")
    if sorted(itos) == sorted(expected) and itos[0] != boundary:
        fail(f"CharTokenizer's vocabulary is {''.join(itos)!r}: the boundary token {boundary!r} "
             f"should be at index 0, then the characters in sorted order ({''.join(expected)!r}).")
    fail(f"CharTokenizer(words).itos is {''.join(itos)!r}, expected {''.join(expected)!r}: the "
         "boundary first, then every character of the words once, sorted.")


@check
def char_tokenizer(CharTokenizer):
    """CharTokenizer(words, boundary): the boundary token at index 0, then the words'
    characters sorted; encode/decode round trips, encode gives integers, an unknown character
    raises a ValueError naming it; another boundary character works the same way."""
    for boundary in (".", "#"):
        tokenizer = construct(CharTokenizer, list(WORDS), boundary=boundary)
        reference = data.CharTokenizer(WORDS, boundary=boundary)
        _expect_vocabulary(tokenizer, reference.itos, boundary)
        size = getattr(tokenizer, "vocab_size", None)
        expect(size == reference.vocab_size, f"CharTokenizer.vocab_size is {size!r}, expected "
               f"{reference.vocab_size} (the boundary and {reference.vocab_size - 1} characters).")
        for word in WORDS + [boundary + "eve" + boundary]:
            got = as_array(f"encode({word!r})", call(f"CharTokenizer.encode({word!r})",
                                                     method(tokenizer, "encode"), word))
            expect(got.dtype.kind in "iu", f"CharTokenizer.encode({word!r}) returned "
                   f"{got.dtype} values; token indices are integers (dtype np.int64).")
            expect_close(f"CharTokenizer.encode({word!r})", got, reference.encode(word))
            text = call(f"CharTokenizer.decode({reference.encode(word).tolist()})",
                        method(tokenizer, "decode"), reference.encode(word))
            expect(text == word, f"CharTokenizer.decode(encode({word!r})) gave {text!r}: decode "
                   "must give back the same text, itos[i] for every index i, joined.")
    expect_value_error("CharTokenizer(words).encode('bob!')", method(tokenizer, "encode"),
                       "bob!", naming=("!",),
                       fix="A character outside the vocabulary must be refused, not mapped to "
                           "another token: raise ValueError naming it.")


class _Tokens:
    """A stand-in tokenizer that hands the student's own tokens to the reference."""

    boundary_index = 0

    def __init__(self, tokens: dict[str, np.ndarray]) -> None:
        self.tokens = tokens

    def encode(self, word: str) -> np.ndarray:
        return self.tokens[word]


def _window_signatures(X: np.ndarray, y: np.ndarray, words: list, block: int) -> tuple:
    n_without_end = len(y) - len(words)
    shifted = np.concatenate([X[:, 1:], y[:, None]], axis=1)
    return (when("no_end", lambda g, e: g.shape[0] == n_without_end,
                 f"there are {n_without_end} samples, one per character: each word must also "
                 "end with the boundary token as a target (after its last character the model "
                 "learns that the word ends), len(word) + 1 samples per word."),
            when("shifted", lambda g, e: close(g, shifted),
                 "each context is shifted by one: it already holds the character it should "
                 "predict. The context of target i is the block_size tokens before it, "
                 "stream[i : i + block_size] for the target stream[i + block_size]."))


@check
def context_windows_samples(context_windows, CharTokenizer):
    """context_windows(words, tokenizer, block_size): every (context, next character) pair,
    each word framed by boundary tokens (block_size before it, one after), X (N, block_size)
    and y (N,), on the student's own tokenizer's tokens."""
    tokenizer = construct(CharTokenizer, list(WORDS))
    tokens = {word: as_array(f"encode({word!r})", call(f"CharTokenizer.encode({word!r})",
                                                       method(tokenizer, "encode"), word))
              for word in WORDS}
    for words, block in ((WORDS, 3), (WORDS[:2], 1), (["bob", "mia"], 5)):
        X, y = data.context_windows(words, _Tokens(tokens), block)
        got = call(f"context_windows({words}, tokenizer, {block})", context_windows, list(words),
                   tokenizer, block)
        expect(isinstance(got, tuple) and len(got) == 2, "context_windows should return the "
               f"pair (X, y), got {type(got).__name__}.")
        got_X = as_array("X", got[0])
        expect_close(f"context_windows(..., block_size={block}) X (contexts)", got_X, X,
                     f"words {words}", _window_signatures(X, y, words, block))
        expect_close(f"context_windows(..., block_size={block}) y (targets)", got[1], y,
                     f"words {words}")


# ------------------------------------------------------------------------- the bigram model
def _pairs(seed: int, vocab: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab, n), rng.integers(0, vocab, n)


def _counts(previous: np.ndarray, following: np.ndarray, vocab: int,
            smoothing: float, fancy: bool = False) -> np.ndarray:
    counts = np.full((vocab, vocab), float(smoothing))
    if fancy:
        counts[previous, following] += 1
    else:
        np.add.at(counts, (previous, following), 1)
    return counts


@check
def bigram_counts_table(bigram_counts):
    """bigram_counts(previous, following, vocab_size, smoothing): a (V, V) table whose entry
    [a, b] is smoothing plus how often b follows a; pairs repeat, smoothing 0, 1 and 0.5."""
    for seed, vocab, n, smoothing in ((0, 4, 40, 1.0), (1, 6, 25, 0.0), (2, 3, 12, 0.5)):
        previous, following = _pairs(seed, vocab, n)
        expected = _counts(previous, following, vocab, smoothing)
        fancy = _counts(previous, following, vocab, smoothing, fancy=True)
        got = call(f"bigram_counts(previous, following, {vocab}, smoothing={smoothing})",
                   bigram_counts, previous.copy(), following.copy(), vocab, smoothing=smoothing)
        signatures = (
            when("fancy_add", lambda g, e: close(g, fancy),
                 "a pair that occurs more than once was counted once: counts[previous, "
                 "following] += 1 adds once per distinct index pair. Use np.add.at(counts, "
                 "(previous, following), 1)."),
            transposed("the table is transposed: row a holds what follows a, counts[a, b] for "
                       "b after a."),
            when("no_smoothing", lambda g, e: smoothing > 0 and close(g + smoothing, e),
                 f"the smoothing is missing: every entry starts at smoothing={smoothing}, so "
                 "that no pair has probability 0."),
        )
        expect_close(f"bigram_counts(..., vocab_size={vocab}, smoothing={smoothing})", got,
                     expected, f"{n} random pairs", signatures)


@check
def bigram_nll_value(bigram_nll):
    """bigram_nll(counts, previous, following): the mean negative log-likelihood of the
    pairs under the rows of counts normalised to probabilities."""
    rng = np.random.default_rng(3)
    for vocab, n in ((4, 30), (5, 1), (3, 17)):
        counts = rng.integers(1, 9, (vocab, vocab)).astype(float)
        previous, following = _pairs(vocab + n, vocab, n)
        probs = counts / counts.sum(axis=1, keepdims=True)
        expected = -np.log(probs[previous, following]).mean()
        columns = counts / counts.sum(axis=0, keepdims=True)
        by_column = -np.log(columns[previous, following]).mean()
        got = call(f"bigram_nll(counts ({vocab}, {vocab}), previous, following)", bigram_nll,
                   counts.copy(), previous.copy(), following.copy())
        signatures = (
            when("columns", lambda g, e: close(g, by_column),
                 "the counts were normalised over columns: row a is the distribution of the "
                 "character after a, so divide each row by its sum (axis=1, keepdims=True)."),
            when("summed", lambda g, e: n > 1 and close(g, n * e),
                 f"that is the sum over the {n} pairs: the NLL is their mean."),
            when("unnormalised", lambda g, e: close(g, -np.log(counts[previous, following]).mean()),
                 "the log was taken of the counts: turn each row into probabilities first."),
        )
        expect_close(f"bigram_nll (counts {vocab}x{vocab}, {n} pairs)", got, expected,
                     "integer counts 1 to 8", signatures)
