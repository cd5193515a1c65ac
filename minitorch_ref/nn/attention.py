r"""Scaled dot-product attention, forward and backward, and the head reshapes around it.

PyTorch keeps the function in ``torch.nn.functional`` and ``MultiheadAttention`` in
``torch/nn/modules/activation.py``; here both sit in this file and ``multihead.py``.

With queries :math:`Q` ``(..., L, E)``, keys :math:`K` ``(..., S, E)`` and values :math:`V`
``(..., S, Ev)``, the scores are :math:`A = s\,QK^\top + M` (``s`` the scale, by default
:math:`1/\sqrt{E}`; :math:`M` the mask, 0 where a key may be read and :math:`-\infty` where
not), :math:`P = \mathrm{softmax}(A)` along the keys and :math:`O = PV`. Backward, with
:math:`G = \partial L/\partial O`: :math:`\partial L/\partial V = P^\top G`,
:math:`\partial L/\partial P = G V^\top`, :math:`\partial L/\partial A = P \odot
(\partial L/\partial P - \mathrm{rowsum}(P \odot \partial L/\partial P))`,
:math:`\partial L/\partial Q = s\,(\partial L/\partial A) K` and
:math:`\partial L/\partial K = s\,(\partial L/\partial A)^\top Q`.
"""
from __future__ import annotations

import math

import numpy as np

from minitorch_ref._random import resolve_rng
from minitorch_ref.nn._checks import check_floating, check_same_shape
from minitorch_ref.nn.module import Module


