"""Optimizers with one classic student bug each (subclasses of the reference)."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import optim


# ----------------------------------------------------------------------------- SGD
class MomentumBufferReset(optim.SGD):
    def _update(self, param, group, state):
        state.clear()  # the buffer is forgotten after every step
        super()._update(param, group, state)


class MomentumBufferZeros(optim.SGD):
    def _update(self, param, group, state):
        if group["momentum"]:
            state.setdefault("momentum_buffer", np.zeros_like(param.data))
        super()._update(param, group, state)


class StepRebindsData(optim.SGD):
    def _update(self, param, group, state):
        super()._update(param, group, state)
        param.data = param.data.copy()  # as `param.data = param.data - lr * grad` leaves it


class NesterovIgnored(optim.SGD):
    def _update(self, param, group, state):
        super()._update(param, {**group, "nesterov": False}, state)


class DampeningIgnored(optim.SGD):
    def _update(self, param, group, state):
        super()._update(param, {**group, "dampening": 0.0}, state)


class WeightDecaySignFlipped(optim.SGD):
    @staticmethod
    def _with_l2(param, weight_decay):
        return param.grad - weight_decay * param.data


class ZeroGradReplacesArrays(optim.SGD):
    def zero_grad(self):
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = np.zeros_like(param.grad)


class ZeroGradRebindsLocal(optim.SGD):
    def zero_grad(self):
        for group in self.param_groups:
            for param in group["params"]:
                grad = param.grad
                grad = np.zeros_like(grad)  # noqa: F841 - the bug: only the local name changes


class LearningRateCached(optim.SGD):
    def __init__(self, params, lr, **kwargs):
        super().__init__(params, lr, **kwargs)
        self.lr = lr

    def _update(self, param, group, state):
        super()._update(param, {**group, "lr": self.lr}, state)


class GroupSettingsIgnored(optim.SGD):
    def add_param_group(self, group):
        super().add_param_group({**group, **self.defaults})


# ----------------------------------------------------------------------------- Adam, AdamW
class AdamNoBiasCorrection(optim.Adam):
    def _update(self, param, group, state):
        grad = self._gradient(param, group)
        beta1, beta2 = group["betas"]
        m = state.setdefault("exp_avg", np.zeros_like(param.data))
        v = state.setdefault("exp_avg_sq", np.zeros_like(param.data))
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad * grad
        param.data -= group["lr"] * m / (np.sqrt(v) + group["eps"])


class _AdamWithDenominator(optim.Adam):
    """Adam's moments, bias-corrected first moment and step; ``_step`` places eps."""

    def _update(self, param, group, state):
        grad = self._gradient(param, group)
        beta1, beta2 = group["betas"]
        t = state["step"] = state.get("step", 0) + 1
        m = state.setdefault("exp_avg", np.zeros_like(param.data))
        v = state.setdefault("exp_avg_sq", np.zeros_like(param.data))
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad * grad
        denominator = self._denominator(v, 1 - beta2**t, group["eps"])
        param.data -= group["lr"] * m / (1 - beta1**t) / denominator


class AdamNoSecondMomentCorrection(_AdamWithDenominator):
    def _denominator(self, v, correction, eps):
        return np.sqrt(v) + eps


class AdamEpsInsideSqrt(_AdamWithDenominator):
    """eps added to v_hat under the root: sqrt(v_hat + eps)."""

    def _denominator(self, v, correction, eps):
        return np.sqrt(v / correction + eps)


class AdamEpsBeforeCorrection(_AdamWithDenominator):
    """The paper's 'efficient' form: eps added to sqrt(v) before the bias correction."""

    def _denominator(self, v, correction, eps):
        return (np.sqrt(v) + eps) / np.sqrt(correction)


