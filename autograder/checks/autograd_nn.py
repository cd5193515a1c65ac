"""Checks of the bonus unit's last exercise, on the student's own Tensor: ``cross_entropy``
composed from Tensor operations (against the course's own composition, which gives unit 5's
CrossEntropyLoss), and ``TensorMLP`` (its logits and, through the student's engine, its
parameters' gradients against the manual network of units 3-5 with the same weights)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from scipy.special import logsumexp

from autograder.checks._calls import type_of
from autograder.checks._tensor_cases import (Case, compute, expect_grad, make_leaf, randn,
                                             run_backward, same, upstream_gradient)
from autograder.checks.autograd_mlp import cross_entropy_ops
from autograder import verdicts
from autograder.registry import CHECKS, check
from autograder.remote.proxy import Remote
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, scaled, when
from course.testing.failure import CheckFailure, fail
import minitorch_ref
from minitorch_ref import nn as manual


# ============================================================================ cross_entropy
@dataclass(frozen=True)
class ComposedCase(Case):
    """A case whose expected values come from ``reference`` (the course's own composition) on
    the reference Tensor, while ``fn`` calls the student's function."""

    reference: Callable | None = None
    target: np.ndarray | None = None

    def expected(self, seed: int = 0):
        return Case.expected(replace(self, fn=self.reference), seed)


def cross_entropy_case(cross_entropy: Callable, Z: np.ndarray, y: np.ndarray) -> ComposedCase:
    shown = np.array2string(y, separator=", ") if y.size <= 8 else f"{y.size} classes"
    return ComposedCase(f"L = cross_entropy(Z, y) with y = {shown}",
                        lambda logits: cross_entropy(logits, y.copy()), {"Z": Z},
                        reference=lambda logits: cross_entropy_ops(logits, y), target=y)


def cross_entropy_signatures(Z: np.ndarray, y: np.ndarray) -> tuple[Signature, ...]:
    """What the classic mistakes give for the loss value (a one-element array)."""
    n, classes = Z.shape
    rows = np.arange(n)
    shift = Z - Z.max(axis=0)

    def is_(value: float) -> Callable[[np.ndarray, np.ndarray], bool]:
        return lambda g, e: close(g, np.full(g.shape, value))

    summed = scaled(n, "the loss is summed over the batch: take the mean over the N examples "
                       "(CrossEntropyLoss's reduction='mean').", "summed")
    return (
        when("overflow", lambda g, e: not np.isfinite(g).all(),
             "the loss is inf or NaN for large logits: exp overflows. Subtract each row's "
             "maximum (a constant taken from logits.data, with keepdims=True) before exp."),
    ) + ((summed,) if n > 1 else ()) + (
        when("no_target", lambda g, e: is_(logsumexp(Z, axis=1).mean())(g, e) or is_(
            logsumexp(Z - Z.max(axis=1, keepdims=True), axis=1).mean())(g, e),
             "the loss is the mean log-sum-exp alone: subtract each row's score of the true "
             "class, (S * np.eye(C)[y]).sum(axis=1)."),
        when("log_mean", is_(np.mean(logsumexp(Z, axis=1) - np.log(classes) - Z[rows, y])),
             "the log is taken of the mean of exp over the classes: log-sum-exp sums them."),
        when("column_shift", is_(np.mean(logsumexp(shift, axis=1) - shift[rows, y])),
             "the maximum is taken over the batch (axis 0): the shift must be constant within "
             "a row, m_n = max over the classes (axis=1, keepdims=True), or it does not cancel."),
        scaled(-1.0, "the sign is flipped: L = log-sum-exp of the scores minus the true "
                     "class's score.", "sign"),
    )


def cross_entropy_inputs() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    cases = [(randn(n, c, seed=seed, scale=2.0), rng.integers(0, c, n))
             for seed, (n, c) in enumerate(((5, 4), (1, 3), (8, 10)))]
    return cases + [(np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, -1000.0]]), np.array([1, 1]))]


@check
def tensor_cross_entropy(cross_entropy, Tensor):
    """``cross_entropy(logits, target)`` on the student's Tensor: a one-element loss equal to
    unit 5's mean cross-entropy (logits of shapes (5, 4), (1, 3), (8, 10) and +-1000), and,
    after ``backward()``, ``Z.grad = (softmax(Z) - onehot(y)) / N``."""
    for seed, (Z, y) in enumerate(cross_entropy_inputs()):
        with np.errstate(over="ignore", invalid="ignore"):   # the check names an overflow
            expect_cross_entropy(Tensor, cross_entropy_case(cross_entropy, Z, y), seed)


