"""Activations, Identity and Flatten with one classic student bug each (reference subclasses)."""
from __future__ import annotations

import numpy as np
from scipy import special

from autograder.mutants import Mutant, Variant
from minitorch_ref import nn


def _twice(backward: str, float32: str, how: str) -> tuple[tuple[str, str], ...]:
    """The cells a forward mistake written in backward too costs beyond the forward's."""
    return ((backward, f"backward {how}: the mistake is written twice"),
            (float32, "float32 is judged on a forward that is right in float64, and this one "
                      "is not"))


def _quiet():
    """The unstable mutants overflow on purpose; keep the audit's output clean."""
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


class ReLUGradOneAtZero(nn.ReLU):
    def derivative(self):
        return (self.input >= 0).astype(self.input.dtype)


class ReLUFloat64Derivative(nn.ReLU):
    def derivative(self):
        return (self.input > 0).astype(float)


class ReLUMaskFromOutput(nn.ReLU):
    def derivative(self):
        return (self.output >= 0).astype(self.input.dtype)


class ReLUInPlace(nn.ReLU):
    def function(self, x):
        x[x < 0] = 0
        return x


class LeakyReLUNoSlopeInBackward(nn.LeakyReLU):
    def derivative(self):
        return (self.input > 0).astype(self.input.dtype)


class LeakyReLUGradOneAtZero(nn.LeakyReLU):
    def derivative(self):
        return np.where(self.input >= 0, 1.0, self.negative_slope).astype(self.input.dtype)


class LeakyReLUFixedSlope(nn.LeakyReLU):
    def function(self, x):
        return np.where(x > 0, x, 0.01 * x)

    def derivative(self):
        return np.where(self.input > 0, 1.0, 0.01)


class SigmoidDerivativeOfInput(nn.Sigmoid):
    def derivative(self):
        return self.input * (1 - self.input)


class SigmoidDerivativeMissingOneMinus(nn.Sigmoid):
    def derivative(self):
        return self.output


class SigmoidUnstable(nn.Sigmoid):
    def function(self, x):
        with _quiet():
            return np.exp(x) / (1 + np.exp(x))


class SigmoidNaive(nn.Sigmoid):
    """Exact everywhere (1 / inf = 0 at x = -1000), after an overflow warning."""

    def function(self, x):
        return 1 / (1 + np.exp(-x))


class SigmoidWhereBothBranches(nn.Sigmoid):
    """np.where picks the finite branch, but computes both: exact values, overflow warnings."""

    def function(self, x):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


class SigmoidFloat32Output(nn.Sigmoid):
    def function(self, x):
        return special.expit(x).astype(np.float32)


class SigmoidFloat64Output(nn.Sigmoid):
    def function(self, x):
        with _quiet():
            return np.vectorize(lambda v: 1 / (1 + np.exp(-v)))(x.astype(np.float64))


class TanhDerivativeOfInput(nn.Tanh):
    def derivative(self):
        return 1 - self.input**2


class TanhUnstable(nn.Tanh):
    def function(self, x):
        with _quiet():
            return (np.exp(x) - np.exp(-x)) / (np.exp(x) + np.exp(-x))


class GELUAlwaysTanh(nn.GELU):
    def __init__(self, approximate="none"):
        super().__init__("tanh")


class GELUAlwaysExact(nn.GELU):
    def __init__(self, approximate="none"):
        super().__init__("none")


class GELUDerivativeMissingTerm(nn.GELU):
    def derivative(self):
        if self.approximate == "none":
            return special.ndtr(self.input)
        return super().derivative()


class SoftmaxUnstable(nn.Softmax):
    def function(self, x):
        with _quiet():
            e = np.exp(x)
            return e / e.sum(axis=self.dim, keepdims=True)


class SoftmaxDiagonalJacobian(nn.Softmax):
    def input_gradient(self, grad_output):
        return grad_output * self.output * (1 - self.output)


class SoftmaxIgnoresDim(nn.Softmax):
    def __init__(self, dim=-1):
        super().__init__()


class SoftmaxWholeArray(nn.Softmax):
    def function(self, x):
        e = np.exp(x - x.max())
        return e / e.sum()


class LogSoftmaxOfSoftmax(nn.LogSoftmax):
    def function(self, x):
        with _quiet():
            return np.log(special.softmax(x, axis=self.dim))


class LogSoftmaxUnstable(nn.LogSoftmax):
    def function(self, x):
        with _quiet():
            return x - np.log(np.exp(x).sum(axis=self.dim, keepdims=True))


class LogSoftmaxPatchedLog(nn.LogSoftmax):
    """log(softmax(x)) with its -inf entries replaced: exact, after a log(0) warning."""

    def function(self, x):
        exact = super().function(x)
        return np.where(exact > -700, np.log(special.softmax(x, axis=self.dim)), exact)


class LogSoftmaxBackwardWithoutExp(nn.LogSoftmax):
    def input_gradient(self, grad_output):
        return grad_output - self.output * grad_output.sum(axis=self.dim, keepdims=True)


class LogSoftmaxDiagonalJacobian(nn.LogSoftmax):
    def input_gradient(self, grad_output):
        return grad_output - np.exp(self.output) * grad_output


