"""Multi-head attention: project, split into heads, attend, merge, project."""
from __future__ import annotations

import math

import numpy as np

from minitorch_ref.nn import init
from minitorch_ref.nn.attention import (
    ScaledDotProductAttention, causal_mask, merge_heads, split_heads,
)
from minitorch_ref.nn.linear import Linear
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


class MultiheadAttention(Module):
    r"""PyTorch's ``nn.MultiheadAttention`` with ``batch_first=True``, and its backward.

    With :math:`W = [W_q\; W_k\; W_v]` (``in_proj_weight``, ``(E, 3E)``):
    :math:`Q = X_q W_q + b_q`, :math:`K = X_k W_k + b_k`, :math:`V = X_v W_v + b_v`, each
    ``(B, T, E)`` split into ``H`` heads ``(B, H, T, D)`` with :math:`D = E/H`; every head
    attends on its own (``ScaledDotProductAttention``, scale :math:`1/\sqrt D`); the heads
    are merged back to ``(B, T, E)`` and projected by ``out_proj``.

    The mapping to PyTorch's parameters (the course keeps weights as ``(in, out)``):
    ``in_proj_weight`` is ``torch_mha.in_proj_weight.T``, ``in_proj_bias`` is the same,
    ``out_proj.weight`` is ``torch_mha.out_proj.weight.T``, ``out_proj.bias`` the same.

    ``forward(query, key=None, value=None, attn_mask=None, is_causal=False)`` returns the
    output alone (PyTorch returns ``(output, weights)``); the weights of every head are kept in
    ``attn_weights``, ``(B, H, L, S)``. Without ``key`` and ``value`` it is self-attention and
    ``backward(grad)`` returns ``dL/dquery``; with them, the triple of gradients.

    ``attn_mask``, as PyTorch's MultiheadAttention reads it (the opposite of
    booleans of ``scaled_dot_product_attention``): True means *may not* attend; floats are added
    to the scores. Shape ``(L, S)`` or ``(B*H, L, S)``. ``is_causal=True`` without a mask
    builds the causal one (PyTorch takes it as a hint and needs the mask too).

    Args:
        embed_dim: the model width ``E``.
        num_heads: ``H``; must divide ``E``.
        dropout: dropout on the attention weights, in training mode.
        bias: whether the projections have biases.
        batch_first: must be True (the course is batch-first).
        rng: generator for the initial weights and the dropout masks.
        dtype: dtype of the parameters.

    Initialisation, as PyTorch's: ``in_proj_weight`` Xavier-uniform over ``(3E, E)``, biases 0,
    ``out_proj.weight`` as a Linear layer's weight.

    Shape:
        - Input: query ``(B, L, E)``; key and value ``(B, S, E)``.
        - Output: ``(B, L, E)``; ``attn_weights``: ``(B, H, L, S)``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = True, rng: np.random.Generator | None = None,
                 dtype: type = np.float64) -> None:
        super().__init__()
        if not batch_first:
            raise ValueError("MultiheadAttention here is batch-first only: inputs (B, T, E), "
                             "batch_first=True")
        if embed_dim < 1 or num_heads < 1 or embed_dim % num_heads:
            raise ValueError(f"embed_dim={embed_dim} must be divisible by num_heads={num_heads}"
                             " (each head gets embed_dim // num_heads features)")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        bound = math.sqrt(6.0 / (embed_dim + 3 * embed_dim))
        self.in_proj_weight = Parameter(np.empty((embed_dim, 3 * embed_dim), dtype=dtype))
        init.uniform_(self.in_proj_weight, -bound, bound, rng=rng)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, dtype=dtype)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, rng=rng, dtype=dtype)
        if bias:
            self.out_proj.bias.data[...] = 0
        self.attention = ScaledDotProductAttention(dropout_p=dropout, rng=rng)
        self.inputs = None

    @property
    def attn_weights(self) -> np.ndarray | None:
        return self.attention.attn_weights

    def forward(self, query: np.ndarray, key: np.ndarray | None = None,
                value: np.ndarray | None = None, attn_mask: np.ndarray | None = None,
                is_causal: bool = False) -> np.ndarray:
        if (key is None) != (value is None):
            raise ValueError("give both key and value (attention over another sequence) or "
                             "neither (self-attention)")
        inputs = tuple(self._check(name, np.asarray(x)) for name, x in
                       (("query", query), ("key", query if key is None else key),
                        ("value", query if value is None else value)))
        self_attention = key is None and value is None
        self.inputs = (inputs[0],) if self_attention else inputs
        q, k, v = self._project(self_attention)
        mask = self._mask(attn_mask, is_causal, q.shape[0], q.shape[1], k.shape[1])
        heads = self.attention.forward(*(split_heads(a, self.num_heads) for a in (q, k, v)),
                                       attn_mask=mask)
        return self.out_proj.forward(merge_heads(heads))

    def backward(self, grad_output: np.ndarray):
        self._require_forward(self.inputs)
        grad_heads = self.attention.backward(
            split_heads(self.out_proj.backward(grad_output), self.num_heads))
        grads = [merge_heads(g) for g in grad_heads]   # dL/dQ, dL/dK, dL/dV: (B, T, E) each
        if len(self.inputs) == 1:   # self-attention: one input, one product (B, T, 3E)
            grads, inputs, parts = [np.concatenate(grads, axis=-1)], self.inputs, [slice(None)]
        else:
            width, inputs = self.embed_dim, self.inputs
            parts = [slice(i * width, (i + 1) * width) for i in range(3)]
        grad_inputs = []
        for x, grad, part in zip(inputs, grads, parts):
            self.in_proj_weight.grad[:, part] += _rows(x).T @ _rows(grad)
            if self.in_proj_bias is not None:
                self.in_proj_bias.grad[part] += grad.sum(axis=(0, 1))
            grad_inputs.append(grad @ self.in_proj_weight.data[:, part].T)
        return grad_inputs[0] if len(grad_inputs) == 1 else tuple(grad_inputs)

    def _project(self, self_attention: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K and V, each ``(B, T, E)``: one product for self-attention, three otherwise."""
        weight, width = self.in_proj_weight.data, self.embed_dim
        bias = self.in_proj_bias.data if self.in_proj_bias is not None else None
        if self_attention:
            qkv = self.inputs[0] @ weight
            if bias is not None:
                qkv += bias
            return qkv[..., :width], qkv[..., width:2 * width], qkv[..., 2 * width:]
        projected = []
        for index, x in enumerate(self.inputs):
            part = slice(index * width, (index + 1) * width)
            y = x @ weight[:, part]
            if bias is not None:
                y += bias[part]
            projected.append(y)
        return tuple(projected)

    def _mask(self, attn_mask, is_causal: bool, batch: int, target: int, source: int):
        """The mask in ``ScaledDotProductAttention``'s terms (True: may attend, or floats),
        shaped to broadcast against ``(B, H, L, S)``."""
        if attn_mask is None:
            return causal_mask(target, source) if is_causal else None
        mask = np.asarray(attn_mask)
        heads = batch * self.num_heads
        if mask.shape not in ((target, source), (heads, target, source)):
            raise ValueError(f"attn_mask must have shape (L, S) = {(target, source)} or "
                             f"(B*num_heads, L, S) = {(heads, target, source)}, got {mask.shape}")
        if mask.ndim == 3:
            mask = mask.reshape(batch, self.num_heads, target, source)
        return ~mask if mask.dtype == bool else mask

    def _check(self, name: str, x: np.ndarray) -> np.ndarray:
        if x.ndim != 3 or x.shape[-1] != self.embed_dim:
            hint = " Did you forget the batch dimension?" if x.ndim == 2 else ""
            raise ValueError(f"MultiheadAttention expected {name} of shape (B, T, "
                             f"{self.embed_dim}), got {x.shape}.{hint}")
        return x

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _rows(x: np.ndarray) -> np.ndarray:
    """``(..., F)`` as a matrix of rows ``(prod(...), F)``."""
    return x.reshape(-1, x.shape[-1])
