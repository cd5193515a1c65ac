"""Optional fused training step: a Sequential's forward, loss and backward in one call.

Not the code to mirror: ``Linear``, ``ReLU`` and ``CrossEntropyLoss`` are. This is
their arithmetic rearranged for speed, and tests/minitorch_ref/test_fused_step.py
checks it against them. ``forward_backward`` replaces::

    optimizer.zero_grad()
    loss = criterion(model(x), target)
    model.backward(criterion.backward())

and differs from it in four ways, none visible in the numbers (up to rounding):

- no gradient for the network's input: backward stops at the first module with
  parameters, and a ``Linear`` there computes dL/dW and dL/db only, as PyTorch's
  autograd does for data that does not require grad (for an MNIST MLP that is a
  third of the first layer's matrix multiplies);
- gradients are written into ``.grad`` (``np.matmul(..., out=)``), not added, so
  there is no ``zero_grad()`` pass and no temporary the size of a weight;
- a ``ReLU`` right after a ``Linear`` works in place on the ``Linear``'s output;
- ``CrossEntropyLoss`` (no label smoothing, ``(N, C)`` scores, no ignored target) turns
  its softmax into the gradient in place, skipping the one-hot target matrix.

Any other module (or a subclass) runs through its own ``forward`` and ``backward``.
A parameter shared by two modules would get only one module's gradient: not supported.
"""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn._checks import check_features
from minitorch_ref.nn.activation import ReLU
from minitorch_ref.nn.container import Sequential
from minitorch_ref.nn.linear import Linear
from minitorch_ref.nn.loss import CrossEntropyLoss, Loss, _check_class_scores
from minitorch_ref.nn.module import Module


def forward_backward(model: Module, criterion: Loss, x: np.ndarray,
                     target: np.ndarray) -> float:
    """The loss of one batch, with every parameter's ``.grad`` set to its gradient.

    Args:
        model: a ``Sequential`` (or one module); its ``Linear`` and ``ReLU`` children
            take the fused path.
        criterion: the loss; ``CrossEntropyLoss`` without label smoothing is fused.
        x: the input batch, ``(N, *)``; no gradient is computed for it.
        target: what ``criterion`` compares the output with.

    Returns:
        The loss, a float, as ``criterion(model(x), target)`` returns it.
    """
    modules = list(model) if isinstance(model, Sequential) else [model]
    inputs = []   # inputs[i] is what modules[i] received
    fresh = False   # is x an array no one else holds (a fused Linear's output)?
    for module in modules:
        inputs.append(x)
        x = _forward(module, x, in_place=fresh)
        fresh = type(module) is Linear
    loss, grad = _loss_and_gradient(criterion, x, target)
    first = next((i for i, m in enumerate(modules) if type(m) is Linear or m.parameters()),
                 len(modules))   # a Linear has parameters: no need to list them each step
    for index in reversed(range(first, len(modules))):
        grad = _backward(modules[index], inputs[index], grad, need_input_grad=index > first)
    return loss


def _forward(module: Module, x: np.ndarray, in_place: bool) -> np.ndarray:
    if type(module) is Linear:
        y = check_features("Linear", x, module.in_features) @ module.weight.data
        if module.bias is not None:
            y += module.bias.data
        return y
    if type(module) is ReLU:
        return np.maximum(x, 0, out=x if in_place else None)
    return module(x)


def _backward(module: Module, x: np.ndarray, grad: np.ndarray,
              need_input_grad: bool) -> np.ndarray | None:
    """dL/d(input) of ``module`` from dL/d(output), writing its parameters' gradients."""
    if type(module) is Linear:
        np.matmul(x.T, grad, out=module.weight.grad)
        if module.bias is not None:
            grad.sum(axis=0, out=module.bias.grad)
        return grad @ module.weight.data.T if need_input_grad else None
    if type(module) is ReLU:
        return grad * (x > 0)   # the same mask whether x is the input or, in place, the output
    for param in module.parameters():
        param.zero_grad()
    return module.backward(grad)


def _loss_and_gradient(criterion: Loss, scores: np.ndarray,
                       target: np.ndarray) -> tuple[float, np.ndarray]:
    """The loss and dL/d(scores)."""
    if (type(criterion) is not CrossEntropyLoss or criterion.label_smoothing
            or np.ndim(scores) != 2 or np.any(np.asarray(target) == criterion.ignore_index)):
        loss = criterion(scores, target)
        return loss, criterion.backward()
    scores, target = _check_class_scores("CrossEntropyLoss", scores, target)
    rows = np.arange(len(scores))
    scores = scores - scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    sums = probs.sum(axis=1, keepdims=True)
    losses = np.log(sums[:, 0]) - scores[rows, target]   # log-sum-exp minus the target's score
    probs /= sums
    probs[rows, target] -= 1                              # softmax(Z) - onehot(y)
    probs *= criterion._scale(len(scores))
    return criterion._reduce(losses), probs
