"""Checks of unit 15's ``LayerNorm``: the forward pass (each token's own mean and biased
variance over the last axis, eps inside the square root, the affine weight and bias) and the
backward pass (dL/dx with both mean terms, dL/dweight and dL/dbias summed over every leading
axis, accumulating until zero_grad).

Each builds the student's layer beside ``minitorch_ref.nn.LayerNorm`` with the same random weight
and bias; a wrong value is matched against the classic mistakes (unbiased variance, statistics
over the wrong axis, eps outside the root, a backward without the mean terms).
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import method
from autograder.checks._modules import (_fd_verdict, expect_accumulation,
                                        forward_pair, twins)
from autograder.registry import check
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import CheckFailure, expect
from minitorch_ref import nn

# (input shape, eps, scale, offset): (B, T, C), a plain batch, one feature pair, large values.
CASES = (((2, 3, 5), 1e-5, 1.0, 0.0), ((4, 6), 1e-5, 2.0, 3.0), ((1, 1, 2), 1e-5, 1.0, 0.0),
         ((3, 2, 4), 0.1, 0.5, 0.0), ((2, 2, 6), 1e-5, 1000.0, -500.0))


def _case(shape, eps, scale, offset, seed):
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.standard_normal(shape)
    return x, rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1]), rng.standard_normal(shape)


def _layers(LayerNorm, features: int, eps: float, weight: np.ndarray, bias: np.ndarray):
    student, reference = twins("LayerNorm", LayerNorm, nn.LayerNorm, features, eps=eps,
                               params=())
    reference.weight.data[...], reference.bias.data[...] = weight, bias
    for name in ("weight", "bias"):
        param = getattr(student, name, None)
        expect(param is not None, f"LayerNorm has no parameter '{name}' of shape ({features},).")
        param.data = getattr(reference, name).data.copy()
    return student, reference


def _normalised(x, eps, axis=-1, ddof=0, eps_outside=False):
    centred = x - x.mean(axis=axis, keepdims=True)
    std = x.std(axis=axis, keepdims=True, ddof=ddof)
    return centred / (std + eps if eps_outside else np.sqrt(std ** 2 + eps))


def _forward_signatures(x, eps, weight, bias):
    mistakes = {
        "unbiased": (_normalised(x, eps, ddof=1) if x.shape[-1] > 1 else None,
                     "the variance is the unbiased one (ddof=1): LayerNorm divides by C, "
                     "np.var's default (ddof=0)."),
        "wrong_axis": (_normalised(x, eps, axis=0) if x.shape[0] > 1 else None,
                       "the statistics were taken over the wrong axis (the batch, axis 0, as "
                       "BatchNorm does): LayerNorm normalises each token over its own features, "
                       "the last axis."),
        "eps_outside": (_normalised(x, eps, eps_outside=True),
                        "eps was added to the standard deviation: it goes inside the square root, "
                        "sqrt(var + eps)."),
    }
    return tuple(when(name, lambda g, e, m=m: close(g, m * weight + bias), message)
                 for name, (m, message) in mistakes.items() if m is not None)


@check
def layernorm_forward(LayerNorm):
    """LayerNorm(C, eps): weight ones and bias zeros of shape (C,) at construction; forward of
    (*, C) inputs gives (x - mean) / sqrt(var + eps) * weight + bias, mean and biased variance of
    each token over its last axis; (B, T, C) and (N, C) inputs, a token of two features, eps 0.1,
    values around -500 with spread 1000."""
    student = construct(LayerNorm, 4)
    for name, fill in (("weight", 1.0), ("bias", 0.0)):
        data = as_array(f"LayerNorm(4).{name}.data", getattr(getattr(student, name, None), "data", None))
        expect_close(f"LayerNorm(4).{name} at construction", data, np.full(4, fill),
                     "weight starts at ones and bias at zeros, as in PyTorch")
    for seed, (shape, eps, scale, offset) in enumerate(CASES):
        x, weight, bias, _ = _case(shape, eps, scale, offset, seed)
        student, reference = _layers(LayerNorm, shape[-1], eps, weight, bias)
        got, expected = forward_pair("LayerNorm", student, reference, x)
        expect_close(f"LayerNorm({shape[-1]}, eps={eps}).forward output", got, expected,
                     f"input of shape {shape}, random weight and bias",
                     _forward_signatures(x, eps, weight, bias))


HANDED = ("; your forward is wrong on it (its own cell), so backward was given the right "
          "normalized and inv_std, the names the skeleton saves them under")


@check
def layernorm_backward(LayerNorm):
    """backward(grad_output) returns dL/dx = r (g_hat - mean(g_hat) - x_hat mean(g_hat x_hat)),
    g_hat = grad_output * weight and r = 1 / sqrt(var + eps), and adds into weight.grad the sum
    of grad_output * x_hat and into bias.grad the sum of grad_output over every leading axis;
    two backward passes add up. Where the student's forward is wrong (its own cell), backward is
    given the right normalized and inv_std first."""
    for seed, (shape, eps, scale, offset) in enumerate(CASES):
        x, weight, bias, grad_output = _case(shape, eps, scale, offset, seed)
        where = f"input of shape {shape}, eps={eps}, random weight and bias"
        student, reference = _layers(LayerNorm, shape[-1], eps, weight, bias)
        signatures = (when("no_mean_terms", lambda g, e, r=reference: close(
            g, r.inv_std * grad_output * r.weight.data),
            "dL/dx misses the two mean terms: the mean and the variance depend on every "
            "feature, so dL/dx = r (g_hat - mean(g_hat) - x_hat mean(g_hat x_hat)), not r g_hat."),)
        _expect_gradients(student, reference, x, grad_output, where, signatures)
    x, weight, bias, grad_output = _case((2, 3, 4), 1e-5, 1.0, 0.0, 9)
    student, _ = _layers(LayerNorm, 4, 1e-5, weight, bias)
    once, _ = _layers(LayerNorm, 4, 1e-5, weight, bias)
    expect_accumulation("LayerNorm", student, once, x, grad_output, ("weight", "bias"),
                        "the gradients above")


def _expect_gradients(student, reference, x, grad_output, where, signatures) -> None:
    """dL/dx, dL/dweight and dL/dbias after a forward on x; where the student's forward is wrong,
    backward gets the reference's saved state instead, so that only the backward is judged."""
    got, expected = forward_pair("LayerNorm", student, reference, x, in_place=False)
    handed = not close(got, expected)
    if handed:
        student.normalized, student.inv_std = reference.normalized, reference.inv_std
    got = as_array("LayerNorm.backward return value (dL/dx)",
                   call("LayerNorm.backward", method(student, "backward"), grad_output.copy()))
    try:
        expect_close("LayerNorm.backward: dL/dx", got, reference.backward(grad_output.copy()),
                     where + (HANDED if handed else ""), signatures)
    except CheckFailure as failure:
        verdict = "" if handed else _fd_verdict("LayerNorm", student, x, grad_output, got)
        raise CheckFailure(str(failure) + verdict) from None
    for name in ("weight", "bias"):
        expect_close(f"LayerNorm.{name}.grad (dL/d{name})", getattr(getattr(student, name), "grad", None),
                     getattr(reference, name).grad, where + "; summed over every leading axis")
