"""Optimizer: the base class that updates parameters from their gradients."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minitorch_ref.nn.parameter import Parameter


class Optimizer:
    """Base class: holds parameter groups and per-parameter state; ``step()`` updates.

    ``params`` is an iterable of ``Parameter`` (usually ``model.parameters()``) or,
    as in PyTorch, of dicts ``{'params': [...], 'lr': ...}`` that override the
    defaults for one group. Hyperparameters live in ``param_groups`` (schedulers
    change ``group['lr']``); per-parameter buffers (momentum, Adam's moments) live in
    ``state[param]``. Subclasses implement ``_update(param, group, state)``.

    Args:
        params: the parameters to optimise, or parameter groups.
        lr: learning rate.
        **defaults: the subclass's other hyperparameters.
    """

    def __init__(self, params: Iterable[Parameter] | Iterable[dict], lr: float, **defaults) -> None:
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr} (must be >= 0)")
        self.defaults = {"lr": lr, **defaults}
        self.param_groups: list[dict] = []
        self.state: dict[Parameter, dict] = {}
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        params = group["params"]
        params = [params] if isinstance(params, Parameter) else list(params)
        for param in params:
            if not isinstance(param, Parameter):
                raise ValueError(
                    f"{type(self).__name__} can only optimise Parameters, got "
                    f"{type(param).__name__}. Pass model.parameters()."
                )
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self) -> None:
        """Reset every parameter's gradient to zero, in place."""
        for group in self.param_groups:
            for param in group["params"]:
                param.zero_grad()

    def step(self) -> None:
        """Update every parameter once from its current ``.grad``."""
        for group in self.param_groups:
            for param in group["params"]:
                self._update(param, group, self.state.setdefault(param, {}))

    def _update(self, param: Parameter, group: dict, state: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _update()")

    @staticmethod
    def _with_l2(param: Parameter, weight_decay: float) -> np.ndarray:
        """The gradient with classic L2 weight decay folded in: ``g + wd * w``."""
        return param.grad + weight_decay * param.data if weight_decay else param.grad

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in group.items() if k != "params"]
        return "\n".join(lines + [")"])
