"""Checks of the student's Linear: forward, dL/dx, dL/dW and dL/db, accumulation, init."""
from __future__ import annotations

import contextlib
import re
from typing import Iterator

import numpy as np

from autograder import verdicts
from autograder.checks._calls import method
from autograder.checks._modules import (
    CASES, Case, expect_accumulation, expect_forward, expect_input_grad,
    expect_param_grads, forward_pair, twins,
)
from course.testing.compare import as_array
from course.testing.diagnose import close, not_summed, transposed, when
from course.testing.failure import CheckFailure, expect, fail
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import nn as ref

PARAMS = ("weight", "bias")
# The cells that judge the bias, graded before dL/dx's (the forward's b, dL/db): a layer that
# raises with a bias is theirs to cost.
BIAS_CELLS = ("linear_forward", "linear_backward_params")
OUT = (2, 7, 2, 4)  # output sizes paired with CASES: non-square, and one square layer

def _reshaped(expected: np.ndarray) -> np.ndarray:
    """``expected`` transposed, then reshaped back: (grad_output.T @ X).reshape(W.shape)."""
    return expected.T.reshape(expected.shape)


WEIGHT_SIGNATURES = (
    transposed("dL/dW looks transposed. With Y = X @ W + b, dL/dW = X.T @ grad_output, "
               "of shape (in_features, out_features)."),
    when("reshaped", lambda g, e: close(g, _reshaped(e)) and not close(e, _reshaped(e)),
         "dL/dW has the right shape but its values are in the wrong places: it looks like "
         "(grad_output.T @ X).reshape(...). A reshape keeps the elements in their order, a "
         "transpose moves them: dL/dW = X.T @ grad_output."),
)
BIAS_SIGNATURES = (
    not_summed("dL/db was not summed over the batch: dL/db = grad_output.sum(axis=0), "
               "of shape (out_features,)."),
)
INPUT_SIGNATURES = (
    transposed("dL/dx looks transposed: dL/dx = grad_output @ W.T, of shape (N, in_features)."),
)


def _layers(Linear, bias: bool = True):
    for case, out in zip(CASES, OUT):
        student, reference = twins("Linear", Linear, ref.Linear, case.features, out, bias=bias,
                                   params=PARAMS, seed=case.seed)
        x, grad_output = case.inputs(out)
        yield case, student, reference, x, grad_output


@check
def linear_forward(Linear):
    """Y = X @ W + b on several shapes (batch 1, non-square), large inputs, and bias=False."""
    for case, student, reference, x, _ in _layers(Linear):
        bias = reference.bias.data
        signatures = (
            when("no_bias", lambda g, e, b=bias: close(g + b, e),
                 "the output is X @ W without the bias: add b (broadcast over the batch)."),
        )
        expect_forward("Linear", student, reference, x, case, signatures)
    large = Case(5, 3, seed=4, scale=1e3)
    student, reference = twins("Linear", Linear, ref.Linear, 3, 2, params=PARAMS, seed=4)
    expect_forward("Linear", student, reference, large.inputs(2)[0], large)
    for case, student, reference, x, _ in _layers(Linear, bias=False):
        expect(getattr(student, "bias", 0) is None, "Linear(..., bias=False).bias should be "
               "None, not a Parameter of zeros: a bias parameter would be listed, trained and "
               "printed as bias=True.")
        expect_forward("Linear(bias=False)", student, reference, x, case)


def _bias_free(Linear, case: Case, out: int):
    """Twins of the case's layer without a bias (the same weight: it is drawn first)."""
    return twins("Linear", Linear, ref.Linear, case.features, out, bias=False,
                 params=("weight",), seed=case.seed)


@check
def linear_backward_input(Linear):
    """dL/dx = grad_output @ W.T, returned by backward. dL/dx does not involve the bias: when
    the layer raises and a cell that judges its bias failed (``BIAS_CELLS``), dL/dx is judged
    on the same layer without a bias."""
    for (case, student, reference, x, grad_output), out in zip(_layers(Linear), OUT):
        try:
            expect_input_grad("Linear", student, reference, x, grad_output, case,
                              INPUT_SIGNATURES)
        except CheckFailure as failure:
            if not _bias_raised(Linear, failure):
                raise
            with _or_else(failure):
                expect_input_grad("Linear(bias=False)", *_bias_free(Linear, case, out), x,
                                  grad_output, case, INPUT_SIGNATURES)


@contextlib.contextmanager
def _or_else(failure: CheckFailure) -> Iterator[None]:
    """The block judges the layer without a bias; if its backward raises too, ``failure`` (the
    biased layer's) stands."""
    try:
        yield
    except CheckFailure as other:
        if _raised(other):
            raise failure from None
        raise


RAISED = re.compile(r"^Linear(\(bias=False\))?\.(forward|backward) raised ")


def _raised(failure: CheckFailure) -> bool:
    """Whether a failure is the student's forward or backward raising (not a wrong value)."""
    return RAISED.match(str(failure)) is not None


def _bias_raised(Linear, failure: CheckFailure) -> bool:
    """Whether ``failure`` is the layer raising where a cell that judges its bias has already
    failed (``autograder.verdicts``): the layer without a bias is then judged instead, a run
    that can narrow that verdict's excuse, never open one."""
    return _raised(failure) and any(verdicts.failed(Linear, cell) for cell in BIAS_CELLS)


def _bias_hint(failure: CheckFailure, n: int) -> str:
    """What a backward that raises only with a bias got wrong."""
    if "broadcast" in str(failure) and f"({n},)" in str(failure):
        return ("dL/db is summed over the wrong axis: grad_output has shape (N, out_features) "
                "and dL/db = grad_output.sum(axis=0), of shape (out_features,); summing over "
                "axis 1 gives one number per example, shape (N,).")
    return ("the same layer without a bias runs, so the bias gradient raised: dL/db = "
            "grad_output.sum(axis=0), of shape (out_features,).")


