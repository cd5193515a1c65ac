"""Checks of the activations and shape modules: ReLU, LeakyReLU, Sigmoid, Tanh, GELU,
Softmax, LogSoftmax, Identity and Flatten.

Every class has a forward check (batch 1, a 3-d input, entries exactly 0 and up to
+-1000, float64 kept float64) and a backward check (dL/dx against the reference, with
the finite-difference verdict); the activations have a float32 check (output and dL/dx
stay float32, as in PyTorch), and ReLU and LeakyReLU an edge-case check of the gradient
at exactly 0 and below it. The ``*_signatures``
functions recognise the classic bugs of each class from the wrong array.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import special

from course.testing._trusted import asarray
from autograder.checks._modules import expect_forward, expect_input_grad, forward_pair, twins
from course.testing.compare import expect_close
from course.testing.diagnose import Signature, close, finite, when
from course.testing.failure import fail
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import nn as ref


@dataclass(frozen=True)
class Input:
    """A test input: standard normal values (times ``scale``, plus ``offset``), or ``values``."""

    shape: tuple[int, ...]
    seed: int = 0
    scale: float = 1.0
    offset: float = 0.0
    values: tuple[float, ...] = ()
    dtype: str = "float64"
    note: str = ""

    def x(self) -> np.ndarray:
        if self.values:
            return np.array(self.values, dtype=self.dtype).reshape(self.shape)
        x = self.offset + self.scale * np.random.default_rng(self.seed).standard_normal(self.shape)
        return x.astype(self.dtype)

    def grad(self, shape: tuple[int, ...]) -> np.ndarray:
        """An upstream gradient dL/dY of the output's ``shape``."""
        return np.random.default_rng(self.seed + 1000).standard_normal(shape).astype(self.dtype)

    def __str__(self) -> str:
        parts = [f"input of shape {self.shape}", self.note,
                 self.dtype if self.dtype != "float64" else "",
                 f"values ~{self.scale:g}" if self.scale != 1 else "",
                 f"values near {self.offset:g}" if self.offset else ""]
        return ", ".join(part for part in parts if part)


BASIC = (Input((4, 3)), Input((1, 5), seed=1), Input((7, 2), seed=2), Input((2, 3, 4), seed=3))
EXTREME = Input((2, 5), values=(-1000, -50, -1, -1e-3, 1, 50, 1000, 1e-3, -20, 20),
                note="entries up to +-1000")
LARGE = (EXTREME, Input((3, 4), seed=4, scale=1e3), Input((3, 4), seed=5, offset=1e3))
ZEROS = Input((3, 4), values=(-2, 0, 1.5, -0.0, 0, 3, -1e-12, 1e-12, 0, -5, 2, 0),
              note="entries exactly 0")
FLOAT32 = Input((3, 4), seed=6, scale=3.0, dtype="float32")
FLOAT32_TOL = {"rtol": 1e-4, "atol": 1e-6}

Signatures = Callable[..., tuple[Signature, ...]]


def _none(*args) -> tuple[Signature, ...]:
    return ()


@dataclass(frozen=True)
class Family:
    """A class under test: its reference, constructor arguments with their inputs, and
    the signatures of its bugs, ``forward_signatures(x, kwargs)`` and
    ``backward_signatures(x, grad_output, kwargs)``."""

    name: str
    reference: type
    variants: tuple[tuple[dict, tuple[Input, ...]], ...]
    forward_signatures: Signatures = _none
    backward_signatures: Signatures = _none


def _reference(cls: type, kwargs: dict, x: np.ndarray, grad: np.ndarray | None = None):
    """The reference's output on ``x``, or its dL/dx for ``grad`` if given."""
    module = cls(**kwargs)
    y = module.forward(x.copy())
    return y if grad is None else module.backward(grad.copy())


def _twins(family: Family, cls: type, kwargs: dict, inputs: tuple[Input, ...]):
    """For each input: (name, input, student object, reference object, x)."""
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    what = f"{family.name}({shown})" if shown else family.name
    for inp in inputs:
        student, reference = twins(what, cls, family.reference, **kwargs)
        yield what, inp, student, reference, inp.x()


def check_forward(family: Family, cls: type, extra: tuple[Input, ...] = (ZEROS,)) -> None:
    """The output of every variant on its inputs (and ``extra``), in the input's dtype."""
    for kwargs, inputs in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, inputs + extra):
            expect_forward(what, student, reference, x, inp, family.forward_signatures(x, kwargs))


