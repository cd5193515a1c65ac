"""Losses with one classic student bug each (subclasses of the reference)."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant, Variant
from minitorch_ref import nn


# ---------------------------------------------------------------------------- MSELoss
class MSEGradMissingTwo(nn.MSELoss):
    def backward(self):
        return self.diff * self._scale(self.diff.size)


class MSESummed(nn.MSELoss):
    def _reduce(self, losses):
        return float(losses.sum())

    def _scale(self, count):
        return 1.0


class MSEMeanOverBatch(nn.MSELoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        return float((self.diff**2).sum() / len(pred))

    def backward(self):
        return 2 * self.diff / len(self.diff)


class MSEGradAveragedTwice(nn.MSELoss):
    def backward(self):
        return super().backward() * self._scale(self.diff.size)


class MSEGradSignFlipped(nn.MSELoss):
    def backward(self):
        return -super().backward()


class MSEIgnoresReduction(nn.MSELoss):
    def __init__(self, reduction="mean"):
        super().__init__()


# ---------------------------------------------------------------------------- BCELoss
class BCENoLogClamp(nn.BCELoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        p, y = self.pred, self.target
        return self._reduce(-(y * np.log(p) + (1 - y) * np.log(1 - p)))


class BCEGradNotDivided(nn.BCELoss):
    def backward(self):
        return (self.pred - self.target) * self._scale(self.pred.size)


class BCEGradFloorTooLarge(nn.BCELoss):
    """Finite, with the right signs at p in {0, 1}, but 10^4 times smaller than PyTorch's."""

    def backward(self):
        p, y = self.pred, self.target
        return (p - y) / np.maximum(p * (1 - p), 1e-8) * self._scale(p.size)


class BCEGradClippedP(nn.BCELoss):
    def backward(self):
        p, y = np.clip(self.pred, 1e-7, 1 - 1e-7), self.target
        return (p - y) / (p * (1 - p)) * self._scale(p.size)


