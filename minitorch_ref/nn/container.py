"""Sequential: a chain of modules that is itself a module (the composite pattern)."""
from __future__ import annotations

from typing import Iterator

import numpy as np

from minitorch_ref.nn.module import Module


class Sequential(Module):
    """Apply modules in order; backpropagate through them in reverse.

    ``forward``: ``x -> m0(x) -> m1(...) -> ...``; ``backward``: the gradient flows
    from the last module to the first, each turning ``dL/d(its output)`` into
    ``dL/d(its input)``. Children are named ``'0'``, ``'1'``, … as in PyTorch, so
    ``state_dict`` keys look like ``'0.weight'``.

    Shape:
        - Input: what the first module takes; Output: what the last returns.
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise ValueError(f"Sequential takes Module instances, got {type(module).__name__}")
        setattr(self, str(len(self)), module)
        return self

    def forward(self, x: np.ndarray) -> np.ndarray:
        for module in self:
            x = module(x)
        return x

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        for module in reversed(list(self)):
            grad_output = module.backward(grad_output)
        return grad_output

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index: int | slice) -> Module:
        modules = list(self)
        if isinstance(index, slice):
            return Sequential(*modules[index])
        try:
            return modules[index]
        except IndexError:
            raise IndexError(f"index {index} is out of range for a Sequential of length {len(self)}") from None