def check_backward(family: Family, cls: type, inputs: tuple[Input, ...] = (),
                   fd: bool = True) -> None:
    """dL/dx of every variant on its inputs (or on ``inputs``), against the reference's."""
    for kwargs, default in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, inputs or default):
            grad = inp.grad(_reference(family.reference, kwargs, x).shape)
            signatures = family.backward_signatures(x, grad, kwargs)
            expect_input_grad(what, student, reference, x, grad, inp, signatures, fd)


def check_float32(family: Family, cls: type) -> None:
    """A float32 input: the output and dL/dx are right (to float32 precision) and float32."""
    for kwargs, _ in family.variants:
        for what, inp, student, reference, x in _twins(family, cls, kwargs, (FLOAT32,)):
            got, expected = forward_pair(what, student, reference, x)
            expect_close(f"{what}.forward output", got, expected, str(inp),
                         family.forward_signatures(x, kwargs), **FLOAT32_TOL)
            _expect_dtype(f"{what}.forward", got, x.dtype)
            grad = inp.grad(expected.shape)
            got = call(f"{what}.backward", student.backward, grad.copy())
            got = expect_close(f"{what}.backward: grad_input (dL/dx)", got,
                               reference.backward(grad.copy()), str(inp),
                               family.backward_signatures(x, grad, kwargs), **FLOAT32_TOL)
            _expect_dtype(f"{what}.backward", got, x.dtype)


def _expect_dtype(what: str, got: np.ndarray, dtype: np.dtype) -> None:
    if got.dtype != dtype:
        fail(f"{what} returned dtype {got.dtype} for a {dtype} input; keep the input's dtype, "
             "as PyTorch does. A float64 value in the formula promotes the result: a numpy "
             "scalar such as np.sqrt(2) (use math.sqrt or a Python float), or an array made by "
             "np.zeros(shape), np.where(mask, 1.0, slope) or np.vectorize (cast it with "
             ".astype(x.dtype)).")


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


# --------------------------------------------------------------------------- Sigmoid, Tanh
def _overflow(message: str) -> Signature:
    return when("overflow", lambda got, e: finite(e) and not finite(got), message)