@check
def linear_backward_params(Linear):
    """dL/dW = X.T @ grad_output and dL/db = sum over the batch, stored in .grad."""
    for (case, student, reference, x, grad_output), out in zip(_layers(Linear), OUT):
        try:
            expect_param_grads("Linear", student, reference, x, grad_output, case,
                               {"weight": WEIGHT_SIGNATURES, "bias": BIAS_SIGNATURES})
        except CheckFailure as failure:
            if not _raised(failure):
                raise
            student, _ = _bias_free(Linear, case, out)
            with _or_else(failure):
                forward_pair("Linear", student, ref.Linear(case.features, out), x)
                call("Linear.backward", method(student, "backward"), grad_output.copy())
            fail(f"{failure}\n  Likely mistake: {_bias_hint(failure, len(x))}")


@check
def linear_grad_accumulates(Linear):
    """Two backward passes without zero_grad add their gradients (PyTorch's semantics): each
    .grad is twice the student's own gradient of one pass, right or wrong (when the layer
    raises where a cell that judges its bias failed, the weight's is judged on the layer
    without a bias)."""
    case, out = CASES[0], OUT[0]
    x, grad_output = case.inputs(out)
    student, once = (twins("Linear", Linear, ref.Linear, case.features, out, params=PARAMS,
                           seed=case.seed)[0] for _ in range(2))
    try:
        expect_accumulation("Linear", student, once, x, grad_output, PARAMS,
                            "linear_backward_params")
    except CheckFailure as failure:
        if not _bias_raised(Linear, failure):
            raise
        with _or_else(failure):
            expect_accumulation("Linear(bias=False)", _bias_free(Linear, case, out)[0],
                                _bias_free(Linear, case, out)[0], x, grad_output, PARAMS,
                                "linear_backward_params")
@check
def linear_init(Linear):
    """Weights and bias drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)), shape (in, out),
    with the rng given (the weight first, then the bias), cast to the dtype given."""
    _expect_statistics(Linear)
    _expect_rng_order(Linear)
    _expect_dtype(Linear)


def _expect_statistics(Linear) -> None:
    in_features, out_features = 400, 300
    layer = Linear(in_features, out_features)
    weight = as_array("Linear.weight.data", layer.weight.data, (in_features, out_features))
    bias = as_array("Linear.bias.data", layer.bias.data, (out_features,))
    bound = 1 / np.sqrt(in_features)
    for name, values in (("weight", weight), ("bias", bias)):
        expect(float(values.__abs__().max()) <= bound * (1 + 1e-9),
               f"Linear.{name} has values up to {float(values.__abs__().max()):.4g}; "
               f"PyTorch's init stays within 1/sqrt(in_features) = {bound:.4g}.")
    std = float(weight.std())
    expect(abs(std - bound / np.sqrt(3)) < 0.05 * bound,
           f"Linear.weight has standard deviation {std:.4g}; U(-{bound:.3g}, {bound:.3g}) "
           f"has {bound / np.sqrt(3):.4g}. Draw from a uniform distribution with that bound."
           + _init_hint(std, in_features))


def _draws(seed: int, shapes: tuple[tuple[int, ...], ...], bound: float) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-bound, bound, size=shape) for shape in shapes]


def _expect_rng_order(Linear) -> None:
    """Linear(5, 3, rng=default_rng(7)): the generator's next draws, the weight's first."""
    seed, bound = 7, 1 / np.sqrt(5)
    layer = call(f"Linear(5, 3, rng=np.random.default_rng({seed}))", Linear, 5, 3,
                 rng=np.random.default_rng(seed))
    weight = as_array("Linear.weight.data", layer.weight.data, (5, 3))
    bias = as_array("Linear.bias.data", layer.bias.data, (3,))
    expected = _draws(seed, ((5, 3), (3,)), bound)
    if close(weight, expected[0]) and close(bias, expected[1]):
        return
    swapped = _draws(seed, ((3,), (5, 3)), bound)
    hint = ("the bias is drawn before the weight: draw the weight first, then the bias, from "
            "the same rng" if close(weight, swapped[1]) and close(bias, swapped[0]) else
            "draw both from the rng you are given, rng.uniform(-bound, bound, size=shape), "
            "the weight first, then the bias")
    fail(f"Linear(5, 3, rng=np.random.default_rng({seed})) should hold that generator's first "
         f"draws: weight = rng.uniform(-b, b, size=(5, 3)), then bias = rng.uniform(-b, b, "
         f"size=3), b = 1/sqrt(5).\n  expected weight[0] {expected[0][0]}\n  got      "
         f"weight[0] {weight[0]}\n  Likely mistake: {hint}.")


def _expect_dtype(Linear) -> None:
    layer = call("Linear(4, 2, dtype=np.float32)", Linear, 4, 2, dtype=np.float32)
    for name in ("weight", "bias"):
        dtype = np.asarray(getattr(layer, name).data).dtype
        expect(dtype == np.float32, f"Linear(4, 2, dtype=np.float32).{name}.data has dtype "
               f"{dtype}: cast each drawn array with .astype(dtype).")


def _init_hint(std: float, in_features: int) -> str:
    """The likely mistake behind a uniform init of the wrong spread, if it is a known one."""
    wrong = 1 / in_features       # the bound without its square root
    if abs(std - wrong / np.sqrt(3)) < 0.05 * wrong:
        return (f"\n  Likely mistake: the bound is 1/in_features = {wrong:.3g}; it is "
                f"1/sqrt(in_features), the square root of what you have.")
    return ""
