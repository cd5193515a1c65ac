"""Benchmark 2: a tiny model as the notebooks train it, where per-call overhead dominates.

MLP 2-16-16-1, ReLU, BCEWithLogitsLoss, Adam, float64, 500 points, 1,000
full-batch steps: minitorch_ref, the plain classes as the notebooks use them and the
optional fused path (``nn.fused.forward_backward``, ``Adam(fused=True)``), vs
PyTorch CPU (target: at most 0.5x PyTorch's time).

    python -m bench.tiny [--rounds 5] [--steps 1000] [--threads 1]
"""
from __future__ import annotations

import numpy as np

import minitorch_ref as mt
from bench._timing import (arguments, cell, limit_threads, machine, median_times, peak_memory_mib,
                           ratio, table, torch_available)
from bench.mlp import plain_forward_backward
from minitorch_ref import nn, optim
from minitorch_ref.nn.fused import forward_backward


def circles(n: int = 500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = (np.hypot(X[:, 0], X[:, 1]) < 0.6).astype(np.float64).reshape(-1, 1)
    return X, y


def minitorch_run(X, y, steps, fused: bool):
    step = forward_backward if fused else plain_forward_backward

    def run() -> float:
        mt.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                              nn.Linear(16, 1))
        criterion = nn.BCEWithLogitsLoss()
        optimizer = optim.Adam(model.parameters(), lr=1e-2, fused=fused)
        for _ in range(steps):
            loss = step(model, criterion, X, y)
            optimizer.step()
        return loss
    return run


def torch_run(X, y, steps):
    import torch

    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)

    def run() -> float:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 1)).double()
        criterion = torch.nn.BCEWithLogitsLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(steps):
            loss = criterion(model(Xt), yt)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()
    return run


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    threads = limit_threads(args.threads)
    X, y = circles()
    contenders = {"plain": minitorch_run(X, y, args.steps, fused=False),
                  "fused": minitorch_run(X, y, args.steps, fused=True)}
    if torch_available():
        contenders["pytorch"] = torch_run(X, y, args.steps)
    t = median_times(contenders, args.rounds)
    print(f"MLP 2-16-16-1, Adam, float64, 500 points, {args.steps} full-batch steps; median of "
          f"{args.rounds} alternating rounds; {threads}. {machine()}")
    print(table(("contender", "seconds", "/ pytorch (target <= 0.5x)", "final loss"),
                [(name, cell(t, name, fmt="{:.3f}"), ratio(t, name, "pytorch"),
                  cell(t, name, "result", "{:.4f}")) for name in ("plain", "fused", "pytorch")]))
    print(f"peak memory {peak_memory_mib():.0f} MiB")


if __name__ == "__main__":
    main()
