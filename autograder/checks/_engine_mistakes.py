"""Engine bugs, simulated: what a backward pass computes on the reference's graph when nodes
pass their gradients on in a given order, combining what a tensor receives with a given rule;
the classic engine bugs are a wrong order or a wrong rule."""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

from minitorch_ref.autograd.graph import topological_order


Mistake = tuple[np.ndarray, str]  # what a classic mistake gives, and its explanation

REVISITED = (
    "a node was visited more than once: your topological order lists a tensor each time it "
    "is reached (no `visited` set), so its backward rule runs several times and sends its "
    "gradient again. Mark each tensor as visited and list it once."
)


COUNTED_ONCE = (
    "a tensor used several times received only one of its gradients (the gradient was "
    "counted once): add up (+=) the gradients that every use sends, never assign."
)


OUT_OF_ORDER = (
    "a tensor passed its gradient on before all its uses had sent theirs: process the nodes "
    "in reverse topological order (each tensor after every tensor computed from it)."
)


def _reverse_topological(root) -> list:
    return topological_order(root)[::-1]


def _with_repeats(root) -> list:
    """Depth-first post-order with no visited set (a node once per path), root first."""
    order, stack = [], [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((p, False) for p in reversed(node.parents) if p.requires_grad)
    return order[::-1]


def _breadth_first(root) -> list:
    order, seen, queue = [], {id(root)}, deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for parent in node.parents:
            if parent.requires_grad and id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return order


def _add(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    return old + new


def _keep_last(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    return new


def _send(root, seed: np.ndarray, order: list, combine: Callable,
          start: dict | None = None) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Pass the gradients on in ``order``; ``id(tensor) ->`` the gradient it received in
    all, and the gradient it held when its turn came (what an engine that reads a tensor's
    gradient only then, from a dict, gives it)."""
    received, at_turn = dict(start or {}), {}
    received[id(root)] = seed
    for node in order:
        grad = received.get(id(node))
        if grad is None:
            continue
        at_turn[id(node)] = grad
        if node.grad_fn is None:
            continue
        for parent, g in zip(node.parents, node.grad_fn.backward(grad)):
            if parent.requires_grad and g is not None:
                key = id(parent)
                received[key] = combine(received[key], g) if key in received else np.array(g)
    return received, at_turn


def engine_mistakes(root, G: np.ndarray, leaf) -> list[Mistake]:
    """What leaf ``leaf`` receives from the classic engine bugs, with their explanations."""
    found = []
    for order, combine, message in ((_with_repeats, _add, REVISITED),
                                    (_reverse_topological, _keep_last, COUNTED_ONCE),
                                    (_breadth_first, _add, OUT_OF_ORDER)):
        for grads in _send(root, G, order(root), combine):
            if id(leaf) in grads:
                found.append((grads[id(leaf)], message))
    return found


def stale_second_pass(root, G: np.ndarray, leaf) -> np.ndarray | None:
    """A leaf's gradient after two passes of micrograd's engine: the intermediate tensors
    keep the gradients of the first pass and the second adds to them and sends them on."""
    order = _reverse_topological(root)
    first, _ = _send(root, G, order, _add)
    return _send(root, G, order, _add, start=first)[0].get(id(leaf))
