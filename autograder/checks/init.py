"""Checks of unit 3's initialisers, ``xavier_normal_`` and ``kaiming_normal_``.

A statistical check must pass every correct solution and fail the wrong ones, so
its tolerances come from the sampling distribution, not from taste: for n draws
from N(0, s**2) the sample standard deviation is s within s/sqrt(2n), the mean 0
within s/sqrt(n), and the share beyond 2s is 4.55% within sqrt(p(1 - p)/n). With
n = 120,000 and six of those standard errors, a right answer fails about once in
10**8 draws, and a standard deviation off by 2% or more never passes. The seeds
are fixed anyway, so a grade never changes from one run to the next.

Each initialiser fills a ``Parameter`` (the student's class, when the hidden cell
passes it) or a plain array in place and returns it; a wrong spread is compared
with the spread each classic mistake gives, to name it.
"""
from __future__ import annotations

import math

import numpy as np

from course.testing.compare import as_array
from course.testing.failure import expect, fail
from autograder.checks._calls import attribute, kept_attribute, kept_call, placed, type_name
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import nn

SHAPE = (400, 300)  # (fan_in, fan_out): 120,000 draws, and fan_in != fan_out
SIGMAS = 6.0
TAIL = math.erfc(2 / math.sqrt(2))  # P(|z| > 2) = 4.55% for a standard normal


def _fresh(init, Parameter: type | None, plain: bool, shape: tuple[int, int]):
    """A zero tensor for ``init``: a plain array, or a Parameter (the student's class or the
    reference's). Also the array itself (a handle, graded from outside) and a reader of it."""
    if plain:
        tensor, read = placed(np.zeros(shape), init)
        return tensor, tensor, read
    param = nn.Parameter(np.zeros(shape)) if Parameter is None else call(
        f"Parameter(np.zeros({shape}))", Parameter, np.zeros(shape))
    data, read = kept_attribute("Parameter.data", param, "data")
    as_array("Parameter.data", read(), shape)
    return param, data, read


def _fill(what: str, init, Parameter: type | None, seed: int, plain: bool = False,
          shape: tuple[int, int] = SHAPE, **kwargs) -> np.ndarray:
    """Run ``init`` on a fresh tensor; fail unless it fills it in place and returns it."""
    tensor, array, read = _fresh(init, Parameter, plain, shape)
    result, _ = kept_call(what, init, tensor, rng=np.random.default_rng(seed), **kwargs)
    expect(result is tensor, f"{what} returned {type_name(result)}; return the tensor it was "
           "given (PyTorch's initialisers return their argument, so calls can be chained).")
    if not plain:
        expect(attribute(what, tensor, "data") is array, f"{what} replaced weight.data by a "
               "new array; fill the existing one in place: data[...] = ... (a model may hold it).")
    values = as_array(f"the values {what} wrote", read(), shape)
    expect(bool(values.any()), f"{what} left the array at zero: write into it in place, "
           "data[...] = rng.normal(...).")
    again, _, read_again = _fresh(init, Parameter, plain, shape)
    call(what, init, again, rng=np.random.default_rng(seed), **kwargs)
    expect(np.array_equal(read_again(), values), f"{what} with the same "
           "rng=np.random.default_rng(seed) gave different values: it ignores the rng argument. "
           "Draw with rng.normal(...).")
    return values


def expect_normal(what: str, values: np.ndarray, std: float,
                  mistakes: dict[str, float]) -> None:
    """The values look like N(0, std**2); a wrong spread is matched with ``mistakes``
    (message: the standard deviation that mistake gives)."""
    n = values.size
    got = float(values.std())
    tolerance = SIGMAS / math.sqrt(2 * n)
    if abs(got / std - 1) > tolerance:
        for message, wrong in mistakes.items():
            if abs(got / wrong - 1) <= tolerance < abs(wrong / std - 1) / 2:
                fail(f"{what}: the standard deviation is {got:.4g}, expected {std:.4g}.\n"
                     f"  Likely mistake: {message}")
        fail(f"{what}: the standard deviation is {got:.4g}, expected {std:.4g} "
             f"(+-{tolerance:.1%} allows for sampling).")
    mean = float(values.mean())
    expect(abs(mean) <= SIGMAS * std / math.sqrt(n), f"{what}: the mean is {mean:.3g}, expected 0 "
           f"(+-{SIGMAS * std / math.sqrt(n):.2g}).")
    tails = float((np.abs(values) > 2 * std).mean())
    expect(abs(tails - TAIL) <= SIGMAS * math.sqrt(TAIL * (1 - TAIL) / n),
           f"{what}: {tails:.2%} of the values lie beyond 2 standard deviations; a normal "
           f"distribution has {TAIL:.2%}. The spread is right but the shape is not: draw from "
           "a normal distribution (rng.normal), not a uniform one.")


