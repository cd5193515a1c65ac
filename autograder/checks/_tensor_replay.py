"""The gradients a student's graph gives with the student's own backward rules and a right
engine: the grader's, run here, outside the kernel.

The engine cells (reused nodes, a second backward pass) judge how gradients travel through a
graph, not the rule of each operation, which the operation cells judge. When a student's
gradients differ from the reference's, ``replay`` walks the graph the student's Tensor built
(``parents``, ``grad_fn``, ``requires_grad``: the given Tensor's attributes, in the
reference's topological order), calls each
node's own ``grad_fn.backward(g)`` once, in reverse topological order, and adds what every
use of a tensor receives. Equal gradients mean the student's engine is right and the
difference comes from a rule. Graded from outside, every call travels to the kernel; the
grader's engine itself never does.
"""
from __future__ import annotations

import numpy as np

from autograder.sandbox import call
from course.testing._trusted import asarray
from minitorch_ref.autograd.graph import topological_order

def replay(root, upstream: np.ndarray, leaves: dict[str, object]) -> dict[str, np.ndarray]:
    """The gradient every leaf of ``leaves`` gets from ``root`` with ``upstream`` as dL/droot,
    by the student's own rules and the grader's engine; a CheckFailure if a rule fails."""
    grads = {id(root): asarray(upstream, dtype=float)}
    found: dict[int, np.ndarray] = {}
    for node in reversed(topological_order(root)):
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
