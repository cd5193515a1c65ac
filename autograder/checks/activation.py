"""Checks of the elementwise activations: ReLU, LeakyReLU, Sigmoid, Tanh and GELU.
See ``_activation_cases`` for how an activation is graded."""
from __future__ import annotations

import numpy as np
from scipy import special

from autograder.checks._activation_cases import (
    BASIC, EXTREME, Family, Input, LARGE, Signatures, check_backward, check_backward_at_zero,
    check_float32, check_forward, overflow, reference_output,
)
from autograder.registry import check
from course.testing.diagnose import close, when
from minitorch_ref import nn as ref


# --------------------------------------------------------------------------- ReLU, LeakyReLU
def _mask_signatures(default_slope: float) -> Signatures:
    """ReLU (slope 0) / LeakyReLU backward: which wrong mask the gradient was multiplied by."""
    def signatures(x, g, kwargs):
        slope = kwargs.get("negative_slope", default_slope)
        below = "0" if slope == 0 else "negative_slope * grad_output"
        why = ("ReLU's output is never negative, so `output >= 0` is always true; build the "
               "mask from the saved input, `x > 0`") if slope == 0 else "use negative_slope there"
        return (
            when("one_at_zero", lambda got, e: close(got, g * np.where(x >= 0, 1.0, slope)),
                 f"at exactly x = 0 dL/dx should be {below} (PyTorch's convention), but your "
                 "mask lets grad_output through there. Use `x > 0`, not `x >= 0`."),
            when("always_one", lambda got, e: close(got, g),
                 f"dL/dx equals grad_output everywhere, also for negative inputs, where it should "
                 f"be {below}: your mask is always 1 ({why})."),
            when("inverted", lambda got, e: close(got, g * (x <= 0)),
                 "the mask is inverted: grad_output goes through where x <= 0 instead of x > 0."),
            when("no_slope", lambda got, e: close(got, g * (x > 0)),
                 "dL/dx is 0 for negative inputs: backward forgot negative_slope; where x <= 0, "
                 "dL/dx = negative_slope * grad_output."),
            when("fixed_slope", lambda got, e: slope != 0.01 and close(
                got, g * np.where(x > 0, 1.0, 0.01)), FIXED_SLOPE),
        )
    return signatures


FIXED_SLOPE = ("the slope for negative inputs is hard-coded to 0.01 whatever negative_slope was "
               "given: store the constructor argument (self.negative_slope) and use it.")


def _leaky_forward_signatures(x, kwargs):
    slope = kwargs.get("negative_slope", 0.01)
    return (
        when("fixed_slope", lambda got, e: slope != 0.01 and close(
            got, np.where(x > 0, x, 0.01 * x)), FIXED_SLOPE),
        when("relu", lambda got, e: close(got, np.maximum(x, 0)),
             "the output is 0 for negative inputs, like ReLU: LeakyReLU returns "
             "negative_slope * x there."),
    )


RELU = Family("ReLU", ref.ReLU, (({}, BASIC + LARGE),), backward_signatures=_mask_signatures(0.0))


LEAKY_RELU = Family("LeakyReLU", ref.LeakyReLU,
                    (({}, BASIC + LARGE), ({"negative_slope": 0.2}, BASIC[:2] + (EXTREME,))),
                    _leaky_forward_signatures, _mask_signatures(0.01))


def _sigmoid_forward_signatures(x, kwargs):
    return (
        overflow("the output is inf or NaN for large |x|: exp overflows for arguments above "
                  "~709 (np.exp(1000) is inf, and inf / inf is NaN). Use 1 / (1 + exp(-x)) for "
                  "x >= 0 and exp(x) / (1 + exp(x)) for x < 0, so exp never sees a large value."),
        when("sign", lambda got, e: close(got, 1 - e),
             "the output is 1 - sigmoid(x) = sigmoid(-x): the sign in exp(-x) is wrong."),
    )


def _sigmoid_backward_signatures(x, g, kwargs):
    y = special.expit(x)
    return (
        when("of_input", lambda got, e: close(got, g * x * (1 - x)),
             "dL/dx = grad_output * x * (1 - x) uses the input x; the derivative is "
             "sigmoid'(x) = y * (1 - y) with the saved output y = sigmoid(x)."),
        when("no_one_minus", lambda got, e: close(got, g * y),
             "dL/dx = grad_output * y: the (1 - y) factor of sigmoid' = y * (1 - y) is missing."),
    )


def _tanh_forward_signatures(x, kwargs):
    return (overflow("the output is inf or NaN for large |x|: the exponentials in "
                      "(e^x - e^-x) / (e^x + e^-x) overflow. Use np.tanh."),)


def _tanh_backward_signatures(x, g, kwargs):
    return (when("of_input", lambda got, e: close(got, g * (1 - x**2)),
                 "dL/dx = grad_output * (1 - x**2) uses the input x; tanh'(x) = 1 - y**2 "
                 "with the saved output y = tanh(x)."),)


