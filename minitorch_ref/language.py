"""Unit 14's language model: Bengio et al.'s (2003) MLP over a context of characters, and
words sampled from it (the next-token distribution: ``minitorch_ref.sampling``)."""
from __future__ import annotations

import numpy as np

from minitorch_ref._random import resolve_rng
from minitorch_ref.data.text import CharTokenizer
from minitorch_ref.nn import Embedding, Flatten, Linear, Module, Sequential, Tanh
from minitorch_ref.sampling import sample


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


def sample_words(model: Module, tokenizer: CharTokenizer, block_size: int, num_words: int,
                 rng: np.random.Generator | None = None, temperature: float = 1.0,
                 top_k: int | None = None, max_length: int = 30) -> list[str]:
    """``num_words`` words drawn one character at a time, all words in one batch, each from
    a context of boundary tokens until it draws the boundary (or reaches ``max_length``);
    each character by ``minitorch_ref.sampling.sample`` (temperature, top-k)."""
    rng = resolve_rng(rng)
    boundary = tokenizer.boundary_index
    context = np.full((num_words, block_size), boundary, dtype=np.int64)
    drawn = np.full((num_words, max_length), boundary, dtype=np.int64)
    running = np.ones(num_words, dtype=bool)
    was_training = model.training
    model.eval()
    for position in range(max_length):
        tokens = sample(model(context), temperature, top_k, rng)
        tokens[~running] = boundary
        drawn[:, position] = tokens
        running &= tokens != boundary
        context = np.concatenate([context[:, 1:], tokens[:, None]], axis=1)
        if not running.any():
            break
    model.train(was_training)
    return [tokenizer.decode(row).split(tokenizer.boundary)[0] for row in drawn]
