"""Unit 14's text pipeline, embedding and sampler, each with one classic student bug.

The tokenizer and embedding mutants subclass the reference and replace the one method the
bug lives in; the functions are written as a student writes them, on the reference's
distribution where they need one (``minitorch_ref.sampling``). Training on the validation
split is a mistake of the ``train`` that the grader's own run calls
(``autograder.checks.language_training``), which no check of this audit calls: it is the
demo's ``train_on_validation`` mutation (``autograder.pipeline.demo.mutations``).
"""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant, Variant
from minitorch_ref import data, nn
from minitorch_ref.sampling import next_token_probabilities as probabilities


# ---------------------------------------------------------------------------- CharTokenizer
class TokenizerBoundaryLast(data.CharTokenizer):
    def __init__(self, words, boundary="."):
        super().__init__(words, boundary)
        self.itos = [*self.itos[1:], boundary]
        self.stoi = {char: index for index, char in enumerate(self.itos)}


class TokenizerNoBoundary(data.CharTokenizer):
    def __init__(self, words, boundary="."):
        super().__init__(words, boundary)
        self.itos = self.itos[1:]
        self.stoi = {char: index for index, char in enumerate(self.itos)}


class TokenizerUnknownToBoundary(data.CharTokenizer):
    def encode(self, text):
        return np.array([self.stoi.get(char, 0) for char in text], dtype=np.int64)


# ---------------------------------------------------------------------------- context windows
def _windows(words, tokenizer, block_size, end: int = 1, shift: int = 0):
    contexts, targets = [], []
    for word in words:
        stream = [0] * block_size + list(tokenizer.encode(word)) + [0]
        for i in range(len(word) + end):
            contexts.append(stream[i + shift:i + shift + block_size])
            targets.append(stream[i + block_size])
    return (np.array(contexts, dtype=np.int64).reshape(-1, block_size),
            np.array(targets, dtype=np.int64))


def context_windows_no_end(words, tokenizer, block_size):
    return _windows(words, tokenizer, block_size, end=0)


def context_windows_shifted(words, tokenizer, block_size):
    return _windows(words, tokenizer, block_size, shift=1)


# ---------------------------------------------------------------------------- the bigram
def bigram_counts_fancy_add(previous, following, vocab_size, smoothing=1.0):
    counts = np.full((vocab_size, vocab_size), float(smoothing))
    counts[previous, following] += 1.0
    return counts


def bigram_counts_transposed(previous, following, vocab_size, smoothing=1.0):
    counts = np.full((vocab_size, vocab_size), float(smoothing))
    np.add.at(counts, (following, previous), 1.0)
    return counts


def bigram_counts_without_smoothing(previous, following, vocab_size, smoothing=1.0):
    counts = np.zeros((vocab_size, vocab_size))
    np.add.at(counts, (previous, following), 1.0)
    return counts


def bigram_nll_columns(counts, previous, following):
    probs = counts / counts.sum(axis=0, keepdims=True)
    return float(-np.log(probs[previous, following]).mean())


def bigram_nll_summed(counts, previous, following):
    probs = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(probs[previous, following]).sum())


def bigram_nll_of_counts(counts, previous, following):
    return float(-np.log(counts[previous, following]).mean())


# ---------------------------------------------------------------------------- Embedding
class EmbeddingFancyAdd(nn.Embedding):
    def backward(self, grad_output):
        rows = self.indices.reshape(-1)
        grads = np.reshape(grad_output, (-1, self.embedding_dim))
        keep = rows != self.padding_idx
        self.weight.grad[rows[keep]] += grads[keep]


class EmbeddingPaddingLearns(nn.Embedding):
    def backward(self, grad_output):
        np.add.at(self.weight.grad, self.indices.reshape(-1),
                  np.reshape(grad_output, (-1, self.embedding_dim)))


class EmbeddingAssignsGrad(nn.Embedding):
    def backward(self, grad_output):
        self.weight.grad[...] = 0.0
        super().backward(grad_output)


class EmbeddingFlatOutput(nn.Embedding):
    def forward(self, indices):
        return super().forward(indices).reshape(-1, self.embedding_dim)


class EmbeddingPaddingNotZeroed(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, rng=None,
                 dtype=np.float64):
        super().__init__(num_embeddings, embedding_dim, padding_idx, rng, dtype)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 1.0