# ---------------------------------------------------------------------------- BCEWithLogitsLoss
class LogitsNaiveLogSigmoid(nn.BCEWithLogitsLoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        return self._reduce((1 - target) * pred - np.log(1 / (1 + np.exp(-pred))))


class LogitsNaiveSigmoidBackward(nn.BCEWithLogitsLoss):
    """Exact dL/dx (1 / inf = 0 at x = -1000), after an overflow warning."""

    def backward(self):
        return (1 / (1 + np.exp(-self.pred)) - self.target) * self._scale(self.pred.size)


# ---------------------------------------------------------------------------- CrossEntropyLoss
class CrossEntropyNaiveSoftmax(nn.CrossEntropyLoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        exp = np.exp(pred)
        self.probs = exp / exp.sum(axis=1, keepdims=True)
        return self._reduce(-np.sum(self.q * np.log(self.probs), axis=1))


class CrossEntropyLogOfClampedSoftmax(nn.CrossEntropyLoss):
    def forward(self, pred, target):
        super().forward(pred, target)
        return self._reduce(-np.sum(self.q * np.log(self.probs + 1e-12), axis=1))


class CrossEntropyOneHotColumns(nn.CrossEntropyLoss):
    """onehot[:, target] = 1 sets whole columns: every row gets a 1 at every target class."""

    def _smoothed_targets(self, target, n_classes, dtype):
        onehot = np.zeros((len(target), n_classes), dtype=dtype)
        onehot[:, target] = 1
        return onehot


class CrossEntropySoftmaxJacobianTwice(nn.CrossEntropyLoss):
    def backward(self):
        grad, s = super().backward(), self.probs
        return s * (grad - (grad * s).sum(axis=1, keepdims=True))


class CrossEntropyGradMissingMean(nn.CrossEntropyLoss):
    def backward(self):
        return self.probs - self.q


class CrossEntropyGradAveragedTwice(nn.CrossEntropyLoss):
    def backward(self):
        return super().backward() * self._scale(len(self.pred))


# ---------------------------------------------------------------------------- NLLLoss
class NLLPlusLogP(nn.NLLLoss):
    def forward(self, pred, target):
        return -super().forward(pred, target)

    def backward(self):
        return -super().backward()


class NLLGradOverAllEntries(nn.NLLLoss):
    def backward(self):
        grad = super().backward()
        return grad / self.pred.shape[1] if self.reduction == "mean" else grad


MUTANTS = [
    Mutant("mse_grad_missing_factor_2", "MSELoss", MSEGradMissingTwo, "factor 2",
           "dL/dpred = (pred - target) / M"),
    Mutant("mse_summed_not_averaged", "MSELoss", MSESummed, "summed instead of averaged",
           "sum of squares (and its gradient) for reduction='mean'",
           also=(
                 ('mse_loss_backward',
                  'backward sums too: the reduction is written twice'),)),
    Mutant("mse_mean_over_batch_only", "MSELoss", MSEMeanOverBatch, "batch size N only",
           "divides by N instead of N x D",
           also=(
                 ('mse_loss_backward',
                  'backward divides by N too: the reduction is written twice'),)),
    Mutant("mse_grad_averaged_twice", "MSELoss", MSEGradAveragedTwice, "averaged twice",
           "dL/dpred = 2 (pred - target) / M^2"),
    Mutant("mse_grad_sign_flipped", "MSELoss", MSEGradSignFlipped, "sign is flipped",
           "dL/dpred = 2 (target - pred) / M"),
    Mutant("mse_ignores_reduction", "MSELoss", MSEIgnoresReduction, "reduction='sum'",
           "always the mean",
           also=(
                 ('mse_loss_backward',
                  'backward ignores reduction= too: the reduction is written twice'),)),
    Mutant("bce_no_log_clamp", "BCELoss", BCENoLogClamp, "clamp each log at -100",
           "log(0) = -inf for p in {0, 1}"),
    Mutant("bce_grad_not_divided", "BCELoss", BCEGradNotDivided, "without dividing by p(1 - p)",
           "dL/dp = (p - y) / M",
           also=(
                 ('bce_loss_edge_cases',
                  'the edge cases are the division by max(p(1 - p), 1e-12) at p in {0, 1}: a '
                  'backward without that division is wrong there by construction'),)),
    Mutant("bce_grad_floor_too_large", "BCELoss", BCEGradFloorTooLarge, "max(p(1 - p), 1e-12)",
           "dL/dp = (p - y) / max(p(1 - p), 1e-8) / M"),
    Mutant("bce_grad_clipped_p", "BCELoss", BCEGradClippedP, "max(p(1 - p), 1e-12)",
           "backward clips p to [1e-7, 1 - 1e-7]"),
    Mutant("bce_logits_naive_log_sigmoid", "BCEWithLogitsLoss", LogitsNaiveLogSigmoid,
           "large negative logits", "-log(sigmoid(x)) + (1 - y) x with a naive sigmoid"),
    Mutant("cross_entropy_naive_softmax", "CrossEntropyLoss", CrossEntropyNaiveSoftmax,
           "log-sum-exp trick", "exp(z) without subtracting the max"),
    Mutant("cross_entropy_log_of_clamped_softmax", "CrossEntropyLoss",
           CrossEntropyLogOfClampedSoftmax, "log-softmax directly", "log(softmax(z) + 1e-12)"),
    Mutant("cross_entropy_one_hot_columns", "CrossEntropyLoss", CrossEntropyOneHotColumns,
           "sets whole columns", "onehot[:, y] = 1 instead of onehot[np.arange(N), y] = 1",
           also=(
                 ('cross_entropy_loss_backward',
                  'backward subtracts the one-hot matrix forward built: the same wrong matrix'
                  ' in both'),)),
    Mutant("cross_entropy_softmax_jacobian_twice", "CrossEntropyLoss",
           CrossEntropySoftmaxJacobianTwice, "Softmax Jacobian applied a second time",
           "Softmax backward applied to softmax(z) - onehot"),
    Mutant("cross_entropy_grad_missing_mean", "CrossEntropyLoss", CrossEntropyGradMissingMean,
           "1/N is missing", "dL/dz = softmax(z) - onehot, no 1/N"),
    Mutant("cross_entropy_grad_averaged_twice", "CrossEntropyLoss",
           CrossEntropyGradAveragedTwice, "averaged twice", "dL/dz divided by N^2"),
    Mutant("nll_plus_log_p", "NLLLoss", NLLPlusLogP, "negative log-likelihood",
           "loss = +pred[n, target[n]]",
           also=(
                 ('nll_loss_backward',
                  'the sign is flipped in backward too: the mistake is written twice'),)),
    Mutant("nll_grad_over_all_entries", "NLLLoss", NLLGradOverAllEntries, "N x C",
           "dL/dpred divided by N x C (pred.size) instead of N"),
]
# Exact values after a floating-point warning: no point lost (see activation.VARIANTS).
VARIANTS = [
    Variant("bce_logits_naive_sigmoid_backward", "BCEWithLogitsLoss", LogitsNaiveSigmoidBackward,
            "backward's sigmoid 1 / (1 + exp(-x)): exact, after an overflow warning"),
]
