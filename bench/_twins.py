"""PyTorch twins of reference models for the benchmarks: the same architecture holding the
same weights, in PyTorch's layout, at the reference's dtype."""
from __future__ import annotations

import numpy as np

from minitorch_ref import nn
from minitorch_ref.models import GPT


def torch_layout(model: nn.Module, name: str, array: np.ndarray) -> np.ndarray:
    """``array`` of parameter ``name`` in PyTorch's layout: a Linear's weight and attention's
    ``in_proj_weight`` are stored ``(in, out)`` here, ``(out, in)`` there."""
    owner = dict(model.named_modules())[name.rpartition(".")[0]]
    transposed = (isinstance(owner, nn.Linear) and name.endswith("weight")) or (
        isinstance(owner, nn.MultiheadAttention) and name.endswith("in_proj_weight"))
    return np.ascontiguousarray(array.T if transposed else array)


def copy_weights(model: nn.Module, twin) -> None:
    """Every parameter of ``model`` into the torch module ``twin`` (same dotted names)."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            twin.get_parameter(name).copy_(torch.from_numpy(torch_layout(model, name,
                                                                         param.data)))


def torch_gpt(model: GPT, dtype):
    """``model``'s architecture in PyTorch (blocks are ``torch.nn.TransformerEncoderLayer``;
    a tied head shares the embedding's Parameter), holding ``model``'s weights."""
    import torch

    config = model.config

    class TorchGPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            width, vocab = config.n_embd, config.vocab_size
            self.wte = torch.nn.Embedding(vocab, width, dtype=dtype)
            self.wpe = torch.nn.Embedding(config.block_size, width, dtype=dtype)
            self.h = torch.nn.ModuleList(torch.nn.TransformerEncoderLayer(
                width, config.n_head, 4 * width, dropout=0.0, activation="gelu",
                batch_first=True, norm_first=True, bias=config.bias, dtype=dtype)
                for _ in range(config.n_layer))
            self.ln_f = torch.nn.LayerNorm(width, bias=config.bias, dtype=dtype)
            self.lm_head = torch.nn.Linear(width, vocab, bias=False, dtype=dtype)
            if config.tie_weights:
                self.lm_head.weight = self.wte.weight

        def forward(self, idx):
            length = idx.shape[1]
            x = self.wte(idx) + self.wpe(torch.arange(length))
            mask = torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=dtype)
            for block in self.h:
                x = block(x, src_mask=mask, is_causal=True)
            return self.lm_head(self.ln_f(x))

    twin = TorchGPT()
    copy_weights(model, twin)
    return twin
