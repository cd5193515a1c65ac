r"""Tensor: a numpy array that remembers how it was computed, so it can differentiate.

Every operation on tensors that require grad records a node: the result keeps its
``parents`` and the ``Function`` (``grad_fn``) holding the local backward rule.
``loss.backward()`` then walks these nodes back from the loss (see ``graph.py``).
"""
from __future__ import annotations

from typing import Union

import numpy as np

from minitorch_ref.autograd import functions as F
from minitorch_ref.autograd.functions import Function
from minitorch_ref.autograd.grad_mode import is_grad_enabled
from minitorch_ref.autograd.graph import run_backward

Operand = Union["Tensor", np.ndarray, float, int]


class Tensor:
    r"""An array with a gradient and a record of the operation that produced it.

    Supports ``+ - * / ** @`` (with numpy broadcasting, and numbers or arrays on
    either side), unary ``-``, ``exp``, ``log``, ``relu``, ``tanh``, ``sigmoid``,
    ``sum``, ``mean``, ``reshape``, ``transpose``/``.T`` and indexing. After
    ``loss.backward()``, ``t.grad`` holds :math:`\partial L/\partial t` for every leaf
    ``t`` with ``requires_grad=True``.

    As in PyTorch: ``grad`` is None until a backward pass reaches the tensor, then
    each backward *adds* to it (set ``t.grad = None`` to reset); intermediate
    (non-leaf) tensors keep no ``grad`` unless ``retain_grad()`` was called. Unlike
    PyTorch, the graph is not freed by ``backward()``: calling it again needs no
    ``retain_graph=True`` and adds the same gradients once more.

    Args:
        data: the values. Floating arrays keep their dtype (float32 stays float32)
            and are not copied, like ``torch.as_tensor``; numbers, lists and
            integer arrays become float64.
        requires_grad: whether ``backward()`` computes this tensor's gradient.
        dtype: convert ``data`` to this floating dtype first.

    Attributes:
        data: the values, an ``np.ndarray``.
        grad: :math:`\partial L/\partial\,\mathrm{self}` (same shape) or None.
        grad_fn: the ``Function`` that produced this tensor; None for leaves.
        parents: the tensors it was computed from (empty for leaves).
    """

    # numpy defers to our reflected operators: ``np.ones(3) + t`` calls ``t.__radd__``
    # instead of building an object array of Tensors, and ``np.exp(t)`` raises.
    __array_ufunc__ = None

    def __init__(self, data: np.ndarray | float, requires_grad: bool = False, dtype=None) -> None:
        data = np.asarray(data.data if isinstance(data, Tensor) else data, dtype=dtype)
        if not np.issubdtype(data.dtype, np.floating):
            data = data.astype(np.float64)
        self.data = data
        self.requires_grad = bool(requires_grad)
        self.grad: np.ndarray | None = None
        self.grad_fn: Function | None = None
        self.parents: tuple[Tensor, ...] = ()
        self._retains_grad = False

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def is_leaf(self) -> bool:
        """Created by the user (or without grad), not by an operation that recorded a node."""
        return self.grad_fn is None

    # ------------------------------------------------------------------ autograd
    def backward(self, grad: np.ndarray | Tensor | None = None) -> None:
        r"""Add :math:`\partial L/\partial t` into ``t.grad`` for each leaf ``t`` requiring grad.

        Args:
            grad: :math:`\partial L/\partial\,\mathrm{self}`, of this tensor's shape;
                may be omitted for a one-element tensor (the loss), where it is 1.

        Raises:
            RuntimeError: if this tensor does not require grad, if ``grad`` is
                omitted for a tensor of several elements, or has the wrong shape.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn: "
                "create the leaves with requires_grad=True (or use Parameters), and do not "
                "compute the loss inside no_grad()."
            )
        if grad is None:
            if self.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs: this tensor has "
                    f"shape {self.shape}. Reduce it to a scalar first (.sum() or .mean()), or "
                    "pass backward(grad) with a gradient of its shape."
                )
            grad = np.ones_like(self.data)
        grad = np.asarray(grad.data if isinstance(grad, Tensor) else grad, dtype=self.dtype)
        if grad.shape != self.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad has a shape of {grad.shape} and the tensor "
                f"a shape of {self.shape}."
            )
        run_backward(self, grad)

    def retain_grad(self) -> None:
        """Keep (and accumulate) ``grad`` for this intermediate tensor too; no-op on leaves."""
        if not self.is_leaf:
            self._retains_grad = True

    def detach(self) -> Tensor:
        """The same data (not copied) as a new leaf outside the graph."""
        return Tensor(self.data)

    # ------------------------------------------------------------------ conversion
    def item(self) -> float:
        if self.size != 1:
            raise ValueError(
                f"item() needs a tensor with one element, got shape {self.shape}; "
                "use .data for the whole array."
            )
        return self.data.item()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() (or tensor.data) instead."
            )
        return self.data

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        array = self.numpy()
        return np.array(array, dtype=dtype, copy=True) if copy else np.asarray(array, dtype=dtype)

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="Tensor(")
        extras = [f"dtype={self.dtype}"] if self.dtype != np.float64 else []
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"Tensor({', '.join([body, *extras])})"

    # ------------------------------------------------------------------ operations
    def __add__(self, other: Operand) -> Tensor:
        return apply(F.Add(), self, other)

    def __radd__(self, other: Operand) -> Tensor:
        return apply(F.Add(), other, self)

    def __sub__(self, other: Operand) -> Tensor:
        return apply(F.Sub(), self, other)

    def __rsub__(self, other: Operand) -> Tensor:
        return apply(F.Sub(), other, self)

    def __neg__(self) -> Tensor:
        return apply(F.Neg(), self)

    def __mul__(self, other: Operand) -> Tensor:
        return apply(F.Mul(), self, other)

    def __rmul__(self, other: Operand) -> Tensor:
        return apply(F.Mul(), other, self)

    def __truediv__(self, other: Operand) -> Tensor:
        return apply(F.Div(), self, other)

    def __rtruediv__(self, other: Operand) -> Tensor:
        return apply(F.Div(), other, self)

    def __pow__(self, exponent: Operand) -> Tensor:
        return apply(F.Pow(), self, exponent)

    def __rpow__(self, base: Operand) -> Tensor:
        return apply(F.Pow(), base, self)

    def __matmul__(self, other: Operand) -> Tensor:
        return apply(F.MatMul(), self, other)

    def __rmatmul__(self, other: Operand) -> Tensor:
        return apply(F.MatMul(), other, self)

    def __getitem__(self, index) -> Tensor:
        return apply(F.GetItem(index), self)

    def exp(self) -> Tensor:
        return apply(F.Exp(), self)

    def log(self) -> Tensor:
        return apply(F.Log(), self)

    def relu(self) -> Tensor:
        return apply(F.ReLU(), self)

    def tanh(self) -> Tensor:
        return apply(F.Tanh(), self)

    def sigmoid(self) -> Tensor:
        return apply(F.Sigmoid(), self)

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return apply(F.Sum(axis, keepdims), self)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return apply(F.Mean(axis, keepdims), self)

    def reshape(self, *shape: int | tuple[int, ...]) -> Tensor:
        """``t.reshape(2, 3)`` or ``t.reshape((2, 3))``; one size may be -1."""
        return apply(F.Reshape(shape[0] if len(shape) == 1 else shape), self)

    def transpose(self, axes: tuple[int, ...] | None = None) -> Tensor:
        """Permute the axes as numpy does (reverse them if None). Note: PyTorch's
        ``transpose(dim0, dim1)`` swaps two axes; here pass the full permutation."""
        return apply(F.Transpose(None if axes is None else tuple(axes)), self)

    @property
    def T(self) -> Tensor:
        """All axes reversed (the matrix transpose for 2-D tensors)."""
        return self.transpose()


def apply(fn: Function, *operands: Operand) -> Tensor:
    """Run ``fn`` on the operands' data; if a gradient will be needed, record the node.

    Numbers and arrays among the operands become constant tensors (no grad).
    """
    like = next(x for x in operands if isinstance(x, Tensor))
    inputs = tuple(_as_operand(x, like.dtype) for x in operands)
    out = Tensor(fn.forward(*(t.data for t in inputs)))
    if is_grad_enabled() and any(t.requires_grad for t in inputs):
        fn.needs_input_grad = tuple(t.requires_grad for t in inputs)
        out.requires_grad, out.grad_fn, out.parents = True, fn, inputs
    return out


def _as_operand(x: Operand, dtype: np.dtype) -> Tensor:
    """A Tensor as is; anything else as a constant Tensor.

    Numbers (Python or numpy) and integer or bool arrays take the other operand's
    dtype, as in PyTorch, so ``2 * t`` keeps a float32 ``t`` float32. Floating
    arrays keep theirs: float64 data promotes a float32 tensor, as in numpy.
    """
    if isinstance(x, Tensor):
        return x
    x = np.asarray(x)
    if x.ndim == 0 or not np.issubdtype(x.dtype, np.floating):
        x = x.astype(dtype)
    return Tensor(x)
