r"""Drawing the next token from a language model's logits: temperature, top-k, a seeded draw.

The distribution of the next token is :math:`p = \mathrm{softmax}(z / \tau)` over the ``k``
largest logits :math:`z` (the others get probability 0). A temperature :math:`\tau < 1`
sharpens it towards the most likely token, :math:`\tau > 1` flattens it towards uniform.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from minitorch_ref._random import resolve_rng


def next_token_probabilities(logits: np.ndarray, temperature: float = 1.0,
                             top_k: int | None = None) -> np.ndarray:
    """The sampling distribution for each row of logits.

    Args:
        logits: ``(..., V)`` unnormalised scores of the next token.
        temperature: :math:`\\tau > 0`, dividing the logits.
        top_k: keep only the ``k`` largest logits of each row (ties at the ``k``-th value are
            kept too, as a mask ``logits < kth_largest`` does in PyTorch's recipes).

    Returns:
        ``(..., V)`` probabilities, each row summing to 1.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature} (for the most likely "
                         "token every time, take the argmax)")
    scaled = logits / temperature
    if top_k is not None:
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        cut = logits.shape[-1] - min(top_k, logits.shape[-1])   # the k-th largest's place
        kth = np.partition(scaled, cut, axis=-1)[..., cut]
        scaled = np.where(scaled < kth[..., None], -np.inf, scaled)
    return special.softmax(scaled, axis=-1)


def sample(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
           rng: np.random.Generator | None = None) -> np.ndarray:
    """One token per row of ``logits``, drawn from ``next_token_probabilities``.

    Each row takes one uniform number ``u`` from ``rng`` and returns the first token whose
    cumulative probability exceeds it (inverse-CDF sampling; ``u`` is scaled by the row's total
    so rounding never overshoots), so a seeded generator gives the same tokens every time.

    Shape:
        - logits: ``(..., V)``; Output: ``(...)``, int64.
    """
    probs = next_token_probabilities(logits, temperature, top_k)
    uniform = resolve_rng(rng).random(probs.shape[:-1] + (1,))
    cumulative = np.cumsum(probs, axis=-1)
    tokens = (cumulative <= uniform * cumulative[..., -1:]).sum(axis=-1)
    return np.minimum(tokens, probs.shape[-1] - 1).astype(np.int64)
