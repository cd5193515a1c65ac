"""Embedding: a lookup table of learnable rows, indexed by integer tokens."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn import init
from minitorch_ref.nn._checks import check_indices, check_same_shape
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


def _normalised_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    """``padding_idx`` in ``[0, num_embeddings)``; a negative one counts from the end, as in
    PyTorch (``-1`` is the last row)."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(
            f"Embedding: padding_idx={padding_idx} must be within num_embeddings="
            f"{num_embeddings}, i.e. in [{-num_embeddings}, {num_embeddings})."
        )
    return padding_idx % num_embeddings


class Embedding(Module):
    r"""A table of ``num_embeddings`` learnable row vectors; token ``i`` is mapped to row ``i``.

    Forward is a lookup, :math:`Y[\dots] = W[\mathrm{idx}[\dots]]`, the same as multiplying
    one-hot rows by :math:`W`. Backward adds each upstream row :math:`G[\dots]` into the row
    it was read from: :math:`\partial L/\partial W_i = \sum_{\dots:\ \mathrm{idx}[\dots]=i}
    G[\dots]`. A token that occurs twice in a batch must collect both gradients, which is why
    it uses ``np.add.at``: ``W.grad[idx] += G`` writes each repeated row once and loses the
    others. Gradients are *added* to ``.grad`` (they accumulate until ``zero_grad``); the
    indices themselves have no gradient, so ``backward`` returns ``None``.

    Args:
        num_embeddings: size of the vocabulary (rows of the table).
        embedding_dim: size of each embedding vector.
        padding_idx: a row that stays fixed: zero at initialisation and no gradient ever
            (its value may still be set by hand). Negative values count from the end.
        rng: generator for the initial values (default: the package's).
        dtype: dtype of the table.

    Shape:
        - Input: ``(*)``, integer indices in ``[0, num_embeddings)``, any shape
        - Output: ``(*, embedding_dim)``
        - ``weight``: ``(num_embeddings, embedding_dim)``, the same layout as PyTorch's

    Initialisation, as PyTorch's: every entry of ``weight`` from ``N(0, 1)``.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        rng: np.random.Generator | None = None,
        dtype: type = np.float64,
    ) -> None:
        super().__init__()
        if num_embeddings < 1 or embedding_dim < 1:
            raise ValueError(
                f"Embedding needs positive sizes, got num_embeddings={num_embeddings}, "
                f"embedding_dim={embedding_dim}"
            )
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _normalised_padding_idx(padding_idx, num_embeddings)
        self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtype=dtype))
        init.normal_(self.weight, 0.0, 1.0, rng=rng)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0.0
        self.indices = None

    def forward(self, indices: np.ndarray) -> np.ndarray:
        self.indices = check_indices("Embedding", indices, self.num_embeddings)
        return self.weight.data[self.indices]

    def backward(self, grad_output: np.ndarray) -> None:
        self._require_forward(self.indices)
        check_same_shape("Embedding.backward", "grad_output", grad_output,
                         self.indices.shape + (self.embedding_dim,))
        rows = self.indices.reshape(-1)
        grads = np.reshape(grad_output, (-1, self.embedding_dim))
        if self.padding_idx is not None:
            keep = rows != self.padding_idx
            rows, grads = rows[keep], grads[keep]
        np.add.at(self.weight.grad, rows, grads)
        return None

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else f"{text}, padding_idx={self.padding_idx}"