# ---------------------------------------------------------------------------- the sampler
def _softmax(z):
    exp = np.exp(z - z.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


def _top_k(z, top_k, keep_smallest=False, fill=-np.inf, extra=0):
    if top_k is None:
        return z
    k = min(top_k + extra, z.shape[-1])
    ordered = np.sort(z, axis=-1)
    if keep_smallest:
        return np.where(z > ordered[..., k - 1:k], fill, z)
    return np.where(z < ordered[..., -k][..., None], fill, z)


def probabilities_no_temperature(logits, temperature=1.0, top_k=None):
    return _softmax(_top_k(np.asarray(logits, dtype=float), top_k))


def probabilities_times_temperature(logits, temperature=1.0, top_k=None):
    return _softmax(_top_k(np.asarray(logits, dtype=float) * temperature, top_k))


def probabilities_unstable(logits, temperature=1.0, top_k=None):
    with np.errstate(over="ignore", invalid="ignore"):
        exp = np.exp(_top_k(np.asarray(logits, dtype=float) / temperature, top_k))
        return exp / exp.sum(axis=-1, keepdims=True)


def top_k_smallest(logits, temperature=1.0, top_k=None):
    return _softmax(_top_k(np.asarray(logits, dtype=float) / temperature, top_k, True))


def top_k_masked_with_zero(logits, temperature=1.0, top_k=None):
    return _softmax(_top_k(np.asarray(logits, dtype=float) / temperature, top_k, fill=0.0))


def top_k_off_by_one(logits, temperature=1.0, top_k=None):
    return _softmax(_top_k(np.asarray(logits, dtype=float) / temperature, top_k, extra=1))


def _draw(weights, rng):
    u = rng.random(weights.shape[:-1])
    cumulative = np.cumsum(weights, axis=-1)
    tokens = (cumulative <= u[..., None] * cumulative[..., -1:]).sum(axis=-1)
    return np.minimum(tokens, weights.shape[-1] - 1).astype(np.int64)


def sample_from_logits(logits, temperature=1.0, top_k=None, rng=None):
    rng = np.random.default_rng() if rng is None else rng
    return _draw(np.asarray(logits, dtype=float), rng)


def sample_argmax(logits, temperature=1.0, top_k=None, rng=None):
    return probabilities(logits, temperature, top_k).argmax(axis=-1)


def sample_ignores_temperature(logits, temperature=1.0, top_k=None, rng=None):
    rng = np.random.default_rng() if rng is None else rng
    return _draw(probabilities(logits), rng)


def sample_with_choice(logits, temperature=1.0, top_k=None, rng=None):
    rng = np.random.default_rng() if rng is None else rng
    probs = probabilities(logits, temperature, top_k)
    rows = probs.reshape(-1, probs.shape[-1])
    tokens = [rng.choice(len(row), p=row) for row in rows]
    return np.array(tokens, dtype=np.int64).reshape(probs.shape[:-1])


VARIANTS = [
    Variant("sample_with_choice", "sample", sample_with_choice,
            "rng.choice(V, p=row) row by row: numpy inverts the same cumulative distribution "
            "with one rng.random() per row, so the tokens are the same"),
]

MUTANTS = [
    Mutant("tokenizer_boundary_last", "CharTokenizer", TokenizerBoundaryLast, "at index 0",
           "the boundary token after the letters"),
    Mutant("tokenizer_no_boundary", "CharTokenizer", TokenizerNoBoundary, "no boundary token",
           "the boundary token dropped from the vocabulary"),
    Mutant("tokenizer_unknown_to_boundary", "CharTokenizer", TokenizerUnknownToBoundary,
           "must be refused", "stoi.get(char, 0): an unknown character becomes the boundary"),
    Mutant("context_windows_no_end", "context_windows", context_windows_no_end,
           "end with the boundary token", "no sample whose target is the boundary at the end"),
    Mutant("context_windows_shifted", "context_windows", context_windows_shifted,
           "shifted by one", "the context window shifted by one: it holds its own target"),
    Mutant("bigram_counts_fancy_add", "bigram_counts", bigram_counts_fancy_add, "np.add.at",
           "counts[previous, following] += 1 counts a repeated pair once"),
    Mutant("bigram_counts_transposed", "bigram_counts", bigram_counts_transposed, "transposed",
           "counts[following, previous]"),
    Mutant("bigram_counts_without_smoothing", "bigram_counts", bigram_counts_without_smoothing,
           "smoothing is missing", "the table starts at 0, whatever the smoothing"),
    Mutant("bigram_nll_columns", "bigram_nll", bigram_nll_columns, "over columns",
           "counts normalised with axis=0"),
    Mutant("bigram_nll_summed", "bigram_nll", bigram_nll_summed, "the sum over",
           "the NLL summed, not averaged"),
    Mutant("bigram_nll_of_counts", "bigram_nll", bigram_nll_of_counts, "log was taken of the counts",
           "-log(counts), not of probabilities"),
    Mutant("embedding_fancy_add", "Embedding", EmbeddingFancyAdd, "np.add.at",
           "weight.grad[indices] += grad_output loses repeated tokens"),
    Mutant("embedding_padding_learns", "Embedding", EmbeddingPaddingLearns, "padding row",
           "the padding_idx row gets a gradient"),
    Mutant("embedding_assigns_grad", "Embedding", EmbeddingAssignsGrad, "instead of adding",
           "weight.grad overwritten by each backward"),
    Mutant("embedding_flat_output", "Embedding", EmbeddingFlatOutput, "flattened",
           "forward returns (N, D) for any input shape"),
    Mutant("embedding_padding_not_zeroed", "Embedding", EmbeddingPaddingNotZeroed,
           "start at zero", "the padding row is not zeroed at initialisation"),
    Mutant("probabilities_no_temperature", "next_token_probabilities",
           probabilities_no_temperature, "temperature is ignored", "softmax without temperature"),
    Mutant("probabilities_times_temperature", "next_token_probabilities",
           probabilities_times_temperature, "multiplied by the temperature", "softmax(z * tau)"),
    Mutant("probabilities_unstable", "next_token_probabilities", probabilities_unstable,
           "numerically unstable", "exp without subtracting the maximum"),
    Mutant("top_k_smallest", "next_token_probabilities", top_k_smallest, "smallest logits",
           "top-k keeps the k smallest"),
    Mutant("top_k_masked_with_zero", "next_token_probabilities", top_k_masked_with_zero,
           "set to 0", "the masked logits set to 0, not -inf"),
    Mutant("top_k_off_by_one", "next_token_probabilities", top_k_off_by_one, "off by one",
           "top-k keeps k + 1 tokens"),
    Mutant("sample_from_logits", "sample", sample_from_logits, "cumulative sum of the logits",
           "inverse CDF on the logits instead of the probabilities"),
    Mutant("sample_argmax", "sample", sample_argmax, "argmax", "the most likely token every time"),
    Mutant("sample_ignores_temperature", "sample", sample_ignores_temperature,
           "temperature 1 without top-k", "temperature and top_k not passed on"),
]