def _sigmoid_forward_signatures(x, kwargs):
    return (
        _overflow("the output is inf or NaN for large |x|: exp overflows for arguments above "
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
    return (_overflow("the output is inf or NaN for large |x|: the exponentials in "
                      "(e^x - e^-x) / (e^x + e^-x) overflow. Use np.tanh."),)


def _tanh_backward_signatures(x, g, kwargs):
    return (when("of_input", lambda got, e: close(got, g * (1 - x**2)),
                 "dL/dx = grad_output * (1 - x**2) uses the input x; tanh'(x) = 1 - y**2 "
                 "with the saved output y = tanh(x)."),)


SIGMOID = Family("Sigmoid", ref.Sigmoid, (({}, BASIC + LARGE),),
                 _sigmoid_forward_signatures, _sigmoid_backward_signatures)
TANH = Family("Tanh", ref.Tanh, (({}, BASIC + LARGE),),
              _tanh_forward_signatures, _tanh_backward_signatures)


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
    other = _reference(ref.GELU, {"approximate": "tanh" if approximate == "none" else "none"},
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


# --------------------------------------------------------------------------- Softmax, LogSoftmax
OVERFLOW = ("the output is inf or NaN for large logits: exp overflows (np.exp(1000) is inf). "
            "Subtract the maximum along dim first, x - x.max(axis=dim, keepdims=True): the "
            "result does not change, and exp then only sees values <= 0.")


def _axis_signatures(cls: type, x, g, kwargs, quantity: str) -> tuple[Signature, ...]:
    """The result of reducing along another axis, or over the whole array."""
    dim = kwargs.get("dim", -1)
    signatures = []
    for axis in [a for a in range(x.ndim) if a != dim % x.ndim] + [None]:
        wrong = _reference(cls, {"dim": axis}, x, g)
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
    return (_overflow(OVERFLOW),) + _axis_signatures(ref.Softmax, x, None, kwargs, "softmax")


def _softmax_backward_signatures(x, g, kwargs):
    y = _reference(ref.Softmax, kwargs, x)
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
        _overflow(OVERFLOW),
    ) + _axis_signatures(ref.LogSoftmax, x, None, kwargs, "log_softmax")


def _log_softmax_backward_signatures(x, g, kwargs):
    dim = kwargs.get("dim", -1)
    y = _reference(ref.LogSoftmax, kwargs, x)
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
                 _softmax_forward_signatures, _softmax_backward_signatures)
LOG_SOFTMAX = Family("LogSoftmax", ref.LogSoftmax, SOFTMAX_VARIANTS,
                     _log_softmax_forward_signatures, _log_softmax_backward_signatures)


# --------------------------------------------------------------------------- Identity, Flatten
def _flatten_forward_signatures(x, kwargs):
    n = len(x)
    return (
        when("batch_flattened", lambda got, e: e.ndim > 1 and got.shape == (x.size,),
             "the batch dimension was flattened too: keep N and merge only the dims "
             "start_dim..end_dim (with the defaults: x.reshape(len(x), -1))."),
        when("dims_ignored", lambda got, e: got.shape == (n, x.size // n),
             "the output has shape (N, -1) whatever start_dim and end_dim were given: merge only "
             "the dims start_dim..end_dim (negative values count from the end)."),
    )


def _flatten_backward_signatures(x, g, kwargs):
    return (when("not_reshaped", lambda got, e: got.shape == g.shape != e.shape,
                 "dL/dx has the output's shape: backward must reshape grad_output back to the "
                 "input's shape (save x.shape in forward)."),)


FLATTEN_INPUTS = (Input((2, 3, 4, 5)), Input((1, 3, 2, 2), seed=1), Input((4, 3, 5), seed=2),
                  Input((5, 3), seed=3))
IDENTITY = Family("Identity", ref.Identity, (({}, BASIC + LARGE),))
FLATTEN = Family("Flatten", ref.Flatten, (({}, FLATTEN_INPUTS),),
                 _flatten_forward_signatures, _flatten_backward_signatures)
FLATTEN_DIMS = Family("Flatten", ref.Flatten, tuple(
    (kwargs, (Input((2, 3, 4, 5), seed=4), Input((1, 2, 3, 2, 2), seed=5)))
    for kwargs in ({"start_dim": 2}, {"start_dim": 0}, {"start_dim": 1, "end_dim": 2},
                   {"start_dim": -3, "end_dim": -2})
), _flatten_forward_signatures, _flatten_backward_signatures)


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
    check_backward(RELU, ReLU, (ZEROS,), fd=False)


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
    check_backward(LEAKY_RELU, LeakyReLU, (ZEROS,), fd=False)


@check
def sigmoid_forward(Sigmoid):
    """1 / (1 + exp(-x)), finite and exact for x = +-1000."""
    check_forward(SIGMOID, Sigmoid)


@check
def sigmoid_backward(Sigmoid):
    """dL/dx = grad_output * y * (1 - y), y the saved output."""
    check_backward(SIGMOID, Sigmoid)


@check
def sigmoid_float32(Sigmoid):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(SIGMOID, Sigmoid)


@check
def tanh_forward(Tanh):
    """tanh(x), finite and exact for x = +-1000."""
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


@check
def softmax_forward(Softmax):
    """exp(x) / sum(exp(x)) along dim (-1, 0, and 1 of a 3-d input), stable for logits ~1000."""
    check_forward(SOFTMAX, Softmax)


@check
def softmax_backward(Softmax):
    """dL/dx = y * (g - sum(g * y, dim)): the full Jacobian-vector product."""
    check_backward(SOFTMAX, Softmax)


@check
def softmax_float32(Softmax):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(SOFTMAX, Softmax)


@check
def log_softmax_forward(LogSoftmax):
    """x - logsumexp(x) along dim, finite where the softmax underflows (gaps of ~1000)."""
    check_forward(LOG_SOFTMAX, LogSoftmax)


@check
def log_softmax_backward(LogSoftmax):
    """dL/dx = g - softmax(x) * sum(g, dim)."""
    check_backward(LOG_SOFTMAX, LogSoftmax)


@check
def log_softmax_float32(LogSoftmax):
    """A float32 input gives a float32 output and dL/dx, as in PyTorch."""
    check_float32(LOG_SOFTMAX, LogSoftmax)


@check
def identity_forward(Identity):
    """Returns the input unchanged (same values, shape and dtype)."""
    check_forward(IDENTITY, Identity)


@check
def identity_backward(Identity):
    """dL/dx = grad_output."""
    check_backward(IDENTITY, Identity)


@check
def flatten_forward(Flatten):
    """(N, *dims) -> (N, prod(dims)) with the defaults, batch 1 included."""
    check_forward(FLATTEN, Flatten)


@check
def flatten_backward(Flatten):
    """dL/dx = grad_output reshaped back to the input's shape."""
    check_backward(FLATTEN, Flatten)


@check
def flatten_start_end_dim(Flatten):
    """start_dim / end_dim (also negative): forward merges only those dims, backward undoes it."""
    check_forward(FLATTEN_DIMS, Flatten, extra=())
    check_backward(FLATTEN_DIMS, Flatten)
