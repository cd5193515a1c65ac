"""Dropout and BatchNorm1d with one classic student bug each (subclasses of the reference)."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import nn
from minitorch_ref._random import resolve_rng


# ---------------------------------------------------------------------------- Dropout
class _Masked(nn.Dropout):
    """Dropout whose mask (kept entries and their scale) a subclass chooses."""

    def mask_for(self, x: np.ndarray) -> np.ndarray:
        keep = resolve_rng(self.rng).random(x.shape) >= self.p
        return keep.astype(x.dtype) * self.scale()

    def scale(self) -> float:
        return 1 / (1 - self.p)

    def forward(self, x):
        if not self.training:
            self.mask = np.ones((), dtype=x.dtype)
            return x
        self.mask = self.mask_for(x)
        return x * self.mask


class DropoutNotScaled(_Masked):
    def scale(self):
        return 1.0


class DropoutScaledByP(_Masked):
    def scale(self):
        return 1 / self.p


class DropoutPKeeps(_Masked):
    def mask_for(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):  # p = 0: 0/0, as a student's would
            return (resolve_rng(self.rng).random(x.shape) < self.p) / self.p


class DropoutActiveInEval(nn.Dropout):
    def forward(self, x):
        keep = resolve_rng(self.rng).random(x.shape) >= self.p
        self.mask = keep.astype(x.dtype) / (1 - self.p)
        return x * self.mask


class DropoutBackwardFreshMask(nn.Dropout):
    def backward(self, grad_output):
        if not self.training:
            return grad_output
        keep = resolve_rng(self.rng).random(grad_output.shape) >= self.p
        return grad_output * keep / (1 - self.p)


class DropoutGlobalRandom(_Masked):
    def mask_for(self, x):
        return (np.random.random(x.shape) >= self.p).astype(x.dtype) * self.scale()


class DropoutMaskOnce(_Masked):
    def mask_for(self, x):
        if getattr(self, "saved", None) is None or self.saved.shape != x.shape:
            self.saved = super().mask_for(x)
        return self.saved


class DropoutUnseededDefault(_Masked):
    def mask_for(self, x):
        rng = self.rng if self.rng is not None else np.random.default_rng()
        return (rng.random(x.shape) >= self.p).astype(x.dtype) * self.scale()


class DropoutFloat64Mask(_Masked):
    def mask_for(self, x):
        return (resolve_rng(self.rng).random(x.shape) >= self.p) / (1 - self.p)


# ---------------------------------------------------------------------------- BatchNorm1d
class BatchStatsInEval(nn.BatchNorm1d):
    def forward(self, x):
        self.used_batch_stats = True
        mean, var = x.mean(axis=0), x.var(axis=0)
        if self.training:
            self._update_running_stats(mean, var * len(x) / (len(x) - 1))
        self.inv_std = 1.0 / np.sqrt(var + self.eps)
        self.x_hat = (x - mean) * self.inv_std
        return self.x_hat * self.weight.data + self.bias.data


class BiasedRunningVar(nn.BatchNorm1d):
    def _update_running_stats(self, mean, unbiased_var):
        n = self._batch_size
        super()._update_running_stats(mean, unbiased_var * (n - 1) / n)

    def forward(self, x):
        self._batch_size = len(x)
        return super().forward(x)


class MomentumReversed(nn.BatchNorm1d):
    def _update_running_stats(self, mean, unbiased_var):
        self.num_batches_tracked = self.num_batches_tracked + 1
        m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
        self.running_mean = m * self.running_mean + (1 - m) * mean
        self.running_var = m * self.running_var + (1 - m) * unbiased_var


class BackwardConstantStats(nn.BatchNorm1d):
    def backward(self, grad_output):
        self.weight.grad += np.sum(grad_output * self.x_hat, axis=0)
        self.bias.grad += np.sum(grad_output, axis=0)
        return grad_output * self.weight.data * self.inv_std


class EvalBackwardTrainingFormula(nn.BatchNorm1d):
    def backward(self, grad_output):
        self.used_batch_stats = True
        return super().backward(grad_output)


class UnbiasedNormalisation(nn.BatchNorm1d):
    def _batch_statistics(self, x):
        mean, var = super()._batch_statistics(x)
        return mean, var * len(x) / (len(x) - 1)


class OnePassVariance(nn.BatchNorm1d):
    def _batch_statistics(self, x):
        mean, _ = super()._batch_statistics(x)
        return mean, (x**2).mean(axis=0) - mean**2


class GammaGradUsesInput(nn.BatchNorm1d):
    def forward(self, x):
        self.input = x
        return super().forward(x)

    def backward(self, grad_output):
        grad_input = super().backward(grad_output)
        self.weight.grad += np.sum(grad_output * (self.input - self.x_hat), axis=0)
        return grad_input


class GradsAssigned(nn.BatchNorm1d):
    def backward(self, grad_output):
        self.weight.grad[...] = 0.0     # what `=` instead of `+=` amounts to
        self.bias.grad[...] = 0.0
        return super().backward(grad_output)


class PrivateBatchCounter(nn.BatchNorm1d):
    def _update_running_stats(self, mean, unbiased_var):
        self._t = getattr(self, "_t", 0) + 1
        m = 1.0 / self._t if self.momentum is None else self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean
        self.running_var = (1 - m) * self.running_var + m * unbiased_var


class CountsOnlyCumulative(nn.BatchNorm1d):
    """num_batches_tracked counted only for momentum=None, the one case that reads it."""

    def _update_running_stats(self, mean, unbiased_var):
        if self.momentum is None:
            self.num_batches_tracked = self.num_batches_tracked + 1
        m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean
        self.running_var = (1 - m) * self.running_var + m * unbiased_var


class EvalUpdatesRunningStats(nn.BatchNorm1d):
    """In eval mode the running estimates move towards the batch first, as in training, and
    the batch is then normalised with them."""

    def forward(self, x):
        if not self.training:
            n = len(x)
            unbiased = x.var(axis=0) * n / (n - 1) if n > 1 else self.running_var
            self._update_running_stats(x.mean(axis=0), unbiased)
        return super().forward(x)


class SavedUnderOtherNames(nn.BatchNorm1d):
    def forward(self, x):
        y = super().forward(x)
        self.xh, self.istd, self.x_hat, self.inv_std = self.x_hat, self.inv_std, None, None
        return y

    def backward(self, grad_output):
        self.x_hat, self.inv_std = self.xh, self.istd
        grad_input = super().backward(grad_output)
        self.x_hat = self.inv_std = None
        return grad_input


MUTANTS = [
    Mutant("dropout_not_scaled", "Dropout", DropoutNotScaled, "not scaled by 1/(1-p)",
           "kept values are x, not x / (1 - p)"),
    Mutant("dropout_scaled_by_p", "Dropout", DropoutScaledByP, "divided by p instead",
           "kept values are x / p",
           also=(
                 ('dropout_p_zero',
                  'p = 0 is where a scale of 1/p divides by zero'),)),
    Mutant("dropout_p_keeps", "Dropout", DropoutPKeeps, "probability of keeping",
           "p used as the keep probability",
           also=(
                 ('dropout_p_zero',
                  'keeping each entry with probability p keeps nothing at p = 0'),)),
    Mutant("dropout_active_in_eval", "Dropout", DropoutActiveInEval, "still active in eval mode",
           "forward ignores self.training"),
    Mutant("dropout_backward_fresh_mask", "Dropout", DropoutBackwardFreshMask, "new mask",
           "backward draws a new random mask"),
    Mutant("dropout_global_random", "Dropout", DropoutGlobalRandom, "not come from the layer's generator",
           "masks drawn from np.random, ignoring rng"),
    Mutant("dropout_mask_once", "Dropout", DropoutMaskOnce, "drawn once",
           "the mask is drawn on the first call and reused"),
    Mutant("dropout_unseeded_default", "Dropout", DropoutUnseededDefault, "manual_seed works",
           "a fresh np.random.default_rng() when rng is None"),
    Mutant("dropout_float64_mask", "Dropout", DropoutFloat64Mask, "in the input's dtype",
           "the mask is float64 whatever the input"),
    Mutant("batchnorm_grads_assigned", "BatchNorm1d", GradsAssigned, "instead of `+=`",
           "weight.grad = ..., not +="),
    Mutant("batchnorm_private_batch_counter", "BatchNorm1d", PrivateBatchCounter,
           "num_batches_tracked", "counts batches in self._t"),
    Mutant("batchnorm_counts_only_cumulative", "BatchNorm1d", CountsOnlyCumulative,
           "whatever the momentum", "num_batches_tracked += 1 only when momentum is None"),
    Mutant("batchnorm_eval_updates_running_stats", "BatchNorm1d", EvalUpdatesRunningStats,
           "updated with this batch before", "eval moves the running estimates, then uses them"),
    Mutant("batchnorm_saved_under_other_names", "BatchNorm1d", SavedUnderOtherNames,
           "self.x_hat", "saves xh and istd"),
    Mutant("batchnorm_batch_stats_in_eval", "BatchNorm1d", BatchStatsInEval,
           "uses the batch's mean and variance", "eval normalises with the batch statistics"),
    Mutant("batchnorm_biased_running_var", "BatchNorm1d", BiasedRunningVar,
           "biased batch variance", "running_var without the factor N/(N-1)"),
    Mutant("batchnorm_momentum_reversed", "BatchNorm1d", MomentumReversed, "wrong way round",
           "running = momentum * running + (1 - momentum) * batch"),
    Mutant("batchnorm_backward_constant_stats", "BatchNorm1d", BackwardConstantStats,
           "as constants", "dL/dx = gamma * grad_output / std in training"),
    Mutant("batchnorm_eval_backward_training_formula", "BatchNorm1d", EvalBackwardTrainingFormula,
           "uses the training formula", "eval backward with the batch-statistics terms"),
    Mutant("batchnorm_unbiased_normalisation", "BatchNorm1d", UnbiasedNormalisation,
           "unbiased variance (divided by N - 1)", "x normalised with var * N/(N-1)"),
    Mutant("batchnorm_one_pass_variance", "BatchNorm1d", OnePassVariance, "loses precision",
           "var = mean(x**2) - mean**2"),
    Mutant("batchnorm_gamma_grad_uses_input", "BatchNorm1d", GammaGradUsesInput, "uses the input x",
           "dL/dgamma = sum(grad_output * x)"),
]