SIGMOID = Family("Sigmoid", ref.Sigmoid, (({}, BASIC + LARGE),),
                 _sigmoid_forward_signatures, _sigmoid_backward_signatures,
                 stable="evaluate exp only at non-positive numbers, e = np.exp(-np.abs(x)), then "
                        "1 / (1 + e) where x >= 0 and e / (1 + e) where x < 0. np.where(c, a, "
                        "b) computes both a and b on the whole array, so an exp(x) or exp(-x) in "
                        "either branch overflows somewhere.")


TANH = Family("Tanh", ref.Tanh, (({}, BASIC + LARGE),),
              _tanh_forward_signatures, _tanh_backward_signatures,
              stable="use np.tanh instead of exponentials.")


# --------------------------------------------------------------------------- GELU
WRONG_GELU = {
    "none": "this is the tanh approximation, but approximate='none' (the default) asks for "
            "the exact GELU x * Phi(x), with Phi(x) = (1 + erf(x / sqrt(2))) / 2.",
    "tanh": "this is the exact GELU x * Phi(x), but approximate='tanh' asks for "
            "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).",
}


PRODUCT_RULE = {
    "none": "Phi(x) + x * phi(x), with phi(x) = exp(-x**2 / 2) / sqrt(2 * pi)",
    "tanh": "0.5 * (1 + t) + 0.5 * x * (1 - t**2) * sqrt(2 / pi) * (1 + 3 * 0.044715 * x**2)",
}


def _gelu_signatures(x, g, kwargs):
    approximate = kwargs.get("approximate", "none")
    other = reference_output(ref.GELU, {"approximate": "tanh" if approximate == "none" else "none"},
                       x, g)
    if g is None:
        first_term = None
    elif approximate == "none":
        first_term = g * special.ndtr(x)
    else:
        first_term = g * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return (
        when("other_approximation", lambda got, e: close(got, other), WRONG_GELU[approximate]),
        when("product_rule", lambda got, e: first_term is not None and close(got, first_term),
             "dL/dx misses the second term of the product rule: GELU is x times a function "
             f"of x, so its derivative is {PRODUCT_RULE[approximate]}."),
    )


GELU_INPUTS = BASIC + (Input((4, 5), seed=7, scale=3.0),) + LARGE


GELU_FAMILY = Family("GELU", ref.GELU,
                     (({}, GELU_INPUTS), ({"approximate": "tanh"}, GELU_INPUTS)),
                     lambda x, kwargs: _gelu_signatures(x, None, kwargs), _gelu_signatures)


# --------------------------------------------------------------------------- the checks
@check
def relu_forward(ReLU):
    """max(0, x): batch 1, a 3-d input, entries exactly 0 and +-1000."""
    check_forward(RELU, ReLU)


@check
def relu_backward(ReLU):
    """dL/dx = grad_output where x > 0, else 0, returned by backward."""
    check_backward(RELU, ReLU)


@check
def relu_float32(ReLU):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(RELU, ReLU)


@check
def relu_backward_at_zero(ReLU):
    """Edge case: dL/dx is 0 at exactly x = 0 (as in PyTorch) and below, grad_output above."""
    check_backward_at_zero(RELU, ReLU)


@check
def leaky_relu_forward(LeakyReLU):
    """x where x > 0, else negative_slope * x; default slope 0.01 and negative_slope=0.2."""
    check_forward(LEAKY_RELU, LeakyReLU)


@check
def leaky_relu_backward(LeakyReLU):
    """dL/dx = grad_output where x > 0, else negative_slope * grad_output."""
    check_backward(LEAKY_RELU, LeakyReLU)


@check
def leaky_relu_float32(LeakyReLU):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(LEAKY_RELU, LeakyReLU)


@check
def leaky_relu_backward_at_zero(LeakyReLU):
    """Edge case: dL/dx = negative_slope * grad_output at exactly x = 0 (PyTorch's) and below."""
    check_backward_at_zero(LEAKY_RELU, LeakyReLU)


@check(hears=("warnings",))
def sigmoid_forward(Sigmoid):
    """1 / (1 + exp(-x)), finite and exact for x = +-1000 (graded by the values; the
    overflow warnings are the visible test's lesson, and explain a failure here)."""
    check_forward(SIGMOID, Sigmoid)


@check
def sigmoid_backward(Sigmoid):
    """dL/dx = grad_output * y * (1 - y), y the saved output."""
    check_backward(SIGMOID, Sigmoid)


@check
def sigmoid_float32(Sigmoid):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(SIGMOID, Sigmoid)


@check(hears=("warnings",))
def tanh_forward(Tanh):
    """tanh(x), finite and exact for x = +-1000 (graded by the values)."""
    check_forward(TANH, Tanh)


@check
def tanh_backward(Tanh):
    """dL/dx = grad_output * (1 - y**2), y the saved output."""
    check_backward(TANH, Tanh)


@check
def tanh_float32(Tanh):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(TANH, Tanh)


@check
def gelu_forward(GELU):
    """x * Phi(x) for approximate='none' (the default) and the tanh formula for 'tanh'."""
    check_forward(GELU_FAMILY, GELU)


@check
def gelu_backward(GELU):
    """dL/dx for both approximations (the product rule on x times Phi(x) or its tanh form)."""
    check_backward(GELU_FAMILY, GELU)


@check
def gelu_float32(GELU):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(GELU_FAMILY, GELU)
