"""The check of Conv2d's constructor: the weight's layout and shape, PyTorch's init, the
generator's draws in order (the weight first, then the bias), the dtype, and bias=False.

As unit 03's ``linear_init``: ``weight`` ``(C, O, k, k)`` and ``bias`` ``(O,)`` from
``U(-1/sqrt(C k k), 1/sqrt(C k k))``, drawn with the ``rng`` given and cast to ``dtype``.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._conv_layouts import torch_weight, torch_weight_message
from autograder.checks.linear import _draws
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import as_array
from course.testing.diagnose import close
from course.testing.failure import expect, fail


def _built(what: str, Conv2d, *args, **kwargs):
    """``Conv2d(*args, **kwargs)`` and its weight and bias arrays (bias None if it has none)."""
    layer = call(what, Conv2d, *args, **kwargs)
    weight = as_array(f"{what}.weight.data", getattr(getattr(layer, "weight", None), "data", None))
    bias = getattr(layer, "bias", None)
    return layer, weight, None if bias is None else as_array(f"{what}.bias.data", bias.data)


def _expect_shapes(Conv2d) -> None:
    what = "Conv2d(3, 5, 2)"
    _, weight, bias = _built(what, Conv2d, 3, 5, 2)
    if torch_weight(weight.shape, (3, 5, 2, 2)):
        fail(torch_weight_message((3, 5, 2, 2)))
    expect(weight.shape == (3, 5, 2, 2), f"{what}.weight has shape {weight.shape}, expected "
           "(3, 5, 2, 2) = (in_channels, out_channels, K, K).")
    expect(bias is not None and bias.shape == (5,), f"{what}.bias should be a Parameter of "
           f"shape (5,) = (out_channels,), got {None if bias is None else bias.shape}.")
    layer, _, _ = _built("Conv2d(3, 5, 2, bias=False)", Conv2d, 3, 5, 2, bias=False)
    expect(getattr(layer, "bias", 0) is None, "Conv2d(3, 5, 2, bias=False).bias should be None.")


def _expect_statistics(Conv2d) -> None:
    """Conv2d(8, 64, 3): 4608 weights, within the bound, with a uniform's spread."""
    _, weight, bias = _built("Conv2d(8, 64, 3)", Conv2d, 8, 64, 3)
    bound = 1 / np.sqrt(8 * 3 * 3)
    for name, values in (("weight", weight), ("bias", bias)):
        top = float(values.__abs__().max())
        expect(top <= bound * (1 + 1e-9), f"Conv2d(8, 64, 3).{name} has values up to {top:.4g}; "
               f"PyTorch's init stays within 1/sqrt(C*K*K) = 1/sqrt(72) = {bound:.4g}."
               + (" Likely mistake: the bound is 1/sqrt(in_channels); the fan-in of a filter "
                  "is C*K*K, every weight it has." if top > 2 * bound else ""))
    std = float(weight.std())
    expect(abs(std - bound / np.sqrt(3)) < 0.05 * bound,
           f"Conv2d(8, 64, 3).weight has standard deviation {std:.4g}; U(-{bound:.3g}, "
           f"{bound:.3g}) has {bound / np.sqrt(3):.4g}. Draw from a uniform distribution with "
           "that bound, 1/sqrt(C*K*K).")


def _expect_rng_order(Conv2d) -> None:
    """Conv2d(2, 3, 2, rng=default_rng(7)): the generator's next draws, the weight's first."""
    seed, bound, shapes = 7, 1 / np.sqrt(2 * 2 * 2), ((2, 3, 2, 2), (3,))
    what = f"Conv2d(2, 3, 2, rng=np.random.default_rng({seed}))"
    _, weight, bias = _built(what, Conv2d, 2, 3, 2, rng=np.random.default_rng(seed))
    expected = _draws(seed, shapes, bound)
    if close(weight, expected[0]) and bias is not None and close(bias, expected[1]):
        return
    swapped = _draws(seed, shapes[::-1], bound)
    hint = ("the bias is drawn before the weight: draw the weight first, then the bias"
            if bias is not None and close(weight, swapped[1]) and close(bias, swapped[0]) else
            "draw both from the rng you are given, rng.uniform(-bound, bound, size=shape), the "
            "weight first, then the bias")
    fail(f"{what} should hold that generator's first draws: weight = rng.uniform(-b, b, size=(2, "
         f"3, 2, 2)), then bias = rng.uniform(-b, b, size=3), b = 1/sqrt(8).\n  Likely mistake: "
         f"{hint}.")


def _expect_dtype(Conv2d) -> None:
    what = "Conv2d(2, 3, 2, dtype=np.float32)"
    _, weight, bias = _built(what, Conv2d, 2, 3, 2, dtype=np.float32)
    for name, values in (("weight", weight), ("bias", bias)):
        expect(values.dtype == np.float32, f"{what}.{name}.data has dtype {values.dtype}: cast "
               "each drawn array with .astype(dtype).")


@check
def conv2d_init(Conv2d):
    """weight (C, O, K, K) and bias (O,) (None with bias=False) from U(+-1/sqrt(C*K*K)), drawn
    with the rng given, the weight first, cast to the dtype given."""
    _expect_shapes(Conv2d)
    _expect_statistics(Conv2d)
    _expect_rng_order(Conv2d)
    _expect_dtype(Conv2d)
