"""The transformer block: self-attention and a feed-forward network, each in a residual."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn.activation import GELU, ReLU
from minitorch_ref.nn.dropout import Dropout
from minitorch_ref.nn.linear import Linear
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.multihead import MultiheadAttention
from minitorch_ref.nn.normalization import LayerNorm

ACTIVATIONS = {"relu": ReLU, "gelu": GELU}


class TransformerEncoderLayer(Module):
    r"""PyTorch's ``nn.TransformerEncoderLayer`` (``batch_first=True``), with its backward.

    With :math:`\mathrm{SA}` the self-attention (``self_attn``) and
    :math:`\mathrm{FF}(x) = \mathrm{linear2}(\mathrm{act}(\mathrm{linear1}(x)))`:

    - pre-norm (``norm_first=True``, GPT-2's): :math:`h = x + \mathrm{SA}(\mathrm{LN_1}(x))`,
      :math:`y = h + \mathrm{FF}(\mathrm{LN_2}(h))`;
    - post-norm (the 2017 paper's, PyTorch's default): :math:`h = \mathrm{LN_1}(x +
      \mathrm{SA}(x))`, :math:`y = \mathrm{LN_2}(h + \mathrm{FF}(h))`.

    Backward through a residual adds the two paths: for :math:`h = x + f(x)`,
    :math:`\partial L/\partial x = \partial L/\partial h + f'^\top(\partial L/\partial h)`,
    which is why a deep stack of pre-norm blocks still passes the gradient to its first
    layer unchanged in part.

    Args:
        d_model: the width ``C`` of every token.
        nhead: the number of attention heads (must divide ``d_model``).
        dim_feedforward: the hidden width of the feed-forward network.
        dropout: dropout after the attention and the feed-forward network, and inside it.
        activation: ``"relu"`` or ``"gelu"`` (exact).
        layer_norm_eps: the LayerNorms' ``eps``.
        batch_first: must be True.
        norm_first: pre-norm when True, post-norm otherwise.
        bias: whether the Linear layers and LayerNorms have biases.
        rng: generator for the initial weights and dropout masks.
        dtype: dtype of the parameters.

    ``forward(src, src_mask=None, is_causal=False)``: ``src_mask`` as MultiheadAttention's
    ``attn_mask`` (True or -inf: may not attend); ``is_causal=True`` alone masks the future.
    Parameter names are PyTorch's (``self_attn.in_proj_weight``, ``linear1.weight``,
    ``norm1.weight``, ...), weights in the course's ``(in, out)`` layout.

    Shape:
        - Input: ``(B, T, d_model)``; Output: the same.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = True, norm_first: bool = False, bias: bool = True,
                 rng: np.random.Generator | None = None, dtype: type = np.float64) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got "
                             f"{activation!r}")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, rng=rng, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, rng=rng, dtype=dtype)
        self.dropout = Dropout(dropout, rng=rng)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, rng=rng, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout, rng=rng)
        self.dropout2 = Dropout(dropout, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.activation_name = activation

    def forward(self, src: np.ndarray, src_mask: np.ndarray | None = None,
                is_causal: bool = False) -> np.ndarray:
        x = src
        if self.norm_first:
            x = x + self._attend(self.norm1(x), src_mask, is_causal)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(x + self._attend(x, src_mask, is_causal))
        return self.norm2(x + self._feed_forward(x))

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        if self.norm_first:
            grad = grad_output + self.norm2.backward(self._feed_forward_backward(grad_output))
            return grad + self.norm1.backward(self._attend_backward(grad))
        grad = self.norm2.backward(grad_output)
        grad = self.norm1.backward(grad + self._feed_forward_backward(grad))
        return grad + self._attend_backward(grad)

    def _attend(self, x, mask, is_causal):
        return self.dropout1(self.self_attn.forward(x, attn_mask=mask, is_causal=is_causal))

    def _attend_backward(self, grad):
        return self.self_attn.backward(self.dropout1.backward(grad))

    def _feed_forward(self, x):
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout2(self.linear2(hidden))

    def _feed_forward_backward(self, grad):
        grad = self.linear2.backward(self.dropout2.backward(grad))
        return self.linear1.backward(self.activation.backward(self.dropout.backward(grad)))

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}, activation={self.activation_name!r}"