class AdamStateLost(optim.Adam):
    """The moments are local variables, rebuilt from zeros at every step (the step count is
    kept): step 1 is right, every later step is not."""

    def _update(self, param, group, state):
        grad = self._gradient(param, group)
        beta1, beta2 = group["betas"]
        t = state["step"] = state.get("step", 0) + 1
        m = (1 - beta1) * grad
        v = (1 - beta2) * grad * grad
        denominator = np.sqrt(v / (1 - beta2**t)) + group["eps"]
        param.data -= group["lr"] * m / (1 - beta1**t) / denominator


class AdamL2AfterMoments(optim.Adam):
    def _gradient(self, param, group):
        return param.grad

    def _update(self, param, group, state):
        weights = param.data.copy()
        super()._update(param, group, state)
        param.data -= group["lr"] * group["weight_decay"] * weights


class AdamWDecayInGradient(optim.AdamW):
    def _gradient(self, param, group):
        return self._with_l2(param, group["weight_decay"])


class AdamWDecayWithoutLr(optim.AdamW):
    def _gradient(self, param, group):
        param.data *= 1 - group["weight_decay"]
        return param.grad


# ----------------------------------------------------------------------------- RMSprop
class _RMSpropWithDenominator(optim.RMSprop):
    """The reference's update with the denominator as a hook."""

    def denominator(self, mean_square, eps):
        return np.sqrt(mean_square) + eps

    def _update(self, param, group, state):
        grad = self._with_l2(param, group["weight_decay"])
        alpha = group["alpha"]
        square_avg = state.setdefault("square_avg", np.zeros_like(param.data))
        square_avg[...] = alpha * square_avg + (1 - alpha) * grad * grad
        mean_square = square_avg
        if group["centered"]:
            grad_avg = state.setdefault("grad_avg", np.zeros_like(param.data))
            grad_avg[...] = alpha * grad_avg + (1 - alpha) * grad
            mean_square = square_avg - grad_avg**2
        update = grad / self.denominator(mean_square, group["eps"])
        if group["momentum"] > 0:
            buf = state.setdefault("momentum_buffer", np.zeros_like(param.data))
            buf[...] = group["momentum"] * buf + update
            update = buf
        param.data -= group["lr"] * update


class RMSpropNoSqrt(_RMSpropWithDenominator):
    def denominator(self, mean_square, eps):
        return mean_square + eps


class RMSpropEpsInsideSqrt(_RMSpropWithDenominator):
    def denominator(self, mean_square, eps):
        return np.sqrt(mean_square + eps)


class RMSpropCenteredMeanNotSquared(_RMSpropWithDenominator):
    """centered=True subtracts the running mean of the gradient, not its square."""

    def _update(self, param, group, state):
        if not group["centered"]:
            return super()._update(param, group, state)
        grad = self._with_l2(param, group["weight_decay"])
        alpha = group["alpha"]
        square_avg = state.setdefault("square_avg", np.zeros_like(param.data))
        grad_avg = state.setdefault("grad_avg", np.zeros_like(param.data))
        square_avg[...] = alpha * square_avg + (1 - alpha) * grad * grad
        grad_avg[...] = alpha * grad_avg + (1 - alpha) * grad
        with np.errstate(invalid="ignore"):
            update = grad / (np.sqrt(square_avg - grad_avg) + group["eps"])
        if group["momentum"] > 0:
            buf = state.setdefault("momentum_buffer", np.zeros_like(param.data))
            buf[...] = group["momentum"] * buf + update
            update = buf
        param.data -= group["lr"] * update


class RMSpropCenteredIgnored(optim.RMSprop):
    def _update(self, param, group, state):
        super()._update(param, {**group, "centered": False}, state)