def expect_cross_entropy(Tensor: type, case: ComposedCase, seed: int) -> None:
    """The case's value (one number), then ``Z.grad`` after ``backward()``."""
    expected = case.expected(seed)
    leaves, out = compute(Tensor, case)
    value = as_array(f"the value of {case.text}", getattr(out, "data", None))
    if value.size != 1:
        fail(f"{case.text} has shape {value.shape} for Z of shape {case.inputs['Z'].shape}: the "
             "loss is one number, the mean over the batch of each example's loss.")
    expect_close(f"the value of {case.text}", value.reshape(()), expected.value, case.where,
                 cross_entropy_signatures(case.inputs["Z"], case.target))
    try:
        run_backward(case, out, expected)
        expect_grad(Tensor, case, "Z", leaves["Z"], expected)
    except CheckFailure:
        if not _engine_failed(Tensor):
            raise
        own = _own_gradient(Tensor, case, expected)
        if not (own is RAISED or same(getattr(leaves["Z"], "grad", None), own)):
            raise


def _engine_failed(Tensor: type) -> bool:
    """Whether a cell that judges the student's Tensor itself (its rules, its engine) has
    failed on this submission (``autograder.verdicts``): only then may the course's composition
    run on that Tensor explain a wrong gradient (it can narrow that excuse, never open it)."""
    return any(verdicts.failed(Tensor, name) for name, judged in CHECKS.items()
               if "Tensor" in judged.targets and name != tensor_cross_entropy.__name__)


RAISED = object()   # what the course's composition gets when the student's backward raises


def _own_gradient(Tensor: type, case: ComposedCase, expected) -> np.ndarray | object:
    """Z.grad of the course's own composition computed with the student's Tensor, when their
    Tensor's rules or engine (the other cells') make it differ from the reference's: a
    cross_entropy composed as the course's gets that same gradient (``RAISED`` when their
    backward raises on it too). An empty array when it is right (or all zeros)."""
    composed = replace(case, fn=case.reference)
    leaves, out = compute(Tensor, composed)
    try:
        run_backward(composed, out, expected)
    except CheckFailure:
        return RAISED
    own = as_array("Z.grad", getattr(leaves["Z"], "grad", None))
    return np.zeros(1) if same(own, expected.grads["Z"]) or not own.any() else own


# ============================================================================ TensorMLP
@dataclass(frozen=True)
class Network:
    sizes: tuple[int, ...]
    batch: int
    seed: int

    def linears(self) -> list:
        minitorch_ref.manual_seed(self.seed)
        return [manual.Linear(n_in, n_out) for n_in, n_out in zip(self.sizes, self.sizes[1:])]

    @property
    def where(self) -> str:
        return (f"the {'-'.join(map(str, self.sizes))} network (ReLU between the layers), "
                f"X of shape ({self.batch}, {self.sizes[0]})")


NETWORKS = (Network((2, 16, 16, 3), 6, 0), Network((4, 3), 1, 1), Network((3, 8, 8, 8, 2), 5, 2))


def chain(linears: list, X: np.ndarray, relu_last: bool = False, relu_between: bool = True,
          bias: bool = True, relu_input: bool = False) -> np.ndarray:
    """The logits ``X W1 + b1 -> relu -> ...`` in numpy, or one of the classic variants."""
    h = np.maximum(X, 0) if relu_input else X
    for i, layer in enumerate(linears):
        h = h @ layer.weight.data + (layer.bias.data if bias else 0)
        if relu_last or (relu_between and i < len(linears) - 1):
            h = np.maximum(h, 0)
    return h


def logit_signatures(linears: list, X: np.ndarray) -> tuple[Signature, ...]:
    def variant(name: str, message: str, **how) -> Signature:
        wrong = chain(linears, X, **how)
        return when(name, lambda g, e: close(g, wrong), message)

    return (
        variant("relu_last", "a ReLU follows the last layer too: the logits are the last "
                "layer's output itself (they can be negative).", relu_last=True),
        variant("no_relu", "there is no ReLU between the layers.", relu_between=False),
        variant("no_bias", "the biases are left out: each layer computes h @ W + b.", bias=False),
        variant("relu_input", "the input goes through a ReLU before the first layer: only the "
                "hidden layers' outputs do.", relu_input=True),
    )


def manual_grads(linears: list, X: np.ndarray, G: np.ndarray) -> list[np.ndarray]:
    """dL/dW and dL/db of every layer for the upstream gradient ``G``, by the manual backward."""
    layers = []
    for i, layer in enumerate(linears):
        layers += [layer] + ([manual.ReLU()] if i < len(linears) - 1 else [])
    network = manual.Sequential(*layers)
    network(X)
    network.backward(G)
    return [g for layer in linears for g in (layer.weight.grad, layer.bias.grad)]


