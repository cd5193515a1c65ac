"""Checks of Softmax and LogSoftmax: values, the Jacobian-vector product, stability and the
axis. See ``_activation_cases`` for how an activation is graded."""
from __future__ import annotations

import numpy as np

from autograder.checks._activation_cases import (
    BASIC, EXTREME, Family, Input, LARGE, check_backward, check_float32, check_forward,
    overflow, reference_output,
)
from autograder.registry import check
from course.testing._trusted import asarray
from course.testing.diagnose import Signature, close, finite, when
from minitorch_ref import nn as ref


# --------------------------------------------------------------------------- Softmax, LogSoftmax
OVERFLOW = ("the output is inf or NaN for large logits: exp overflows (np.exp(1000) is inf). "
            "Subtract the maximum along dim first, x - x.max(axis=dim, keepdims=True): the "
            "result does not change, and exp then only sees values <= 0.")


def _axis_signatures(cls: type, x, g, kwargs, quantity: str) -> tuple[Signature, ...]:
    """The result of reducing along another axis, or over the whole array."""
    dim = kwargs.get("dim", -1)
    signatures = []
    for axis in [a for a in range(x.ndim) if a != dim % x.ndim] + [None]:
        wrong = reference_output(cls, {"dim": axis}, x, g)
        where = "over the whole array" if axis is None else f"along axis {axis}"
        signatures.append(when(f"axis_{axis}", lambda got, e, wrong=wrong: close(got, wrong),
                               f"{quantity} is computed {where} instead of along dim={dim}: "
                               "reduce (max, sum) with axis=self.dim, keepdims=True."))
    return tuple(signatures)


def _log_underflow(got, expected) -> bool:
    """Non-finite exactly where the softmax rounds to 0 (log-probabilities below -700)."""
    got = asarray(got, dtype=float)
    bad = ~(got.__abs__() < float("inf"))
    return finite(expected) and bool(bad.any()) and bool((expected[bad] < -700).all())


def _softmax_forward_signatures(x, kwargs):
    return (overflow(OVERFLOW),) + _axis_signatures(ref.Softmax, x, None, kwargs, "softmax")


def _softmax_backward_signatures(x, g, kwargs):
    y = reference_output(ref.Softmax, kwargs, x)
    return (
        when("diagonal", lambda got, e: close(got, g * y * (1 - y)),
             "dL/dx = grad_output * y * (1 - y) uses only the diagonal of the softmax Jacobian; "
             "every output depends on every input along dim: "
             "dL/dx = y * (g - sum(g * y, axis=dim, keepdims=True))."),
    ) + _axis_signatures(ref.Softmax, x, g, kwargs, "dL/dx")


def _log_softmax_forward_signatures(x, kwargs):
    return (
        when("log_of_softmax", _log_underflow,
             "-inf where a logit is far below the largest: log(softmax(x)) rounds the softmax "
             "to 0 there and log(0) = -inf. Compute the log directly: (x - m) - "
             "log(sum(exp(x - m), axis=dim, keepdims=True)), m = x.max(axis=dim, keepdims=True)."),
        overflow(OVERFLOW),
    ) + _axis_signatures(ref.LogSoftmax, x, None, kwargs, "log_softmax")


def _log_softmax_backward_signatures(x, g, kwargs):
    dim = kwargs.get("dim", -1)
    y = reference_output(ref.LogSoftmax, kwargs, x)
    total = g.sum(axis=dim, keepdims=True)
    return (
        when("no_exp", lambda got, e: close(got, g - y * total),
             "dL/dx = g - output * sum(g) uses the log-probabilities that forward returned; "
             "the softmax is exp(output): "
             "dL/dx = g - exp(output) * sum(g, axis=dim, keepdims=True)."),
        when("diagonal", lambda got, e: close(got, g * (1 - np.exp(y))),
             "dL/dx = g * (1 - softmax) uses only the diagonal of the Jacobian; every output "
             "depends on every input along dim: "
             "dL/dx = g - softmax * sum(g, axis=dim, keepdims=True)."),
    ) + _axis_signatures(ref.LogSoftmax, x, g, kwargs, "dL/dx")


SOFTMAX_VARIANTS = (({}, BASIC + LARGE),
                    ({"dim": 0}, (Input((4, 3)), Input((3, 5), seed=1), EXTREME)),
                    ({"dim": 1}, (Input((2, 3, 4), seed=3),)))


SOFTMAX = Family("Softmax", ref.Softmax, SOFTMAX_VARIANTS,
                 _softmax_forward_signatures, _softmax_backward_signatures,
                 stable="subtract the maximum along dim before exp, so that exp only sees "
                        "values <= 0 and the sum is at least 1.")


LOG_SOFTMAX = Family("LogSoftmax", ref.LogSoftmax, SOFTMAX_VARIANTS,
                     _log_softmax_forward_signatures, _log_softmax_backward_signatures,
                     stable="compute (x - m) - log(sum(exp(x - m), axis=dim, keepdims=True)) "
                            "with m = x.max(axis=dim, keepdims=True): exp then only sees values "
                            "<= 0 and log a sum of at least 1; never take the log of a softmax.")


@check(hears=("warnings",))
def softmax_forward(Softmax):
    """exp(x) / sum(exp(x)) along dim (-1, 0, and 1 of a 3-d input), stable for logits ~1000
    (finite and exact)."""
    check_forward(SOFTMAX, Softmax)


@check
def softmax_backward(Softmax):
    """dL/dx = y * (g - sum(g * y, dim)): the full Jacobian-vector product."""
    check_backward(SOFTMAX, Softmax)


@check
def softmax_float32(Softmax):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(SOFTMAX, Softmax)


@check(hears=("warnings",))
def log_softmax_forward(LogSoftmax):
    """x - logsumexp(x) along dim, finite and exact where the softmax underflows (gaps of
    ~1000)."""
    check_forward(LOG_SOFTMAX, LogSoftmax)


@check
def log_softmax_backward(LogSoftmax):
    """dL/dx = g - softmax(x) * sum(g, dim)."""
    check_backward(LOG_SOFTMAX, LogSoftmax)


