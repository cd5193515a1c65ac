"""Look inside a student's model without changing it: layers, activations, gradients.

Works with any Sequential-like model that follows the course API (a ``forward``
or ``__call__``, ``backward``, ``parameters()``, ``train(mode)``/``eval()``), so
plots and widgets run on the student's own classes.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, NamedTuple

import numpy as np


def call(module: Any, x: np.ndarray) -> np.ndarray:
    """``module(x)`` if the module is callable, else ``module.forward(x)``, as an array."""
    return np.asarray(module(x) if callable(module) else module.forward(x))


def layers_of(model: Any) -> list[Any]:
    """The layers of a Sequential-like model: iterating over it, or its ``layers`` list."""
    if hasattr(model, "__iter__"):
        return list(model)
    if hasattr(model, "layers"):
        return list(model.layers)
    raise ValueError(
        f"{type(model).__name__} is not Sequential-like: iterating over it (or its "
        "'layers' attribute) must give its layers in order"
    )


@contextlib.contextmanager
def evaluation_mode(model: Any) -> Iterator[None]:
    """Put ``model`` in eval mode (if it has ``eval``) and restore its previous mode on exit."""
    was_training = getattr(model, "training", None)
    if hasattr(model, "eval"):
        model.eval()
    try:
        yield
    finally:
        if was_training is not None and hasattr(model, "train"):
            model.train(was_training)


@contextlib.contextmanager
def preserved_grads(model: Any) -> Iterator[None]:
    """Zero every parameter's gradient inside the block, and put the old values back after."""
    params = list(model.parameters()) if hasattr(model, "parameters") else []
    saved = [np.array(p.grad, copy=True) for p in params]
    for p in params:
        p.grad[...] = 0
    try:
        yield
    finally:
        for p, grad in zip(params, saved):
            np.copyto(p.grad, grad)


class LayerTrace(NamedTuple):
    """What one layer saw in a forward and a backward pass over a batch of ``N`` samples.

    ``name``: ``'<index>: <kind>'``; ``kind``: the layer's class name, e.g. ``'ReLU'``;
    ``output``: the layer's output, ``(N, width)``; ``grad_output``: ``dL/d output``,
    the same shape; ``grad_norm``: the L2 norm of the layer's parameter gradients
    (``None`` for a layer without parameters).
    """

    name: str
    kind: str
    output: np.ndarray
    grad_output: np.ndarray
    grad_norm: float | None


def _param_grad_norm(layer: Any) -> float | None:
    params = list(layer.parameters()) if hasattr(layer, "parameters") else []
    if not params:
        return None
    return float(np.sqrt(sum(np.sum(np.square(p.grad)) for p in params)))


def trace_layers(model: Any, X: np.ndarray, y: np.ndarray, loss: Any) -> tuple[float, list[LayerTrace]]:
    """One forward and backward pass, layer by layer, in eval mode, leaving the model as it was.

    Args:
        model: a Sequential-like model.
        X: inputs, ``(N, in_features)``.
        y: targets, as ``loss`` expects them.
        loss: a loss object, ``loss(pred, y) -> float`` and ``loss.backward() -> dL/dpred``.

    Returns:
        The loss value and one ``LayerTrace`` per layer, first layer first.
    """
    layers = layers_of(model)
    with evaluation_mode(model), preserved_grads(model):
        outputs = []
        for layer in layers:
            X = call(layer, X)
            outputs.append(X)
        value = float(loss(X, y))
        grads = [np.asarray(loss.backward())]
        for layer in reversed(layers[1:]):
            grads.append(np.asarray(layer.backward(grads[-1])))
        layers[0].backward(grads[-1])
        grads.reverse()
        norms = [_param_grad_norm(layer) for layer in layers]
    kinds = [type(layer).__name__ for layer in layers]
    names = [f"{i}: {kind}" for i, kind in enumerate(kinds)]
    return value, [LayerTrace(*fields) for fields in zip(names, kinds, outputs, grads, norms)]


def dead_share(output: np.ndarray) -> float:
    """The share of units (columns of ``output``, ``(N, width)``) that are 0 for every sample.

    After a ReLU such a unit is "dead": its gradient is 0 too, so it never recovers.
    """
    return float(np.mean(np.all(output == 0, axis=0)))
