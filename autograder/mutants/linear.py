"""Linear layers with one classic student bug each (subclasses of the reference)."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import nn


class WeightGradTransposed(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad = grad_output.T @ self.input
        self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T


class WeightGradReshaped(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += (grad_output.T @ self.input).reshape(self.weight.shape)
        self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T


class GradAveragedAgain(nn.Linear):
    def backward(self, grad_output):
        n = len(grad_output)
        self.weight.grad += self.input.T @ grad_output / n
        self.bias.grad += grad_output.mean(axis=0)
        return grad_output @ self.weight.data.T


class BiasGradNotSummed(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += self.input.T @ grad_output
        self.bias.grad = self.bias.grad + grad_output
        return grad_output @ self.weight.data.T


class BiasGradWrongAxis(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad += self.input.T @ grad_output
        if self.bias is not None:
            self.bias.grad += grad_output.sum(axis=1)   # one number per example, shape (N,)
        return grad_output @ self.weight.data.T


class AssignsGrad(nn.Linear):
    def backward(self, grad_output):
        self.weight.grad = self.input.T @ grad_output
        self.bias.grad = grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T


class InputGradSignFlipped(nn.Linear):
    def backward(self, grad_output):
        return -super().backward(grad_output)


class ForwardWithoutBias(nn.Linear):
    def forward(self, x):
        self.input = x
        return x @ self.weight.data


class StandardNormalInit(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(in_features, out_features, bias, **kwargs)
        self.weight.data = np.random.default_rng(0).standard_normal(self.weight.shape)


class BiasDrawnFirst(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float64):
        super().__init__(in_features, out_features, bias, rng=np.random.default_rng(), dtype=dtype)
        rng, bound = np.random.default_rng() if rng is None else rng, 1 / np.sqrt(in_features)
        if self.bias is not None:
            self.bias.data = rng.uniform(-bound, bound, out_features).astype(dtype)
        self.weight.data = rng.uniform(-bound, bound, (in_features, out_features)).astype(dtype)


class ZeroBiasWhenNone(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(in_features, out_features, bias, **kwargs)
        if not bias:                       # a Parameter of zeros instead of None
            self.bias = nn.Parameter(np.zeros(out_features))


class IgnoresDtype(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float64):
        super().__init__(in_features, out_features, bias, rng=rng)


class InitBoundOneOverIn(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(in_features, out_features, bias, **kwargs)
        bound, rng = 1 / in_features, np.random.default_rng(0)
        self.weight.data = rng.uniform(-bound, bound, self.weight.shape)
        if self.bias is not None:
            self.bias.data = rng.uniform(-bound, bound, self.bias.shape)


MUTANTS = [
    Mutant("linear_weight_grad_transposed", "Linear", WeightGradTransposed, "transposed",
           "dL/dW = grad_output.T @ x",
           also=(
                 ('linear_grad_accumulates',
                  'a transposed dL/dW has the wrong shape, which += cannot add into: the '
                  'mutant assigns it (=), which does not accumulate'),)),
    Mutant("linear_weight_grad_reshaped", "Linear", WeightGradReshaped, "reshape",
           "dL/dW = (grad_output.T @ x).reshape(W.shape)"),
    Mutant("linear_grad_averaged_again", "Linear", GradAveragedAgain, "averaged over the batch",
           "parameter gradients divided by N"),
    Mutant("linear_bias_grad_not_summed", "Linear", BiasGradNotSummed, "not summed",
           "dL/db = grad_output, no sum over the batch"),
    Mutant("linear_bias_grad_wrong_axis", "Linear", BiasGradWrongAxis, "summed over the wrong axis",
           "dL/db = grad_output.sum(axis=1)"),
    Mutant("linear_assigns_grad", "Linear", AssignsGrad, "instead of `+=`",
           "`=` instead of `+=` for the parameter gradients"),
    Mutant("linear_input_grad_sign", "Linear", InputGradSignFlipped, "sign is flipped",
           "dL/dx with the wrong sign"),
    Mutant("linear_bias_of_zeros", "Linear", ZeroBiasWhenNone, "should be None",
           "bias=False keeps a Parameter of zeros"),
    Mutant("linear_forward_without_bias", "Linear", ForwardWithoutBias, "without the bias",
           "forward forgets + b"),
    Mutant("linear_standard_normal_init", "Linear", StandardNormalInit, "1/sqrt(in_features)",
           "weights from N(0, 1)"),
    Mutant("linear_bias_drawn_first", "Linear", BiasDrawnFirst, "drawn before the weight",
           "the bias drawn from rng before the weight"),
    Mutant("linear_ignores_dtype", "Linear", IgnoresDtype, "dtype=np.float32",
           "parameters float64 whatever dtype says"),
    Mutant("linear_init_bound_one_over_in", "Linear", InitBoundOneOverIn, "1/in_features",
           "weights and bias from U(-1/in, 1/in)"),
]