def causal_mask(target_length: int, source_length: int) -> np.ndarray:
    """``(L, S)`` booleans, True where query ``i`` may read key ``j`` (``j <= i``), as
    PyTorch's ``is_causal`` builds it (``torch.ones(L, S).tril()``)."""
    return np.tri(target_length, source_length, dtype=bool)


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """``(B, T, H*D)`` -> ``(B, H, T, D)``: head ``h`` gets features ``h*D .. (h+1)*D - 1``."""
    batch, length, width = x.shape
    return x.reshape(batch, length, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(B, H, T, D)`` -> ``(B, T, H*D)``, the inverse of ``split_heads``."""
    batch, heads, length, depth = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * depth)


def masked_softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax along the last axis, in place; a row with no finite score (every key masked)
    gives zeros, as PyTorch's attention does, not NaN."""
    row_max = scores.max(axis=-1, keepdims=True)
    if not np.isfinite(row_max).all():
        row_max[~np.isfinite(row_max)] = 0
    np.subtract(scores, row_max, out=scores)
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    return np.divide(scores, total, out=scores)


def additive_mask(attn_mask: np.ndarray | None, scores_shape: tuple[int, ...], dtype,
                  allowed_when: bool = True) -> np.ndarray | None:
    """``attn_mask`` as numbers to add to the scores: a boolean mask is 0 where its value is
    ``allowed_when`` and -inf elsewhere; a float mask is added as it is."""
    if attn_mask is None:
        return None
    mask = np.asarray(attn_mask)
    try:
        np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        raise ValueError(f"attn_mask of shape {mask.shape} does not broadcast to the attention "
                         f"scores' shape {scores_shape} (..., L, S)") from None
    if mask.dtype == bool:
        return np.where(mask == allowed_when, 0.0, -np.inf).astype(dtype)
    if mask.dtype.kind != "f":
        raise ValueError(f"attn_mask must be boolean or floating-point, got dtype {mask.dtype}")
    return mask.astype(dtype, copy=False)


class ScaledDotProductAttention(Module):
    r"""Attention of a batch of queries over keys and values, with its backward.

    ``forward(query, key, value, attn_mask=None)`` returns the output; ``backward(grad)``
    returns the triple ``(dL/dquery, dL/dkey, dL/dvalue)``. The weights of the last forward
    are kept in ``attn_weights`` (for heat maps).

    Args:
        is_causal: mask every key after its query (``attn_mask`` must then be None).
        scale: the factor of the scores (default ``1 / sqrt(E)``).
        dropout_p: probability of zeroing an attention weight, in training mode only.
        rng: generator for the dropout masks.

    ``attn_mask``, as PyTorch's ``scaled_dot_product_attention`` reads it: booleans
    (True: may attend) or floats added to the scores, broadcastable to ``(..., L, S)``.

    Shape:
        - query: ``(..., L, E)``, key: ``(..., S, E)``, value: ``(..., S, Ev)``,
          e.g. ``(B, H, T, D)`` each inside multi-head attention.
        - Output: ``(..., L, Ev)``; ``attn_weights``: ``(..., L, S)``.
    """

    def __init__(self, is_causal: bool = False, scale: float | None = None,
                 dropout_p: float = 0.0, rng: np.random.Generator | None = None) -> None:
        super().__init__()
        if not 0 <= dropout_p < 1:
            raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
        self.is_causal, self.scale, self.dropout_p, self.rng = is_causal, scale, dropout_p, rng
        self.saved = None
        self.attn_weights = None

    def forward(self, query: np.ndarray, key: np.ndarray, value: np.ndarray,
                attn_mask: np.ndarray | None = None) -> np.ndarray:
        query, key, value = _check_qkv(query, key, value)
        if self.is_causal and attn_mask is not None:
            raise ValueError("give either attn_mask or is_causal=True, not both")
        scale = self.scale if self.scale is not None else 1.0 / math.sqrt(query.shape[-1])
        scores = query @ np.swapaxes(key, -1, -2)
        scores *= scale
        if self.is_causal:
            attn_mask = causal_mask(query.shape[-2], key.shape[-2])
        mask = additive_mask(attn_mask, scores.shape, scores.dtype)
        if mask is not None:
            scores = scores + mask
        weights = masked_softmax(scores)
        self.attn_weights = weights
        keep = self._dropout_mask(weights)
        used = weights if keep is None else weights * keep
        self.saved = (query, key, value, used, keep, scale)
        return used @ value

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._require_forward(self.saved)
        query, key, value, used, keep, scale = self.saved
        check_same_shape("ScaledDotProductAttention.backward", "grad_output", grad_output,
                         used.shape[:-1] + value.shape[-1:])
        grad_value = np.swapaxes(used, -1, -2) @ grad_output
        grad_weights = grad_output @ np.swapaxes(value, -1, -2)
        if keep is not None:
            grad_weights *= keep
        weights = self.attn_weights
        grad_scores = weights * (grad_weights - np.sum(grad_weights * weights, axis=-1,
                                                       keepdims=True))
        grad_scores *= scale
        return grad_scores @ key, np.swapaxes(grad_scores, -1, -2) @ query, grad_value

    def _dropout_mask(self, weights: np.ndarray) -> np.ndarray | None:
        if not self.training or self.dropout_p == 0:
            return None
        kept = resolve_rng(self.rng).random(weights.shape) >= self.dropout_p
        return kept.astype(weights.dtype) / (1 - self.dropout_p)

    def extra_repr(self) -> str:
        return f"is_causal={self.is_causal}, scale={self.scale}, dropout_p={self.dropout_p}"


def scaled_dot_product_attention(query: np.ndarray, key: np.ndarray, value: np.ndarray,
                                 attn_mask: np.ndarray | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 *, rng: np.random.Generator | None = None) -> np.ndarray:
    """PyTorch's ``torch.nn.functional.scaled_dot_product_attention``: the forward pass
    only. For the backward, use a ``ScaledDotProductAttention`` module.

    Shape: as ``ScaledDotProductAttention``.
    """
    module = ScaledDotProductAttention(is_causal, scale, dropout_p, rng)
    return module.forward(query, key, value, attn_mask)


def _check_qkv(query, key, value) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    query, key, value = (np.asarray(a) for a in (query, key, value))
    for name, array in (("query", query), ("key", key), ("value", value)):
        check_floating(f"attention {name}", array)
        if array.ndim < 2:
            raise ValueError(f"attention {name} must have shape (..., length, features), got "
                             f"{array.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must have the same feature size E: query "
                         f"{query.shape}, key {key.shape}")
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(f"key and value must have the same length S: key {key.shape}, value "
                         f"{value.shape}")
    if not query.shape[:-2] == key.shape[:-2] == value.shape[:-2]:
        raise ValueError(f"query, key and value must have the same leading dimensions, got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    return query, key, value
