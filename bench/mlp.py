"""Benchmark 1: one epoch of an MNIST-sized MLP, minitorch_ref vs PyTorch vs the matmul floor.

MLP 784-256-128-10, ReLU, CrossEntropyLoss, Adam (lr 1e-3), float32, one epoch of
60,000 synthetic MNIST-shaped samples whose labels come from a fixed random
teacher network (so the loss falls and the ReLUs stay alive), batch sizes 64
and 256. Each run trains a fresh model from the same seed. Contenders:

- ``fused``: minitorch_ref's optional fast path, ``nn.fused.forward_backward``
  and ``optim.Adam(fused=True)`` (the one the targets are about);
- ``plain``: the classes students mirror, ``model(x)``, ``model.zero_grad()``,
  ``model.backward(criterion.backward())``, ``optim.Adam()``;
- ``pytorch``: the same network in PyTorch CPU with its defaults;
- ``matmul floor``: the step's matrix multiplies alone (3 forward, 5 backward:
  no gradient for the input images), the part no framework can avoid;
- ``Adam alone``: the fused Adam update over the 235k parameters, as many steps;
- ``Adam numexpr``: the same update as three numexpr expressions
  (``bench/numexpr_adam.py``), numexpr limited to the same threads as BLAS.

    python -m bench.mlp [--rounds 5] [--samples 60000] [--threads 1]
"""
from __future__ import annotations

import numpy as np

import minitorch_ref as mt
from bench._timing import (arguments, cell, limit_threads, machine, median_times, peak_memory_mib,
                           ratio, table, torch_available)
from bench.numexpr_adam import numexpr_adam_step
from minitorch_ref import nn, optim
from minitorch_ref.nn.fused import forward_backward

SIZES = (784, 256, 128, 10)
LAST = 50   # the final loss is the mean over the epoch's last LAST batches
CONTENDERS = ("fused", "plain", "pytorch", "matmul floor", "Adam alone", "Adam numexpr")


def synthetic_mnist(samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal images and the labels a random 784-32-10 ReLU teacher gives them."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((samples, SIZES[0]), dtype=np.float32)
    hidden = np.maximum(X @ rng.standard_normal((SIZES[0], 32), dtype=np.float32), 0)
    scores = hidden @ rng.standard_normal((32, SIZES[-1]), dtype=np.float32)
    return X, (scores - scores.mean(axis=0)).argmax(axis=1)   # centred: no class dominates


def batches(samples: int, batch_size: int) -> list[np.ndarray]:
    order = np.random.default_rng(0).permutation(samples)
    return [order[i:i + batch_size] for i in range(0, samples, batch_size)]


def minitorch_model() -> nn.Sequential:
    mt.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        layers += [nn.Linear(fan_in, fan_out, dtype=np.float32), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def plain_forward_backward(model, criterion, x, target) -> float:
    """What ``nn.fused.forward_backward`` replaces: the classes as students write them."""
    loss = criterion(model(x), target)
    model.zero_grad()
    model.backward(criterion.backward())
    return loss


def minitorch_epoch(X, y, batch_size, fused: bool):
    order = batches(len(X), batch_size)
    step = forward_backward if fused else plain_forward_backward

    def run() -> float:
        model, criterion = minitorch_model(), nn.CrossEntropyLoss()
        optimizer = optim.Adam(model.parameters(), lr=1e-3, fused=fused)
        losses = []
        for idx in order:
            losses.append(step(model, criterion, X[idx], y[idx]))
            optimizer.step()
        return float(np.mean(losses[-LAST:]))
    return run


def torch_epoch(X, y, batch_size):
    import torch

    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    order = [torch.from_numpy(idx) for idx in batches(len(X), batch_size)]

    def run() -> float:
        torch.manual_seed(0)
        layers = []
        for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
            layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        criterion = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        losses = []
        for idx in order:
            loss = criterion(model(Xt[idx]), yt[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return float(np.mean(losses[-LAST:]))
    return run


def matmul_floor(X, y, batch_size):
    weights = [p.data for p in minitorch_model().parameters() if p.data.ndim == 2]
    order = batches(len(X), batch_size)

    def run() -> None:
        for idx in order:
            h = [X[idx]]
            for w in weights:
                h.append(h[-1] @ w)
            g = h[-1]
            for layer in reversed(range(len(weights))):
                h[layer].T @ g
                if layer:
                    g = g @ weights[layer].T
    return run


def adam_alone(X, y, batch_size, numexpr: bool = False):
    """The Adam update alone, on gradients that stay fixed, for as many steps as an epoch has."""
    params = minitorch_model().parameters()
    for param in params:
        param.grad[...] = np.random.default_rng(0).standard_normal(param.shape) * 1e-3
    steps = len(batches(len(X), batch_size))

    def run() -> None:
        optimizer = optim.Adam(params, lr=1e-3, fused=True)
        for _ in range(steps):
            optimizer.step()

    def run_numexpr() -> None:
        group = optim.Adam(params, lr=1e-3).param_groups[0]
        states = [{"step": 0, "exp_avg": np.zeros_like(p.data), "exp_avg_sq": np.zeros_like(p.data)}
                  for p in params]
        for _ in range(steps):
            for param, state in zip(params, states):
                numexpr_adam_step(param.data, param.grad, group, state)
    return run_numexpr if numexpr else run


def measure(X, y, batch_size: int, rounds: int) -> dict:
    contenders = {"fused": minitorch_epoch(X, y, batch_size, fused=True),
                  "plain": minitorch_epoch(X, y, batch_size, fused=False),
                  "pytorch": torch_epoch(X, y, batch_size) if torch_available() else None,
                  "matmul floor": matmul_floor(X, y, batch_size),
                  "Adam alone": adam_alone(X, y, batch_size),
                  "Adam numexpr": adam_alone(X, y, batch_size, numexpr=True)}
    return median_times({name: run for name, run in contenders.items() if run}, rounds)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--samples", type=int, default=60_000)
    args = parser.parse_args()
    threads = limit_threads(args.threads)
    X, y = synthetic_mnist(args.samples)
    times, losses = [], []
    for batch_size in (64, 256):
        t = measure(X, y, batch_size, args.rounds)
        times.append((batch_size, *(cell(t, name) for name in CONTENDERS),
                      ratio(t, "fused", "pytorch"), ratio(t, "fused", "matmul floor"),
                      ratio(t, "plain", "pytorch"), ratio(t, "Adam alone", "matmul floor"),
                      ratio(t, "Adam numexpr", "Adam alone")))
        losses.append((batch_size, *(cell(t, name, "result", "{:.3f}")
                                     for name in ("fused", "plain", "pytorch"))))
    print(f"MLP 784-256-128-10, Adam, float32, one epoch of {args.samples} samples; median of "
          f"{args.rounds} alternating rounds; {threads}. {machine()}")
    if not torch_available():
        print("PyTorch is not installed (pip install -e '.[parity]'): its columns are n/a.")
    print(table(("batch", *(f"{name} s" for name in CONTENDERS),
                 "fused / pytorch (target <= 0.8x)", "fused / floor (target <= 1.6x)",
                 "plain / pytorch", "Adam alone / floor", "Adam numexpr / Adam alone"), times))
    print(f"\nSame work: mean loss over the epoch's last {LAST} batches (2.30 = chance)")
    print(table(("batch", "fused", "plain", "pytorch"), losses))
    print(f"peak memory {peak_memory_mib():.0f} MiB")


if __name__ == "__main__":
    main()