DETACHED = ("{what}: the logits are right but no gradient reached {name}. Compute them from "
            "the model's own Tensors (self.layers), not from new Tensors made from their .data, "
            "which start a new graph.")


def handed(TensorMLP, linears: list) -> list:
    """The manual layers for the student's TensorMLP: their weights in doubles made in the
    student's kernel when graded from outside (the manual layers cannot travel)."""
    if not isinstance(TensorMLP, Remote):
        return linears
    session = TensorMLP._session
    return [session.send("double", "linear", layer.weight.data, layer.bias.data)
            for layer in linears]


@check
def tensor_mlp_model(TensorMLP):
    """``TensorMLP(linears)(X)`` for networks of one to four layers: the logits equal the
    manual network's (same weights); after ``logits.backward(G)`` every parameter's grad (the
    student's engine at work) equals the manual backward pass's."""
    for network in NETWORKS:
        linears = network.linears()
        X = randn(network.batch, network.sizes[0], seed=network.seed + 10)
        model = construct(TensorMLP, handed(TensorMLP, linears))
        logits = call("model(X), TensorMLP.__call__", model, X.copy())
        expect_close("model(X).data, the logits", getattr(logits, "data", None), chain(linears, X),
                     network.where, logit_signatures(linears, X))
        if not getattr(logits, "requires_grad", True):
            fail(DETACHED.format(what="the logits do not require grad", name="the parameters"))
        G = upstream_gradient(logits.data.shape, network.seed)
        try:
            call("model(X).backward(G)", logits.backward, G.copy())
        except CheckFailure:
            if _own_network_grads(TensorMLP, linears, X, G, []) is not RAISED:
                raise
            continue
        params = list(call("model.parameters()", model.parameters))
        names = [f"{kind}{i}" for i in range(1, len(linears) + 1) for kind in ("W", "b")]
        wanted = manual_grads(linears, X, G)
        own = None
        for name, param, want in zip(names, params, wanted):
            what = f"{name}.grad after model(X).backward(G)"
            if getattr(param, "grad", None) is None:
                fail(DETACHED.format(what=f"{what} is None", name=name))
            try:
                expect_close(what, param.grad, want, network.where + ", the manual backward pass")
            except CheckFailure:
                own = own if own is not None else _own_network_grads(TensorMLP, linears, X, G,
                                                                      wanted)
                if not (own and same(param.grad, own[names.index(name)])):
                    raise


def _own_network_grads(TensorMLP, linears: list, X: np.ndarray, G: np.ndarray,
                       wanted: list[np.ndarray]) -> list[np.ndarray] | object:
    """The parameters' gradients of X @ W + b with ReLU between the layers, computed with the
    student's own Tensor on leaves holding the same weights, when their Tensor's rules or
    engine (the other cells') make them differ from the manual network's: a TensorMLP that
    composes its layers so gets the same (``RAISED`` when their backward raises on it too).
    Empty otherwise."""
    Tensor = _tensor_class(TensorMLP, linears)
    if Tensor is None:
        return []
    try:
        leaves = [make_leaf(Tensor, f"{kind}{i}", array) for i, layer in enumerate(linears, 1)
                  for kind, array in (("W", layer.weight.data), ("b", layer.bias.data))]
        out = call("X @ W + b, relu between (your Tensor)", _composed, Tensor, leaves, X)
    except CheckFailure:
        return []
    try:
        call("backward(G) (your Tensor)", out.backward, G.copy())
    except CheckFailure:
        return RAISED
    try:
        own = [as_array("grad", getattr(leaf, "grad", None)) for leaf in leaves]
    except CheckFailure:
        return []
    right = all(same(g, w) for g, w in zip(own, wanted))
    return [] if right or not any(g.any() for g in own) else own


def _composed(Tensor: type, leaves: list, X: np.ndarray):
    h = Tensor(X)
    pairs = list(zip(leaves[::2], leaves[1::2]))
    for i, (W, b) in enumerate(pairs):
        h = h @ W + b
        if i < len(pairs) - 1:
            h = h.relu()
    return h


def _tensor_class(TensorMLP, linears: list):
    """The student's Tensor class, from a TensorMLP's first parameter (None if not there)."""
    try:
        model = construct(TensorMLP, handed(TensorMLP, linears))
        return type_of(list(call("model.parameters()", model.parameters))[0])
    except (CheckFailure, IndexError):
        return None
