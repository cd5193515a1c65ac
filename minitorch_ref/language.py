"""Unit 14's language model: Bengio et al.'s (2003) MLP over a context of characters, the
distribution of its next character (temperature, top-k) and sampling words from it."""
from __future__ import annotations

import numpy as np
from scipy import special

from minitorch_ref._random import resolve_rng
from minitorch_ref.data.text import CharTokenizer
from minitorch_ref.nn import Embedding, Flatten, Linear, Module, Sequential, Tanh


def mlp_language_model(vocab_size: int, block_size: int = 3, embedding_dim: int = 10,
                       hidden: int = 200, rng: np.random.Generator | None = None,
                       dtype: type = np.float64) -> Sequential:
    """Embed each of the ``block_size`` context tokens, concatenate, a tanh layer, logits.

    Shape:
        - Input: ``(N, block_size)`` integer tokens
        - Output: ``(N, vocab_size)`` logits of the next token
    """
    return Sequential(
        Embedding(vocab_size, embedding_dim, rng=rng, dtype=dtype),
        Flatten(),
        Linear(block_size * embedding_dim, hidden, rng=rng, dtype=dtype),
        Tanh(),
        Linear(hidden, vocab_size, rng=rng, dtype=dtype),
    )


def next_token_probs(logits: np.ndarray, temperature: float = 1.0,
                     top_k: int | None = None) -> np.ndarray:
    r"""The sampling distribution :math:`\mathrm{softmax}(z / T)` over the ``top_k`` largest
    logits (the others get probability 0; ties at the k-th value are all kept).

    Args:
        logits: scores of the next token, ``(V,)`` or ``(N, V)``.
        temperature: ``T > 0``; below 1 sharpens the distribution, above 1 flattens it.
        top_k: keep only the ``k`` most likely tokens (``None``: all of them).

    Shape:
        - Output: the shape of ``logits``, rows summing to 1.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    scaled = logits / temperature
    if top_k is not None:
        if not 1 <= top_k:
            raise ValueError(f"top_k must be a positive integer or None, got {top_k!r}")
        k = min(int(top_k), logits.shape[-1])
        kth = np.sort(scaled, axis=-1)[..., -k, None]
        scaled = np.where(scaled < kth, -np.inf, scaled)
    return special.softmax(scaled, axis=-1)


def sample_words(model: Module, tokenizer: CharTokenizer, block_size: int, num_words: int,
                 rng: np.random.Generator | None = None, temperature: float = 1.0,
                 top_k: int | None = None, max_length: int = 30) -> list[str]:
    """``num_words`` words drawn one character at a time, all words in one batch, each from
    a context of boundary tokens until it draws the boundary (or reaches ``max_length``)."""
    rng = resolve_rng(rng)
    boundary = tokenizer.boundary_index
    context = np.full((num_words, block_size), boundary, dtype=np.int64)
    drawn = np.full((num_words, max_length), boundary, dtype=np.int64)
    running = np.ones(num_words, dtype=bool)
    was_training = model.training
    model.eval()
    for position in range(max_length):
        probs = next_token_probs(model(context), temperature, top_k)
        cumulative = probs.cumsum(axis=1)   # inverse CDF; scaled so rounding never overshoots
        tokens = (cumulative > rng.random((num_words, 1)) * cumulative[:, -1:]).argmax(axis=1)
        tokens[~running] = boundary
        drawn[:, position] = tokens
        running &= tokens != boundary
        context = np.concatenate([context[:, 1:], tokens[:, None]], axis=1)
        if not running.any():
            break
    model.train(was_training)
    return [tokenizer.decode(row).split(tokenizer.boundary)[0] for row in drawn]
