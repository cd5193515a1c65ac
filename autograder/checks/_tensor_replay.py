"""The gradients a student's graph gives with the student's own backward rules and a right
engine: the grader's, run here, outside the kernel.

The engine cells (reused nodes, a second backward pass) judge how gradients travel through a
graph, not the rule of each operation, which the operation cells judge. When a student's
gradients differ from the reference's, ``replay`` walks the graph the student's Tensor built
(``parents``, ``grad_fn``, ``requires_grad``: the given Tensor's attributes), calls each
node's own ``grad_fn.backward(g)`` once, in reverse topological order, and adds what every
use of a tensor receives. Equal gradients mean the student's engine is right and the
difference comes from a rule. Graded from outside, every call travels to the kernel; the
grader's engine itself never does.
"""
from __future__ import annotations

import numpy as np

from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.failure import CheckFailure

MAX_NODES = 200   # the engine cells' graphs are small; a larger one is not replayed


def _order(root) -> list:
    """The tensors requiring grad that ``root`` comes from, parents before children."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, listed = stack.pop()
        if listed:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > MAX_NODES:
            raise CheckFailure("the graph is too large to replay")
        stack.append((node, True))
        parents = call("tensor.parents", getattr, node, "parents") or ()
        stack.extend((p, False) for p in parents
                     if call("tensor.requires_grad", getattr, p, "requires_grad")
                     and id(p) not in seen)
    return order


def replay(root, upstream: np.ndarray, leaves: dict[str, object]) -> dict[str, np.ndarray]:
    """The gradient every leaf of ``leaves`` gets from ``root`` with ``upstream`` as dL/droot,
    by the student's own rules and the grader's engine; a CheckFailure if a rule fails."""
    grads = {id(root): asarray(upstream, dtype=float)}
    found: dict[int, np.ndarray] = {}
    for node in reversed(_order(root)):
        g = grads.pop(id(node), None)
        function = call("tensor.grad_fn", getattr, node, "grad_fn")
        if g is None:
            continue
        if function is None:
            found[id(node)] = g
            continue
        parents = call("tensor.parents", getattr, node, "parents")
        received = call(f"{getattr(function, '_type', type(function).__name__)}.backward",
                        getattr(function, "backward"), g.copy())
        for parent, parent_grad in zip(parents, received):
            if parent_grad is not None and call("tensor.requires_grad", getattr, parent,
                                                "requires_grad"):
                key = id(parent)
                parent_grad = asarray(parent_grad, dtype=float)
                grads[key] = grads[key] + parent_grad if key in grads else parent_grad
    return {name: found.get(id(leaf), np.zeros(0)) for name, leaf in leaves.items()}
