"""Benchmark: unit 15's transformer block, forward and backward, against PyTorch CPU.

The reference ``TransformerEncoderLayer`` (pre-norm, GELU, causal self-attention, no dropout) at
``B=12, T=64, C=128, H=4`` with a feed-forward width of ``4C``, against
``torch.nn.TransformerEncoderLayer(..., norm_first=True, batch_first=True)`` with the same
weights, in float32 and float64 (target: within 1.5x of PyTorch's time).

    python -m bench.transformer [--rounds 5] [--threads 1]
"""
from __future__ import annotations

import numpy as np

from bench._twins import copy_weights
from bench._timing import (against_pytorch_by_dtype, arguments, limit_threads, machine,
                           torch_available)
from minitorch_ref import nn

BATCH, LENGTH, WIDTH, HEADS = 12, 64, 128, 4


def reference_block(dtype: type) -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0.0, activation="gelu",
                                      norm_first=True, rng=np.random.default_rng(0), dtype=dtype)


def inputs(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """The block's input ``(B, T, C)`` and an upstream gradient of the same shape."""
    rng = np.random.default_rng(1)
    shape = (BATCH, LENGTH, WIDTH)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


def reference_run(block: nn.TransformerEncoderLayer, x: np.ndarray, grad_output: np.ndarray):
    """One forward (causal) and backward; dL/dx."""
    def run() -> np.ndarray:
        block.zero_grad()
        block.forward(x, is_causal=True)
        return block.backward(grad_output)
    return run


def torch_run(block: nn.TransformerEncoderLayer, x: np.ndarray, grad_output: np.ndarray):
    """The same block in PyTorch, with the reference's weights (PyTorch's layout)."""
    import torch

    dtype = torch.from_numpy(x).dtype
    twin = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0.0,
                                            activation="gelu", batch_first=True,
                                            norm_first=True, dtype=dtype)
    copy_weights(block, twin)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(LENGTH, dtype=dtype)
    upstream = torch.from_numpy(grad_output)

    def run() -> np.ndarray:
        xt = torch.from_numpy(x).requires_grad_()
        twin.zero_grad()
        twin(xt, src_mask=mask, is_causal=True).backward(upstream)
        return xt.grad.numpy()
    return run


def main() -> None:
    parser = arguments(__doc__)
    args = parser.parse_args()
    threads = limit_threads(args.threads)
    print(f"TransformerEncoderLayer, pre-norm, GELU, causal, B={BATCH} T={LENGTH} C={WIDTH} "
          f"H={HEADS}, feed-forward {4 * WIDTH}: forward + backward; median of {args.rounds} "
          f"alternating rounds; {threads}. {machine()}")

    def contenders(dtype: type) -> dict:
        block = reference_block(dtype)
        x, grad_output = inputs(dtype)
        runs = {"reference": reference_run(block, x, grad_output)}
        if torch_available():
            runs["pytorch"] = torch_run(block, x, grad_output)
        return runs
    print(against_pytorch_by_dtype(contenders, args.rounds))

if __name__ == "__main__":
    main()
