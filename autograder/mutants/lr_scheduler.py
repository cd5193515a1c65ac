"""Learning-rate schedulers with one classic student bug each (subclasses of the reference)."""
from __future__ import annotations

import math

from autograder.mutants import Mutant
from minitorch_ref.optim import lr_scheduler as sched


class ExponentialOneEpochLate(sched.ExponentialLR):
    """lr_at counts epochs from 1: every rate comes one step late (construction, which is
    given, and the base class's step() are right)."""

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** max(epoch - 1, 0)


class CosineStartsAtEpochOne(sched.CosineAnnealingLR):
    """lr_at computes the rate of the next epoch."""

    def lr_at(self, base_lr, epoch):
        return super().lr_at(base_lr, epoch + 1)


class StepLROneEpochEarly(sched.StepLR):
    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** ((epoch + 1) // self.step_size)


class StepLRDecaysEveryStep(sched.StepLR):
    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma**epoch


class CosineFullPeriod(sched.CosineAnnealingLR):
    def lr_at(self, base_lr, epoch):
        cosine = math.cos(2 * math.pi * epoch / self.T_max)
        return self.eta_min + (base_lr - self.eta_min) * (1 + cosine) / 2


class CosineClampedAtTMax(sched.CosineAnnealingLR):
    def lr_at(self, base_lr, epoch):
        return super().lr_at(base_lr, min(epoch, self.T_max))


class LinearNotClamped(sched.LinearLR):
    def lr_at(self, base_lr, epoch):
        progress = epoch / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class LambdaMultiplicative(sched.LambdaLR):
    def get_lr(self):
        return [group["lr"] * f(self.last_epoch)
                for group, f in zip(self.optimizer.param_groups, self.lr_lambdas)]


class StepNotWritten(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        self._last_lr = self.get_lr()  # never copied into optimizer.param_groups


class WarmupCosineIgnoresWarmupOffset(sched.WarmupCosineLR):
    def lr_at(self, base_lr, epoch):
        if epoch < self.warmup_steps:
            return super().lr_at(base_lr, epoch)
        progress = min(epoch, self.total_steps) / self.total_steps
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * progress)) / 2


class StepDoesNotAdvance(sched.LRScheduler):
    def step(self):
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr


class StepAdvancesAfterComputing(sched.LRScheduler):
    def step(self):
        self._last_lr = self.get_lr()
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr


class StepWritesFirstGroupOnly(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        self.optimizer.param_groups[0]["lr"] = self._last_lr[0]


class StepFirstRateEverywhere(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group in self.optimizer.param_groups:
            group["lr"] = self._last_lr[0]


class StepKeepsRatesBeforeUpdate(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr


class StepWithoutLastLr(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr


class StepFromCurrentRate(sched.LRScheduler):
    def step(self):
        self.last_epoch += 1
        self._last_lr = [self.lr_at(group["lr"], self.last_epoch)
                         for group in self.optimizer.param_groups]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr


MUTANTS = [
    Mutant("scheduler_step_does_not_advance", "LRScheduler", StepDoesNotAdvance, "never changes",
           "last_epoch never incremented"),
    Mutant("scheduler_step_advances_late", "LRScheduler", StepAdvancesAfterComputing,
           "one step late", "get_lr() before last_epoch += 1"),
    Mutant("scheduler_step_first_group_only", "LRScheduler", StepWritesFirstGroupOnly,
           "not written into the optimizer", "only param_groups[0] updated"),
    Mutant("scheduler_step_first_rate_everywhere", "LRScheduler", StepFirstRateEverywhere,
           "first group's rate", "every group gets _last_lr[0]"),
    Mutant("scheduler_step_stale_last_lr", "LRScheduler", StepKeepsRatesBeforeUpdate,
           "one step behind", "_last_lr holds the rates before the update"),
    Mutant("scheduler_step_without_last_lr", "LRScheduler", StepWithoutLastLr, "_last_lr",
           "_last_lr never set, get_last_lr() raises"),
    Mutant("scheduler_step_from_current_rate", "LRScheduler", StepFromCurrentRate, "compounds",
           "lr_at(group['lr'], epoch) instead of the initial rate"),

    Mutant("exponential_lr_one_epoch_late", "ExponentialLR", ExponentialOneEpochLate,
           "lr_at(base_lr, epoch) gives the rate of the epoch before", "gamma ** (epoch - 1)"),
    Mutant("cosine_starts_at_epoch_one", "CosineAnnealingLR", CosineStartsAtEpochOne,
           "lr_at(base_lr, epoch) gives the rate of the epoch after",
           "the cosine of epoch + 1"),
    Mutant("step_lr_one_epoch_early", "StepLR", StepLROneEpochEarly,
           "lr_at(base_lr, epoch) gives the rate of the epoch after",
           "gamma ** ((epoch + 1) // step_size)"),
    Mutant("step_lr_decays_every_step", "StepLR", StepLRDecaysEveryStep, "decays at every step",
           "gamma ** epoch instead of gamma ** (epoch // step_size)"),
    Mutant("cosine_full_period", "CosineAnnealingLR", CosineFullPeriod, "wrong period",
           "cos(2 pi t / T_max)"),
    Mutant("cosine_clamped_at_t_max", "CosineAnnealingLR", CosineClampedAtTMax,
           "do not clamp the epoch", "rate held at eta_min after T_max"),
    Mutant("linear_lr_not_clamped", "LinearLR", LinearNotClamped, "after total_iters",
           "factor keeps changing past total_iters"),
    Mutant("lambda_lr_multiplicative", "LambdaLR", LambdaMultiplicative, "MultiplicativeLR",
           "lr *= lr_lambda(epoch)"),
    Mutant("scheduler_rates_not_written", "LRScheduler", StepNotWritten,
           "not written into the optimizer", "get_last_lr right, param_groups untouched"),
    Mutant("warmup_cosine_ignores_warmup_offset", "WarmupCosineLR",
           WarmupCosineIgnoresWarmupOffset, None, "cosine progress counted from epoch 0"),
]
