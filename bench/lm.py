"""Benchmark 6: unit 14's MLP language model (Bengio et al. 2003) on the course's first names.

Context of 3 characters, embeddings of 10, a tanh layer of 200, a Linear head over the 27
tokens; Adam (lr 3e-3), batch 64, the 26,044 (context, next character) samples of
``course.datasets.load_names()``'s training split.

1. One epoch, in one run: ``minitorch_ref``'s classes as the reference trains them
   (``DataLoader``, forward, ``zero_grad``, backward, ``Adam``), its fused path, and PyTorch
   CPU at the same sizes and dtype, slicing its tensors by a shuffled permutation (no torch
   DataLoader: only ours pays for a loader) (target: plain / pytorch <= 1.0x).
2. The reference trained epoch by epoch until its validation NLL reaches ``--target``: the
   epochs and CPU seconds it took (budget: 30 s of one core), beside the bigram's NLL
   (counts, add-one smoothing) and names sampled from the trained model.

    python -m bench.lm [--rounds 5] [--threads 1] [--dtype float32] [--target 2.10]
"""
from __future__ import annotations

import time

import numpy as np

import minitorch_ref as mt
from bench._timing import (arguments, cell, limit_threads, machine, median_times, ratio, table,
                           torch_available)
from bench.mlp import plain_forward_backward
from course.datasets import load_names
from minitorch_ref import nn, optim
from minitorch_ref.data import CharTokenizer, DataLoader, TensorDataset, context_windows
from minitorch_ref.language import mlp_language_model, sample_words
from minitorch_ref.nn.fused import forward_backward
from minitorch_ref.training import evaluate

BLOCK, EMBED, HIDDEN, BATCH, LR = 3, 10, 200, 64, 3e-3
CONTENDERS = ("plain", "fused", "pytorch")


class Corpus:
    """The names' splits as (context, next character) samples, and their tokenizer."""

    def __init__(self) -> None:
        train, val, _ = load_names()
        self.tokenizer = CharTokenizer(train)
        self.X, self.y = context_windows(train, self.tokenizer, BLOCK)
        self.X_val, self.y_val = context_windows(val, self.tokenizer, BLOCK)
        self.vocab_size = self.tokenizer.vocab_size


def reference_model(corpus: Corpus, dtype: type) -> nn.Sequential:
    mt.manual_seed(0)
    return mlp_language_model(corpus.vocab_size, BLOCK, EMBED, HIDDEN, dtype=dtype)


def train_epoch(model, criterion, optimizer, loader, fused: bool = False) -> float:
    """One pass over ``loader``; the mean of the batches' losses."""
    step = forward_backward if fused else plain_forward_backward
    losses = []
    for x, target in loader:
        losses.append(step(model, criterion, x, target))
        optimizer.step()
    return float(np.mean(losses))


def minitorch_epoch(corpus: Corpus, dtype: type, fused: bool):
    def run() -> float:
        model = reference_model(corpus, dtype)
        optimizer = optim.Adam(model.parameters(), lr=LR, fused=fused)
        loader = DataLoader(TensorDataset(corpus.X, corpus.y), BATCH, shuffle=True,
                            rng=np.random.default_rng(0))
        return train_epoch(model, nn.CrossEntropyLoss(), optimizer, loader, fused)
    return run


def torch_epoch(corpus: Corpus, dtype: type):
    import torch

    X, y = torch.from_numpy(corpus.X), torch.from_numpy(corpus.y)
    torch_dtype = getattr(torch, np.dtype(dtype).name)

    def run() -> float:
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Embedding(corpus.vocab_size, EMBED), torch.nn.Flatten(),
            torch.nn.Linear(BLOCK * EMBED, HIDDEN), torch.nn.Tanh(),
            torch.nn.Linear(HIDDEN, corpus.vocab_size)).to(torch_dtype)
        criterion = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=LR)
        losses = []
        for idx in torch.from_numpy(np.random.default_rng(0).permutation(len(X))).split(BATCH):
            loss = criterion(model(X[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return float(np.mean(losses))
    return run


def epoch_times(corpus: Corpus, dtype: type, rounds: int) -> dict:
    contenders = {"plain": minitorch_epoch(corpus, dtype, fused=False),
                  "fused": minitorch_epoch(corpus, dtype, fused=True)}
    if torch_available():
        contenders["pytorch"] = torch_epoch(corpus, dtype)
    return median_times(contenders, rounds)


def bigram_nll(corpus: Corpus) -> float:
    """Validation NLL of the bigram model: counts of (previous, next) on the training
    samples, plus one, normalised per previous character."""
    V = corpus.vocab_size
    counts = np.ones((V, V))
    np.add.at(counts, (corpus.X[:, -1], corpus.y), 1)
    probs = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(probs[corpus.X_val[:, -1], corpus.y_val]).mean())


def train_to_target(corpus: Corpus, dtype: type, target: float, max_epochs: int = 40):
    """The reference trained until its validation NLL <= ``target``: (model, epochs, CPU
    seconds of training and evaluation, the last validation NLL)."""
    model, criterion = reference_model(corpus, dtype), nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=LR)
    loader = DataLoader(TensorDataset(corpus.X, corpus.y), BATCH, shuffle=True,
                        rng=np.random.default_rng(0))
    val_loader = DataLoader(TensorDataset(corpus.X_val, corpus.y_val), 4096)
    start, val_nll = time.process_time(), float("inf")
    for epoch in range(1, max_epochs + 1):
        model.train()
        train_epoch(model, criterion, optimizer, loader)
        model.eval()
        val_nll = evaluate(model, criterion, val_loader)[0]
        if val_nll <= target:
            break
    return model, epoch, time.process_time() - start, val_nll


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--target", type=float, default=2.10, help="validation NLL to reach")
    args = parser.parse_args()
    threads, dtype, corpus = limit_threads(args.threads), np.dtype(args.dtype).type, Corpus()
    t = epoch_times(corpus, dtype, args.rounds)
    print(f"MLP language model {BLOCK}x{EMBED}-{HIDDEN}-{corpus.vocab_size}, Adam, {args.dtype}, "
          f"one epoch of {len(corpus.X)} samples, batch {BATCH}; median of {args.rounds} "
          f"alternating rounds; {threads}. {machine()}")
    if not torch_available():
        print("PyTorch is not installed (pip install -e '.[parity]'): its column is n/a.")
    print(table(("contender", "epoch s", "/ pytorch (target plain <= 1.0x)", "mean train loss"),
                [(name, cell(t, name, fmt="{:.3f}"), ratio(t, name, "pytorch"),
                  cell(t, name, "result", "{:.4f}")) for name in CONTENDERS]))
    model, epochs, seconds, val_nll = train_to_target(corpus, dtype, args.target)
    print(f"\nReference (plain) to validation NLL <= {args.target}: {epochs} epochs, "
          f"{seconds:.1f} CPU-s (budget 30 s), validation NLL {val_nll:.4f}; "
          f"bigram (counts + 1) {bigram_nll(corpus):.4f}; uniform ln 27 = {np.log(27):.4f}")
    for temperature in (1.0, 0.7):
        names = sample_words(model, corpus.tokenizer, BLOCK, 12, rng=np.random.default_rng(0),
                             temperature=temperature)
        print(f"samples at temperature {temperature}: {', '.join(names)}")


if __name__ == "__main__":
    main()