MUTANTS = [
    Mutant("sgd_step_rebinds_data", "SGD", StepRebindsData, "in place",
           "param.data = param.data - lr * grad"),
    Mutant("sgd_momentum_buffer_reset", "SGD", MomentumBufferReset, "not kept between steps",
           "momentum buffer recreated from the gradient at every step",
           also=(
                 ('optimizer_param_groups',
                  'a buffer rebuilt at every step makes momentum=0.9 step like momentum=0: a '
                  "group's own momentum setting cannot be seen"),)),
    Mutant("sgd_momentum_buffer_zeros", "SGD", MomentumBufferZeros, "started at zeros",
           "momentum buffer initialised to zeros instead of the first gradient"),
    Mutant("sgd_nesterov_ignored", "SGD", NesterovIgnored, "nesterov=True is ignored",
           "nesterov flag accepted but not used"),
    Mutant("sgd_dampening_ignored", "SGD", DampeningIgnored, "dampening is ignored",
           "buffer update without (1 - dampening)"),
    Mutant("sgd_weight_decay_sign", "SGD", WeightDecaySignFlipped, "wrong sign",
           "g - weight_decay * w"),
    Mutant("optimizer_zero_grad_replaces", "SGD", ZeroGradReplacesArrays, "replaced p.grad",
           "zero_grad assigns new arrays, so held references go stale"),
    Mutant("optimizer_zero_grad_noop", "SGD", ZeroGradRebindsLocal, "left the gradient as it was",
           "zero_grad rebinds a local name and zeroes nothing"),
    Mutant("optimizer_lr_cached", "SGD", LearningRateCached, "given to the constructor",
           "step() uses self.lr, so schedulers have no effect",
           also=(
                 ('optimizer_param_groups',
                  "caching the constructor's rate ignores every group's rate, a group dict's "
                  "own 'lr' too"),)),
    Mutant("optimizer_group_settings_ignored", "SGD", GroupSettingsIgnored,
           "overrides the constructor's value", "defaults override the group dict's own keys"),
    Mutant("adam_no_bias_correction", "Adam", AdamNoBiasCorrection, "without bias correction",
           "m and v used without dividing by 1 - beta**t"),
    Mutant("adam_no_second_moment_correction", "Adam", AdamNoSecondMomentCorrection,
           "second moment", "m corrected by 1 - beta1**t, v used without 1 - beta2**t"),
    Mutant("adam_eps_inside_sqrt", "Adam", AdamEpsInsideSqrt, "inside the square root",
           "sqrt(v_hat + eps)"),
    Mutant("adam_eps_before_correction", "Adam", AdamEpsBeforeCorrection,
           "before the bias correction", "eps added to sqrt(v) before correcting v"),
    Mutant("adam_state_lost", "Adam", AdamStateLost, "step 1 is right",
           "m and v rebuilt from zeros at every step instead of kept in self.state"),
    Mutant("adam_l2_after_moments", "Adam", AdamL2AfterMoments, "after the moments",
           "Adam's L2 term added to the update instead of the gradient",
           also=(
                 ('adamw_step',
                  "the decay sits in Adam's _update, which AdamW inherits: AdamW decays twice"),)),
    Mutant("adamw_decay_in_gradient", "AdamW", AdamWDecayInGradient, "Adam with L2",
           "AdamW's decay folded into the gradient"),
    Mutant("adamw_decay_without_lr", "AdamW", AdamWDecayWithoutLr, "(1 - lr * weight_decay)",
           "w *= 1 - weight_decay"),
    Mutant("rmsprop_no_sqrt", "RMSprop", RMSpropNoSqrt, "square root",
           "g / (s + eps)",
           also=(
                 ('rmsprop_centered_momentum',
                  'centered=True and momentum divide by the same root of the mean square'),)),
    Mutant("rmsprop_eps_inside_sqrt", "RMSprop", RMSpropEpsInsideSqrt, "eps is inside",
           "g / sqrt(s + eps)",
           also=(
                 ('rmsprop_centered_momentum',
                  'centered=True and momentum divide by the same sqrt(s) + eps'),)),
    Mutant("rmsprop_centered_mean_not_squared", "RMSprop", RMSpropCenteredMeanNotSquared,
           "negative variance", "centered: sqrt(s - g_avg) instead of sqrt(s - g_avg**2)"),
    Mutant("rmsprop_centered_ignored", "RMSprop", RMSpropCenteredIgnored,
           "centered=True is ignored", "centered flag accepted but not used"),
]
