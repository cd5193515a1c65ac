"""Learning-rate schedules, stepped once per epoch (or per batch) as in PyTorch.

Each scheduler sets ``group['lr']`` of its optimizer from the group's initial rate
and the count of ``step()`` calls so far (``last_epoch``). Creating a scheduler
already performs step 0, so the usual loop is: train an epoch, ``optimizer.step()``
for each batch, then ``scheduler.step()`` once.
"""
from __future__ import annotations

import math
from typing import Callable

from minitorch_ref.optim.optimizer import Optimizer


class LRScheduler:
    """Base class: subclasses give the rate at an epoch in closed form via ``lr_at``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement lr_at()")

    def get_lr(self) -> list[float]:
        return [self.lr_at(base_lr, self.last_epoch) for base_lr in self.base_lrs]

    def step(self) -> None:
        """Advance one epoch and write the new rates into the optimizer."""
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def get_last_lr(self) -> list[float]:
        """The rates set by the latest ``step()``, one per parameter group."""
        return list(self._last_lr)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; one function, or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list[Callable],
                 last_epoch: int = -1) -> None:
        groups = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(self.lr_lambdas) != groups:
            raise ValueError(f"Expected {groups} lr_lambdas, got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size < 1:
            raise ValueError(f"step_size must be a positive integer, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma**epoch


def _cosine(start: float, end: float, progress: float) -> float:
    """Half a cosine from ``start`` (progress 0) to ``end`` (progress 1)."""
    return end + (start - end) * (1 + math.cos(math.pi * progress)) / 2


class CosineAnnealingLR(LRScheduler):
    r"""Cosine from the initial rate down to ``eta_min`` over ``T_max`` epochs:
    :math:`\eta_t = \eta_{min} + (\eta_0 - \eta_{min})(1 + \cos(\pi t / T_{max}))/2`
    (past ``T_max`` the cosine rises again, as in PyTorch)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_max < 1:
            raise ValueError(f"T_max must be a positive integer, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return _cosine(base_lr, self.eta_min, epoch / self.T_max)


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over ``total_iters``."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not (0 < start_factor <= 1 and 0 <= end_factor <= 1):
            raise ValueError("start_factor must be in (0, 1] and end_factor in [0, 1]")
        if total_iters < 1:
            raise ValueError(f"total_iters must be a positive integer, got {total_iters}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        progress = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class WarmupCosineLR(LRScheduler):
    """Linear warmup then cosine decay, the usual schedule for Adam(W).

    For ``warmup_steps`` steps the rate rises linearly from
    ``warmup_start_factor * initial_lr`` to ``initial_lr``; then it follows a cosine
    down to ``eta_min``, reached at ``total_steps`` and kept afterwards. The same as
    PyTorch's ``SequentialLR([LinearLR(...), CosineAnnealingLR(...)])`` up to ``total_steps``.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int,
                 warmup_start_factor: float = 0.0, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if not 0 <= warmup_steps < total_steps:
            raise ValueError(
                f"Need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}"
            )
        self.warmup_steps, self.total_steps = warmup_steps, total_steps
        self.warmup_start_factor, self.eta_min = warmup_start_factor, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        if epoch < self.warmup_steps:
            start = self.warmup_start_factor
            return base_lr * (start + (1 - start) * epoch / self.warmup_steps)
        progress = min(epoch - self.warmup_steps, self.total_steps - self.warmup_steps)
        return _cosine(base_lr, self.eta_min, progress / (self.total_steps - self.warmup_steps))
