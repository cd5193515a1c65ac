"""Benchmark: unit 16's GPT, one training step at nanoGPT's CPU size, against PyTorch CPU.

nanoGPT's CPU recipe (4 layers, 4 heads, width 128, context 64, batch 12, Shakespeare's 65
characters): the reference ``GPT`` (tied head) does ``zero_grad``, forward, cross-entropy,
backward and an ``AdamW`` step over ``weight_decay_groups``; PyTorch does the same with the same
weights and groups. Float32 and float64 (target: within 1.5x of PyTorch's time).

    python -m bench.gpt [--rounds 5] [--threads 1]
"""
from __future__ import annotations

import numpy as np

from bench._timing import (against_pytorch_by_dtype, arguments, limit_threads, machine,
                           torch_available)
from bench._twins import torch_gpt
from minitorch_ref import nn, optim
from minitorch_ref.models import GPT, GPTConfig

CONFIG = GPTConfig(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128)
BATCH, LR, WEIGHT_DECAY = 12, 1e-3, 0.1


def batch() -> tuple[np.ndarray, np.ndarray]:
    """Random tokens and their targets, ``(B, T)`` each (speed does not depend on the text)."""
    rng = np.random.default_rng(1)
    shape = (BATCH, CONFIG.block_size)
    return rng.integers(0, CONFIG.vocab_size, shape), rng.integers(0, CONFIG.vocab_size, shape)


def reference_step(model: GPT, idx: np.ndarray, targets: np.ndarray):
    optimizer = optim.AdamW(optim.weight_decay_groups(model, WEIGHT_DECAY), lr=LR)
    criterion = nn.CrossEntropyLoss()

    def run() -> float:
        optimizer.zero_grad()
        loss = criterion(model(idx), targets)
        model.backward(criterion.backward())
        optimizer.step()
        return loss
    return run


def torch_step(model: GPT, idx: np.ndarray, targets: np.ndarray):
    """The same step in PyTorch, starting from the reference's weights."""
    import torch

    dtype = torch.from_numpy(model.wte.weight.data).dtype
    twin = torch_gpt(model, dtype)
    decay = {id(p) for p in optim.weight_decay_groups(model, WEIGHT_DECAY)[0]["params"]}
    names = [(name, id(p) in decay) for name, p in model.named_parameters()]
    optimizer = torch.optim.AdamW(
        [{"params": [twin.get_parameter(n) for n, d in names if d], "weight_decay": WEIGHT_DECAY},
         {"params": [twin.get_parameter(n) for n, d in names if not d], "weight_decay": 0.0}],
        lr=LR)
    idx_t, targets_t = torch.from_numpy(idx), torch.from_numpy(targets).reshape(-1)

    def run() -> float:
        optimizer.zero_grad()
        logits = twin(idx_t)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, CONFIG.vocab_size),
                                                 targets_t)
        loss.backward()
        optimizer.step()
        return loss.item()
    return run


def main() -> None:
    parser = arguments(__doc__)
    args = parser.parse_args()
    threads = limit_threads(args.threads)
    idx, targets = batch()
    print(f"GPT {CONFIG.n_layer} layers, {CONFIG.n_head} heads, width {CONFIG.n_embd}, context "
          f"{CONFIG.block_size}, batch {BATCH}, vocabulary {CONFIG.vocab_size}: one AdamW "
          f"training step; median of {args.rounds} alternating rounds; {threads}. {machine()}")

    def contenders(dtype: type) -> dict:
        runs = {"reference": reference_step(GPT(CONFIG, rng=np.random.default_rng(0),
                                                dtype=dtype), idx, targets)}
        if torch_available():
            runs["pytorch"] = torch_step(GPT(CONFIG, rng=np.random.default_rng(0), dtype=dtype),
                                         idx, targets)
        return runs
    print(against_pytorch_by_dtype(contenders, args.rounds))

if __name__ == "__main__":
    main()
