"""Benchmark 5: unit 13's convolutions, two ratios measured in one run.

1. The reference ``Conv2d`` (``minitorch_ref``), forward and backward of two layers, 1 -> 16
   -> 32 channels, 3x3 filters with padding 1, on a batch of 64 of the course's 8x8 digits,
   against PyTorch CPU doing the same (target: within 3x of PyTorch's time).
2. The notebook's solutions: the naive loops (``conv2d_naive``) against the vectorised
   ``Conv2d.forward`` (im2col and one product), forward through the same two layers (target:
   the vectorised one at least 20x faster).

    python -m bench.conv [--rounds 5] [--threads 1] [--dtype float64]
"""
from __future__ import annotations

import numpy as np

from bench._timing import (arguments, cell, limit_threads, machine, median_times, ratio, table,
                           torch_available)
from course.datasets import load_digits
from minitorch_ref import nn

CHANNELS = (1, 16, 32)
BATCH = 64


def digits(dtype: type) -> np.ndarray:
    """The first 64 of the course's 8x8 digits, as images (64, 1, 8, 8) in [0, 1]."""
    return load_digits(dtype=dtype)[0][:BATCH].reshape(BATCH, 1, 8, 8)


def reference_layers(dtype: type) -> list:
    rng = np.random.default_rng(0)
    return [nn.Conv2d(c_in, c_out, 3, padding=1, rng=rng, dtype=dtype)
            for c_in, c_out in zip(CHANNELS, CHANNELS[1:])]


def reference_run(x: np.ndarray, layers: list, grad_output: np.ndarray):
    """Forward through both layers, then backward with ``grad_output``; dL/dx."""
    def run() -> np.ndarray:
        y = x
        for layer in layers:
            y = layer.forward(y)
        grad = grad_output
        for layer in reversed(layers):
            grad = layer.backward(grad)
        return grad
    return run


def torch_run(x: np.ndarray, layers: list, grad_output: np.ndarray):
    """The same two layers in PyTorch, with the reference's filters (PyTorch's layout)."""
    import torch

    convs = []
    for layer in layers:
        conv = torch.nn.Conv2d(layer.in_channels, layer.out_channels, 3, padding=1,
                               dtype=torch.from_numpy(x).dtype)
        with torch.no_grad():
            conv.weight.copy_(torch.from_numpy(layer.weight.data.transpose(1, 0, 2, 3).copy()))
            conv.bias.copy_(torch.from_numpy(layer.bias.data))
        convs.append(conv)
    model, upstream = torch.nn.Sequential(*convs), torch.from_numpy(grad_output)

    def run() -> np.ndarray:
        xt = torch.from_numpy(x).requires_grad_()
        model.zero_grad()
        model(xt).backward(upstream)
        return xt.grad.numpy()
    return run


def notebook_runs(x: np.ndarray, layers: list) -> dict:
    """Forward through the two layers with the notebook's solutions: the loops, the vectorised
    Conv2d (given the reference's filters)."""
    from autograder.mutants._solutions import solution

    naive, Conv2d = solution("conv2d_naive"), solution("Conv2d")
    vectorised = []
    for layer in layers:
        twin = Conv2d(layer.in_channels, layer.out_channels, 3, padding=1)
        twin.weight.data, twin.bias.data = layer.weight.data, layer.bias.data
        vectorised.append(twin)

    def loops() -> np.ndarray:
        y = x
        for layer in layers:
            y = naive(y, layer.weight.data, layer.bias.data, padding=1)
        return y

    def product() -> np.ndarray:
        y = x
        for layer in vectorised:
            y = layer.forward(y)
        return y
    return {"naive loops": loops, "vectorised": product}


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    args = parser.parse_args()
    threads = limit_threads(args.threads)
    dtype = np.dtype(args.dtype).type
    x, layers = digits(dtype), reference_layers(dtype)
    grad_output = np.random.default_rng(1).standard_normal((BATCH, CHANNELS[-1], 8, 8)).astype(dtype)
    contenders = {"reference": reference_run(x, layers, grad_output)}
    if torch_available():
        contenders["pytorch"] = torch_run(x, layers, grad_output)
    t = median_times(contenders, args.rounds)
    print(f"Conv2d 1->16->32, 3x3, padding 1, forward + backward on {BATCH} 8x8 digits, "
          f"{args.dtype}; median of {args.rounds} alternating rounds; {threads}. {machine()}")
    print(table(("contender", "seconds", "/ pytorch (target <= 3x)"),
                [(name, cell(t, name, fmt="{:.4f}"), ratio(t, name, "pytorch"))
                 for name in ("reference", "pytorch")]))
    rounds = max(1, args.rounds // 2)    # the loops take seconds: no warm-up, fewer rounds
    t = median_times(notebook_runs(x, layers), rounds, warmup=False)
    print(f"\nThe notebook's solutions, forward through the same layers; median of {rounds} "
          "alternating rounds.")
    print(table(("contender", "seconds", "/ vectorised (target >= 20x)"),
                [(name, cell(t, name, fmt="{:.4f}"), ratio(t, name, "vectorised"))
                 for name in ("naive loops", "vectorised")]))


if __name__ == "__main__":
    main()
