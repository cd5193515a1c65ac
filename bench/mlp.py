"""Benchmark 1: one epoch of an MNIST-sized MLP, minitorch_ref vs PyTorch vs the matmul floor.

MLP 784-256-128-10, ReLU, CrossEntropyLoss, Adam, float32, 60,000 synthetic
MNIST-shaped samples, batch sizes 64 and 256. The "matmul floor" runs only the
step's matrix multiplies (3 forward, 5 backward: no gradient for the input
images), the part no framework can avoid.

    python bench/mlp.py [--rounds 5] [--samples 60000]
"""
from __future__ import annotations

import argparse

import numpy as np

import minitorch_ref as mt
from bench._timing import machine, median_times, peak_memory_mib, table
from minitorch_ref import nn, optim

SIZES = (784, 256, 128, 10)


def synthetic_mnist(samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((samples, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], samples)
    return X, y


def batches(samples: int, batch_size: int, rng: np.random.Generator):
    order = rng.permutation(samples)
    return [order[i:i + batch_size] for i in range(0, samples, batch_size)]


def minitorch_epoch(X, y, batch_size):
    mt.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        layers += [nn.Linear(fan_in, fan_out, dtype=np.float32), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3, fused=True)
    order = batches(len(X), batch_size, np.random.default_rng(0))

    def run():
        for idx in order:
            criterion(model(X[idx]), y[idx])
            optimizer.zero_grad()
            model.backward(criterion.backward())
            optimizer.step()
    return run


def torch_epoch(X, y, batch_size):
    import torch

    torch.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    order = [torch.from_numpy(idx) for idx in batches(len(X), batch_size, np.random.default_rng(0))]

    def run():
        for idx in order:
            loss = criterion(model(Xt[idx]), yt[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return run


def matmul_floor(X, y, batch_size):
    rng = np.random.default_rng(0)
    W = [rng.standard_normal((a, b), dtype=np.float32) * 0.05 for a, b in zip(SIZES[:-1], SIZES[1:])]
    order = batches(len(X), batch_size, np.random.default_rng(0))

    def run():
        for idx in order:
            h = [X[idx]]
            for w in W:
                h.append(h[-1] @ w)
            g = h[-1]
            for layer in reversed(range(len(W))):
                h[layer].T @ g
                if layer:
                    g = g @ W[layer].T
    return run


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=60_000)
    args = parser.parse_args()
    X, y = synthetic_mnist(args.samples)
    with_torch = torch_available()
    rows = []
    for batch_size in (64, 256):
        contenders = {"minitorch_ref": minitorch_epoch(X, y, batch_size),
                      "matmul floor": matmul_floor(X, y, batch_size)}
        if with_torch:
            contenders["pytorch"] = torch_epoch(X, y, batch_size)
        t = median_times(contenders, args.rounds)
        vs_torch = f"{t['minitorch_ref'] / t['pytorch']:.2f}x" if with_torch else "n/a"
        rows.append((batch_size, f"{t['minitorch_ref']:.2f}",
                     f"{t['pytorch']:.2f}" if with_torch else "n/a", f"{t['matmul floor']:.2f}",
                     vs_torch, f"{t['minitorch_ref'] / t['matmul floor']:.2f}x"))
    print(f"MLP 784-256-128-10, Adam, float32, one epoch of {args.samples} samples; "
          f"median of {args.rounds} alternating rounds. {machine()}")
    if not with_torch:
        print("PyTorch is not installed (pip install -e '.[parity]'): its column is n/a.")
    print(table(("batch", "minitorch_ref s", "pytorch s", "matmul floor s",
                 "minitorch / pytorch (target <= 0.8x)", "minitorch / floor (target <= 1.6x)"),
                rows))
    print(f"peak memory {peak_memory_mib():.0f} MiB")


if __name__ == "__main__":
    main()
