r"""A decoder-only transformer (GPT) built from the course's own layers, with its backward.

For tokens ``idx`` ``(B, T)``: :math:`X_0 = W_{te}[\mathrm{idx}] + W_{pe}[0..T-1]`, then
``n_layer`` pre-norm blocks with causal self-attention, a final LayerNorm and the language-model
head :math:`Z = X W_{te}^\top` (weights tied to the token embedding, as GPT-2) or
:math:`Z = X W_{head}`. The logits ``(B, T, V)`` at position ``t`` score token ``t + 1``.

With tied weights the table is used twice, so its gradient is the sum of both uses:
:math:`\partial L/\partial W_{te} = \mathrm{scatter}(\partial L/\partial X_0) + G^\top X`,
``G`` the logits' gradient and ``X`` the head's input.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from minitorch_ref.nn import init
from minitorch_ref.nn._checks import check_indices
from minitorch_ref.nn.container import Sequential
from minitorch_ref.nn.dropout import Dropout
from minitorch_ref.nn.linear import Linear
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.normalization import LayerNorm
from minitorch_ref.nn.sparse import Embedding
from minitorch_ref.nn.transformer import TransformerEncoderLayer
from minitorch_ref.sampling import sample

INIT_STD = 0.02
RESIDUAL_PROJECTIONS = ("self_attn.out_proj.weight", "linear2.weight")   # end in a residual sum


@dataclass(frozen=True)
class GPTConfig:
    """The sizes of a ``GPT``: ``n_embd`` must be divisible by ``n_head``."""

    vocab_size: int
    block_size: int          # the longest context: rows of the position table
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    tie_weights: bool = True


class GPT(Module):
    """GPT-2's architecture at any size: token and position embeddings, causal pre-norm blocks
    (``TransformerEncoderLayer(norm_first=True, activation="gelu")``, feed-forward ``4 * n_embd``),
    a final ``LayerNorm`` and a head tied to the token embedding (or its own ``lm_head``).

    ``backward(grad_logits)`` adds every parameter's gradient and returns None (token indices
    have no gradient).

    Initialisation, as GPT-2's: every matrix and embedding from ``N(0, 0.02)``, biases 0, and
    the two projections that end in a residual sum (``self_attn.out_proj`` and ``linear2``) from
    ``N(0, 0.02 / sqrt(2 * n_layer))``, so the residual stream's variance does not grow with depth.

    Args:
        config: the sizes.
        rng: generator for the initial weights and the dropout masks.
        dtype: dtype of the parameters.

    Shape:
        - Input: ``(B, T)`` integer tokens, ``T <= block_size``
        - Output: ``(B, T, vocab_size)`` logits
    """

    def __init__(self, config: GPTConfig, rng: np.random.Generator | None = None,
                 dtype: type = np.float64) -> None:
        super().__init__()
        self.config = config
        width = config.n_embd
        self.wte = Embedding(config.vocab_size, width, rng=rng, dtype=dtype)
        self.wpe = Embedding(config.block_size, width, rng=rng, dtype=dtype)
        self.drop = Dropout(config.dropout, rng=rng)
        self.h = Sequential(*(TransformerEncoderLayer(
            width, config.n_head, 4 * width, dropout=config.dropout, activation="gelu",
            norm_first=True, bias=config.bias, rng=rng, dtype=dtype)
            for _ in range(config.n_layer)))
        self.ln_f = LayerNorm(width, bias=config.bias, dtype=dtype)
        self.lm_head = None
        if not config.tie_weights:
            self.lm_head = Linear(width, config.vocab_size, bias=False, rng=rng, dtype=dtype)
        self._initialise(rng)
        self.head_input = None

    def _initialise(self, rng: np.random.Generator | None) -> None:
        residual_std = INIT_STD / math.sqrt(2 * self.config.n_layer)
        for name, param in self.named_parameters():
            if param.data.ndim < 2:
                if name.endswith("bias"):
                    init.zeros_(param)
                continue
            residual = name.endswith(RESIDUAL_PROJECTIONS)
            init.normal_(param, 0.0, residual_std if residual else INIT_STD, rng=rng)

    def forward(self, idx: np.ndarray) -> np.ndarray:
        idx = check_indices("GPT", idx, self.config.vocab_size)
        if idx.ndim != 2:
            raise ValueError(f"GPT expected tokens of shape (B, T), got {idx.shape}. "
                             "Did you forget the batch dimension?")
        length = idx.shape[1]
        if length > self.config.block_size:
            raise ValueError(
                f"GPT got a sequence of {length} tokens, longer than its position table "
                f"(block_size={self.config.block_size}): crop the context to its last "
                f"{self.config.block_size} tokens, idx[:, -{self.config.block_size}:]")
        x = self.drop(self.wte(idx) + self.wpe(np.arange(length)))
        for block in self.h:
            x = block.forward(x, is_causal=True)
        x = self.ln_f(x)
        self.head_input = x
        if self.lm_head is not None:
            return self.lm_head(x)
        return x @ self.wte.weight.data.T

    def backward(self, grad_logits: np.ndarray) -> None:
        self._require_forward(self.head_input)
        if self.lm_head is not None:
            grad = self.lm_head.backward(grad_logits)
        else:   # the head's use of the table: added to what the lookup adds below
            width, vocab = self.config.n_embd, self.config.vocab_size
            self.wte.weight.grad += (grad_logits.reshape(-1, vocab).T
                                     @ self.head_input.reshape(-1, width))
            grad = grad_logits @ self.wte.weight.data
        grad = self.ln_f.backward(grad)
        for block in reversed(list(self.h)):
            grad = block.backward(grad)
        grad = self.drop.backward(grad)
        self.wte.backward(grad)
        self.wpe.backward(grad.sum(axis=0))
        return None

    def generate(self, idx: np.ndarray, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
        """Continue each row of ``idx`` by ``max_new_tokens`` tokens, one at a time.

        Each step reads at most the last ``block_size`` tokens (the context is cropped), and
        draws the next one with ``minitorch_ref.sampling.sample``. Call ``eval()`` first when
        the model has dropout.

        Shape:
            - idx: ``(B, T)``; Output: ``(B, T + max_new_tokens)``.
        """
        idx = np.asarray(idx)
        for _ in range(max_new_tokens):
            logits = self.forward(idx[:, -self.config.block_size:])[:, -1]
            idx = np.concatenate([idx, sample(logits, temperature, top_k, rng)[:, None]], axis=1)
        return idx

    def num_parameters(self, non_embedding: bool = True) -> int:
        """How many numbers the model learns; without the position table by default (GPT-2's
        convention: the tied token table counts, as the head uses it)."""
        total = sum(param.data.size for param in self.parameters())
        return total - self.wpe.weight.data.size if non_embedding else total

    def extra_repr(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in vars(self.config).items())
