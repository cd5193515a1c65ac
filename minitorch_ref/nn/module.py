"""Module: the base class of every layer, activation, loss and container."""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

import numpy as np

from minitorch_ref.nn.parameter import Parameter


class Module:
    """Base class of all layers, with PyTorch's interface and manual gradients.

    A subclass implements ``forward(x)``, which saves what the backward pass needs,
    and ``backward(grad_output)``, which adds ``dL/dparam`` into each parameter's
    ``.grad`` and returns ``dL/dx``. Parameters, buffers (non-learnable state such
    as BatchNorm's running statistics) and child modules register themselves when
    assigned as attributes, so ``parameters()``, ``state_dict()``, ``train()`` and
    ``print(model)`` find them without any bookkeeping in the subclass.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: object) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.__init__ must call super().__init__() "
                f"before assigning attributes (while setting '{name}')."
            )
        if name in self.__dict__ and not isinstance(value, (Parameter, Module)):
            # The common case, e.g. forward() saving its input again: a plain attribute
            # stays plain (an attribute in __dict__ is in no registry), nothing to update.
            object.__setattr__(self, name, value)
            return
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self.__dict__.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        elif name in self.__dict__.get("_buffer_names", ()):
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> object:
        # Only called when normal lookup fails: look in the registries.
        for registry in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(registry)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, value: np.ndarray | None) -> None:
        """Register non-learnable state that belongs in ``state_dict`` (e.g. running_mean)."""
        if "_buffer_names" not in self.__dict__:
            object.__setattr__(self, "_buffer_names", set())
        self._buffer_names.add(name)
        self.__dict__.pop(name, None)   # a plain attribute of that name becomes the buffer
        setattr(self, name, value)

    # ------------------------------------------------------------------ computation
    def forward(self, *inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement backward()")

    def __call__(self, *inputs: np.ndarray) -> np.ndarray:
        return self.forward(*inputs)

    def _require_forward(self, *saved: object) -> None:
        """Raise a helpful error if backward runs before forward saved its inputs."""
        if any(value is None for value in saved):
            raise RuntimeError(
                f"{type(self).__name__}.backward() was called before forward(): "
                "run a forward pass first, it saves the values the gradient needs."
            )

    # ------------------------------------------------------------------ traversal
    def children(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and all its descendants, depth first, with dotted names."""
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        return (module for _, module in self.named_modules())

    def named_parameters(self) -> list[tuple[str, Parameter]]:
        """``[(dotted_name, parameter)]`` in registration order, each parameter once."""
        seen: set[int] = set()
        named = []
        for prefix, module in self.named_modules():
            for name, param in module._parameters.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    named.append((f"{prefix}.{name}" if prefix else name, param))
        return named

    def parameters(self) -> list[Parameter]:
        return [param for _, param in self.named_parameters()]

    def grads(self) -> list[np.ndarray]:
        """The gradient arrays, in the same order as ``parameters()``."""
        return [param.grad for param in self.parameters()]

    def named_buffers(self) -> list[tuple[str, np.ndarray]]:
        return [
            (f"{prefix}.{name}" if prefix else name, buf)
            for prefix, module in self.named_modules()
            for name, buf in module._buffers.items()
            if buf is not None
        ]

    def zero_grad(self) -> None:
        for param in self.parameters():
            param.zero_grad()

    # ------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout active, BatchNorm uses batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError(f"train(mode) expects a bool, got {mode!r}")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode; the same as ``train(False)``."""
        return self.train(False)

    def to(self, dtype: np.dtype | type) -> Module:
        """Cast every parameter (and its gradient) and floating buffer to ``dtype``."""
        for param in self.parameters():
            param.data = param.data.astype(dtype)
            param.grad = param.grad.astype(dtype)
        for module in self.modules():
            for name, buf in module._buffers.items():
                if isinstance(buf, np.ndarray) and np.issubdtype(buf.dtype, np.floating):
                    module._buffers[name] = buf.astype(dtype)
        return self

    # ------------------------------------------------------------------ state
    def state_dict(self) -> OrderedDict[str, np.ndarray]:
        """Copies of every parameter and buffer, keyed by dotted name.

        Unlike PyTorch's, the arrays are copies, so a saved "best model" does not
        change while training continues.
        """
        state = OrderedDict((name, p.data.copy()) for name, p in self.named_parameters())
        state.update((name, np.array(buf, copy=True)) for name, buf in self.named_buffers())
        return state

    def load_state_dict(self, state_dict: dict[str, np.ndarray], strict: bool = True) -> None:
        """Copy values into the existing arrays (optimizers keep their references).

        Raises:
            RuntimeError: on missing or unexpected keys (when ``strict``) or on a
                shape mismatch, listing every problem at once.
        """
        targets = self._state_targets()
        problems = []
        if strict:
            missing = [k for k in targets if k not in state_dict]
            unexpected = [k for k in state_dict if k not in targets]
            if missing:
                problems.append(f"Missing key(s): {', '.join(missing)}.")
            if unexpected:
                problems.append(f"Unexpected key(s): {', '.join(unexpected)}.")
        for key, value in state_dict.items():
            if key in targets and np.shape(value) != np.shape(targets[key][0]):
                problems.append(
                    f"Size mismatch for {key}: copying an array of shape {np.shape(value)}, "
                    f"the shape in the current model is {np.shape(targets[key][0])}."
                )
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(problems)
            )
        for key, value in state_dict.items():
            if key in targets:
                current, assign = targets[key]
                assign(np.asarray(value, dtype=np.asarray(current).dtype))

    def _state_targets(self) -> dict[str, tuple[np.ndarray, object]]:
        """For each state key: the current array and a function that stores a new value."""
        targets = {}
        for name, param in self.named_parameters():
            targets[name] = (param.data, lambda v, p=param: np.copyto(p.data, v))
        for prefix, module in self.named_modules():
            for name, buf in module._buffers.items():
                if buf is not None:
                    key = f"{prefix}.{name}" if prefix else name
                    targets[key] = (buf, lambda v, m=module, n=name: _store_buffer(m, n, v))
        return targets

    def summary(self, input_shape: tuple[int, ...]):
        """A table of layers, output shapes and parameter counts (see ``nn.summary``)."""
        from minitorch_ref.nn.summary import summary
        return summary(self, input_shape)

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The text inside the parentheses of ``print(module)``; override it."""
        return ""

    def __repr__(self) -> str:
        lines = [
            f"({name}): " + repr(child).replace("\n", "\n  ")
            for name, child in self._modules.items()
        ]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        body = "\n  ".join(([self.extra_repr()] if self.extra_repr() else []) + lines)
        return f"{type(self).__name__}(\n  {body}\n)"


def _store_buffer(module: Module, name: str, value: np.ndarray) -> None:
    """Copy ``value`` into the buffer's own array, in place, as PyTorch does; a buffer held as
    a number (a counter after ``+= 1``) or a read-only array gets a copy instead."""
    buffer = module._buffers[name]
    if isinstance(buffer, np.ndarray) and buffer.flags.writeable:
        np.copyto(buffer, value)
    else:
        module._buffers[name] = np.array(value, copy=True)
