r"""The backward pass: visit the graph in reverse topological order, summing gradients.

Reverse-mode differentiation needs every gradient :math:`\partial L/\partial t` to be
complete (summed over every use of ``t``) before ``t``'s own rule passes it on:
a topological order guarantees that. Both loops here are iterative, so a chain of
100,000 operations needs no recursion.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from minitorch_ref.autograd.tensor import Tensor


def topological_order(
    root: Tensor, follow: Callable[[Tensor], bool] = lambda t: t.requires_grad
) -> list[Tensor]:
    """``root`` and the tensors it was computed from, each listed after all its parents.

    Depth-first search with an explicit stack: a tensor is emitted once all its
    parents have been (post-order), and is visited once however often it is used.

    Args:
        root: where to start (the loss).
        follow: which parents to walk into; by default the ones that need a gradient.
    """
    order, seen = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if follow(p) and id(p) not in seen)
    return order


def run_backward(root: Tensor, grad: np.ndarray) -> None:
    r"""Propagate ``grad`` (:math:`\partial L/\partial\,\mathrm{root}`) to every leaf needing it.

    The gradients of intermediate tensors live in a local table for this call
    only; each is handed to its node's rule once complete, then dropped. Leaves
    (and tensors marked with ``retain_grad()``) *add* theirs to ``.grad``. So a
    second call on the same graph adds the same gradients once more, as in
    PyTorch, instead of re-sending what the first call left in the intermediates.
    """
    pending = {id(root): grad}
    for node in reversed(topological_order(root)):
        grad = pending.pop(id(node), None)
        if grad is None:  # a custom rule returned None for it: no gradient flows here
            continue
        if node.grad_fn is None or node._retains_grad:
            _accumulate(node, grad)
        if node.grad_fn is None:
            continue
        parent_grads = node.grad_fn.backward(grad)
        _check_rule(node, parent_grads)
        for parent, parent_grad in zip(node.parents, parent_grads):
            if parent.requires_grad and parent_grad is not None:
                key = id(parent)
                pending[key] = pending[key] + parent_grad if key in pending else parent_grad


def _accumulate(tensor: Tensor, grad: np.ndarray) -> None:
    if tensor.grad is None:
        # A copy: the same array can flow to several tensors (Add passes G to both).
        tensor.grad = np.array(grad, dtype=tensor.dtype)
    else:
        tensor.grad += grad


def _check_rule(node: Tensor, parent_grads: tuple) -> None:
    """One gradient per parent, each of its parent's shape: what a new Function gets wrong first."""
    name = node.grad_fn.name
    if len(parent_grads) != len(node.parents):
        raise RuntimeError(
            f"{name}.backward returned {len(parent_grads)} gradients for {len(node.parents)} inputs"
        )
    for i, (parent, g) in enumerate(zip(node.parents, parent_grads)):
        if g is not None and parent.requires_grad and np.shape(g) != parent.shape:
            raise RuntimeError(
                f"{name}.backward returned a gradient of shape {np.shape(g)} for input {i}, "
                f"which has shape {parent.shape}"
            )