MUTANTS = [
    Mutant("relu_grad_one_at_zero", "ReLU", ReLUGradOneAtZero, "not `x >= 0`",
           "mask x >= 0: dL/dx = grad_output at exactly x = 0"),
    Mutant("relu_float64_derivative", "ReLU", ReLUFloat64Derivative, "keep the input's dtype",
           "mask.astype(float): dL/dx float64 for a float32 input"),
    Mutant("relu_mask_from_output", "ReLU", ReLUMaskFromOutput, "your mask is always 1",
           "mask output >= 0, which is always true",
           also=(
                 ('relu_backward_at_zero',
                  'a mask built from the output, output >= 0, is 1 everywhere: no kink is '
                  'left whose value at 0 the edge-case cell could judge'),)),
    Mutant("relu_forward_in_place", "ReLU", ReLUInPlace, "in place",
           "forward zeroes the negative entries of the input array itself"),
    Mutant("leaky_relu_no_slope_in_backward", "LeakyReLU", LeakyReLUNoSlopeInBackward,
           "backward forgot negative_slope", "backward uses ReLU's mask: gradient 0 below 0"),
    Mutant("leaky_relu_grad_one_at_zero", "LeakyReLU", LeakyReLUGradOneAtZero, "not `x >= 0`",
           "mask x >= 0: dL/dx = grad_output at exactly x = 0, not negative_slope * grad_output"),
    Mutant("leaky_relu_fixed_slope", "LeakyReLU", LeakyReLUFixedSlope, "hard-coded to 0.01",
           "negative_slope argument ignored, 0.01 everywhere",
           also=_twice("leaky_relu_backward", "leaky_relu_float32",
                       "hard-codes the same slope")),
    Mutant("sigmoid_derivative_of_input", "Sigmoid", SigmoidDerivativeOfInput, "uses the input x",
           "sigmoid' = x * (1 - x)"),
    Mutant("sigmoid_derivative_missing_one_minus", "Sigmoid", SigmoidDerivativeMissingOneMinus,
           "(1 - y) factor", "sigmoid' = y"),
    Mutant("sigmoid_unstable", "Sigmoid", SigmoidUnstable, "exp overflows",
           "exp(x) / (1 + exp(x)): NaN at x = 1000"),
    Mutant("sigmoid_float32_output", "Sigmoid", SigmoidFloat32Output, "keep the input's dtype",
           "float32 output for a float64 input"),
    Mutant("sigmoid_float64_output", "Sigmoid", SigmoidFloat64Output, "keep the input's dtype",
           "float64 output for a float32 input (np.vectorize)"),
    Mutant("tanh_derivative_of_input", "Tanh", TanhDerivativeOfInput, "1 - x**2",
           "tanh' = 1 - x**2"),
    Mutant("tanh_unstable", "Tanh", TanhUnstable, "Use np.tanh",
           "tanh from exponentials: NaN at x = 1000"),
    Mutant("gelu_tanh_when_none", "GELU", GELUAlwaysTanh, "approximate='none' (the default)",
           "tanh approximation when approximate='none'",
           also=_twice("gelu_backward", "gelu_float32",
                       "differentiates the same wrong approximation")),
    Mutant("gelu_exact_when_tanh", "GELU", GELUAlwaysExact, "but approximate='tanh'",
           "exact GELU when approximate='tanh'",
           also=_twice("gelu_backward", "gelu_float32",
                       "differentiates the same wrong approximation")),
    Mutant("gelu_derivative_missing_term", "GELU", GELUDerivativeMissingTerm, "product rule",
           "GELU' = Phi(x), the x * phi(x) term forgotten"),
    Mutant("softmax_unstable", "Softmax", SoftmaxUnstable, "Subtract the maximum",
           "no max subtraction: NaN for logits ~1000"),
    Mutant("softmax_diagonal_jacobian", "Softmax", SoftmaxDiagonalJacobian, "diagonal",
           "dL/dx = g * y * (1 - y), the Jacobian's coupling ignored"),
    Mutant("softmax_ignores_dim", "Softmax", SoftmaxIgnoresDim, "instead of along dim=0",
           "always normalises along the last axis",
           also=_twice("softmax_backward", "softmax_float32",
                       "reduces along the same wrong axis")),
    Mutant("softmax_whole_array", "Softmax", SoftmaxWholeArray, "over the whole array",
           "normalised by the sum of the whole batch",
           also=_twice("softmax_backward", "softmax_float32",
                       "reduces over the same whole array")),
    Mutant("log_softmax_log_of_softmax", "LogSoftmax", LogSoftmaxOfSoftmax, "log(softmax(x))",
           "log(softmax(x)): -inf for large gaps"),
    Mutant("log_softmax_unstable", "LogSoftmax", LogSoftmaxUnstable, "Subtract the maximum",
           "x - log(sum(exp(x))) without the max: -inf for logits ~1000"),
    Mutant("log_softmax_backward_without_exp", "LogSoftmax", LogSoftmaxBackwardWithoutExp,
           "exp(output)", "backward uses the log-probabilities as the softmax"),
    Mutant("log_softmax_diagonal_jacobian", "LogSoftmax", LogSoftmaxDiagonalJacobian, "diagonal",
           "dL/dx = g * (1 - softmax), the sum over dim forgotten"),
]
# Exact values after a floating-point warning: the warning is the kernel's report about
# itself (np.errstate silences it), so it costs no point; the visible tests teach it.
VARIANTS = [
    Variant("sigmoid_naive", "Sigmoid", SigmoidNaive,
            "1 / (1 + exp(-x)): exact (1 / inf = 0 at x = -1000, as PyTorch computes it), "
            "after an overflow warning"),
    Variant("sigmoid_where_both_branches", "Sigmoid", SigmoidWhereBothBranches,
            "np.where over two exp branches: exact, after overflow warnings"),
    Variant("log_softmax_patched_log", "LogSoftmax", LogSoftmaxPatchedLog,
            "log(softmax(x)) with its -inf entries replaced: exact, after a log(0) warning"),
]