def _xavier_mistakes(std: float, gain: float, fan_in: int, fan_out: int) -> dict[str, float]:
    return {
        "the gain argument is ignored: std = gain * sqrt(2 / (fan_in + fan_out)).":
            std / gain if gain != 1 else -1.0,
        "the fan is fan_in alone; Xavier averages both: sqrt(2 / (fan_in + fan_out)).":
            gain * math.sqrt(1 / fan_in),
        "the fan is fan_out alone; Xavier averages both: sqrt(2 / (fan_in + fan_out)).":
            gain * math.sqrt(1 / fan_out),
        "the variance was passed where numpy expects the standard deviation: "
        "rng.normal(0.0, std), not rng.normal(0.0, std**2).": std**2,
    }


@check
def xavier_normal_init(xavier_normal_, Parameter=None):
    """N(0, (gain * sqrt(2 / (fan_in + fan_out)))**2), in place, returns its argument;
    a Parameter and a plain array, gain 1 and 5/3."""
    cases = ((SHAPE, 1.0, False), (SHAPE, 5 / 3, False), ((600, 200), 1.0, True))
    for seed, (shape, gain, plain) in enumerate(cases):
        what = (f"xavier_normal_(a plain {shape} array)" if plain else
                f"xavier_normal_(weight of shape {shape}, gain={gain:.4g})")
        values = _fill(what, xavier_normal_, Parameter, seed, plain, shape, gain=gain)
        std = gain * math.sqrt(2 / sum(shape))
        expect_normal(what, values, std, _xavier_mistakes(std, gain, *shape))


def _kaiming_mistakes(std: float, kwargs: dict) -> dict[str, float]:
    fan_in, fan_out = SHAPE
    fan = fan_out if kwargs.get("mode") == "fan_out" else fan_in
    slope = kwargs.get("a", 0.0)
    return {
        "mode is ignored: mode='fan_out' divides by sqrt(fan_out), the number of columns.":
            std * math.sqrt(fan / fan_in),
        "fan_in and fan_out are swapped: our weights are (in_features, out_features), so "
        "fan_in = shape[0] and fan_out = shape[1].":
            std * math.sqrt(fan / (fan_in + fan_out - fan)),
        "the negative slope a is ignored: the gain of a leaky ReLU is sqrt(2 / (1 + a**2)); "
        "use calculate_gain(nonlinearity, a).": math.sqrt(2 / fan) if slope else -1.0,
        "the nonlinearity is ignored (the gain is always sqrt(2)); use "
        "calculate_gain(nonlinearity, a).": math.sqrt(2 / fan),
        "std = gain * sqrt(fan); divide: std = gain / sqrt(fan).": std * fan,
        "the variance was passed where numpy expects the standard deviation: "
        "rng.normal(0.0, std), not rng.normal(0.0, std**2).": std**2,
    }


KAIMING_CASES = (
    ({}, math.sqrt(2 / SHAPE[0])),
    ({"nonlinearity": "relu"}, math.sqrt(2 / SHAPE[0])),
    ({"mode": "fan_out"}, math.sqrt(2 / SHAPE[1])),
    ({"nonlinearity": "tanh"}, 5 / 3 / math.sqrt(SHAPE[0])),
    ({"a": 0.5}, math.sqrt(2 / 1.25 / SHAPE[0])),
)


@check
def kaiming_normal_init(kaiming_normal_, Parameter=None):
    """N(0, (gain / sqrt(fan))**2) for the defaults, relu, mode='fan_out', tanh and a=0.5;
    in place, returns its argument."""
    for seed, (kwargs, std) in enumerate(KAIMING_CASES):
        shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        what = f"kaiming_normal_(weight of shape {SHAPE}{', ' + shown if shown else ''})"
        values = _fill(what, kaiming_normal_, Parameter, 10 + seed, **kwargs)
        expect_normal(what, values, std, _kaiming_mistakes(std, kwargs))
