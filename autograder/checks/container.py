"""Checks of the student's Sequential and of the Module interface used through it:
forward and backward chaining, parameters(), named_parameters(), grads(), zero_grad().

Each check builds the model from the student's own layers and works out what it
should do by calling those same layers one at a time, so only Sequential (and
the Module methods it inherits) is graded: a bug in Linear is not blamed on the
container (``_sequential_models`` records the calls).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder import verdicts
from autograder.checks._calls import kept_result, method, shift_in_place, type_name
from autograder.checks._sequential_models import (
    Built, Log, NEEDS_LAYERS, build, build_mixed, layer, mlp, spied_mlp,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray, isinstance_, ndarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, when
from course.testing.failure import CheckFailure, expect, fail


# (nested, batch): a batch of 1, and layers inside nested Sequentials.
SHAPES = ((False, 4), (False, 1), (True, 6))


def _inputs(batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 3)), rng.standard_normal((batch, 2))


def _where(batch: int, nested: bool) -> str:
    return f"input of shape ({batch}, 3), " + ("layers in nested Sequentials" if nested else
                                               "Linear-ReLU-Linear-ReLU-Linear")


# ---------------------------------------------------------------------------- forward, backward
@dataclass
class Expected:
    """What each layer should receive, from calling the layers one by one."""

    inputs: list[np.ndarray]         # inputs[k]: the input of layer k; inputs[-1]: the output
    grads: list[np.ndarray]          # grads[k]: the gradient layer k's backward should get
    grad_input: np.ndarray | None    # dL/dx


def _own(built: Built, k: int, name: str, value: np.ndarray) -> np.ndarray:
    """Layer k's forward or backward, called directly (not through the student's Sequential)."""
    what = f"{built.label(k)}.{name} (called on its own)"
    try:
        return as_array(what, call(what, method(built.leaves[k], name), value.copy()))
    except CheckFailure as failure:
        cls = type_name(built.leaves[k])
        raise CheckFailure(str(failure) + NEEDS_LAYERS.format(cls=cls)) from None


def chain(built: Built, x: np.ndarray, grad_output: np.ndarray | None = None) -> Expected:
    inputs = [x]
    for k in range(len(built.leaves)):
        inputs.append(_own(built, k, "forward", inputs[-1]))
    grads, g = [None] * len(built.leaves), grad_output
    for k in reversed(range(len(built.leaves)) if grad_output is not None else ()):
        grads[k] = g
        g = _own(built, k, "backward", g)
    return Expected(inputs, grads, g)


def _explained(what: str, function: Callable, value: np.ndarray, recorder: Log,
               hint: Callable[[object], str | None]) -> object:
    """``call``, with the recorder's explanation added to a failure after some layer ran."""
    try:
        return call(what, function, value.copy())
    except CheckFailure as failure:
        extra = hint(None) if recorder.calls else None
        extra = f"\n  Likely mistake: {extra}" if extra else ""
        raise CheckFailure(str(failure) + extra) from None


def _as_signature(hint: str | None) -> tuple[Signature, ...]:
    return (when("recorded", lambda g, e: True, hint),) if hint else ()


COPIES = ("the model works on copies of the layers it was given: keep the layers themselves "
          "(no copy.deepcopy), so that their parameters are the ones that get trained.")


def _forward_hint(built: Built, recorder: Log, expected: Expected, got) -> str | None:
    n = len(built.leaves)
    if any(c.layer < 0 for c in recorder.calls):
        return COPIES
    for k in range(n - 1):
        if got is not None and close(asarray(got, dtype=float), expected.inputs[k + 1]):
            return (f"Sequential.forward returned the output of {built.label(k)}, not of the last "
                    "layer: is the `return` inside the loop?")
    order = [c.layer for c in recorder.of("forward")]
    missing = [k for k in range(n) if k not in order]
    if missing:
        return (f"Sequential.forward never called {built.label(missing[0])}: apply every layer, "
                "in order, including those inside a nested Sequential.")
    if order != list(range(n)):
        return (f"Sequential.forward called the layers in the order {order}; call each once, "
                "first to last.")
    for c in recorder.of("forward"):
        if c.given is None or not close(c.given, expected.inputs[c.layer]):
            source = ("the model's input x" if c.layer == 0
                      else f"the output of {built.label(c.layer - 1)}")
            return (f"{built.label(c.layer)} received the wrong input; it should get {source}: "
                    "x = layer(x) for each layer in turn.")
    return None


@check(hears=("log",))
def sequential_forward(Sequential, Linear, ReLU):
    """forward calls every layer once, in order, each on the previous layer's output, and returns
    the last output (a batch of 1, and layers inside nested Sequentials)."""
    for seed, (nested, batch) in enumerate(SHAPES):
        built, recorder = spied_mlp(Sequential, Linear, ReLU, seed, nested)
        x, _ = _inputs(batch, seed)
        expected = chain(built, x)
        recorder.clear()

        def hint(got):
            return _forward_hint(built, recorder, expected, got)
        got = _explained("Sequential.forward", method(built.model, "forward"), x, recorder, hint)
        expect_close("Sequential.forward output", got, expected.inputs[-1], _where(batch, nested),
                     _as_signature(hint(got)))


def _backward_hint(built: Built, recorder: Log, expected: Expected) -> str | None:
    n = len(built.leaves)
    if any(c.layer < 0 for c in recorder.calls):
        return COPIES
    order = [c.layer for c in recorder.of("backward")]
    reverse = list(reversed(range(n)))
    if order and order[0] == 0:
        return ("Sequential.backward started with the first layer: it runs in forward order. "
                "Backpropagation goes from the last layer to the first: loop over the layers "
                "reversed.")
    if order != reverse[:len(order)] or len(set(order)) != len(order):
        return (f"Sequential.backward called the layers in the order {order}; call each once, "
                "last to first.")
    for c in recorder.of("backward"):
        if c.given is None or not close(c.given, expected.grads[c.layer]):
            source = ("the model's grad_output" if c.layer == n - 1
                      else f"what {built.label(c.layer + 1)}.backward returned")
            return (f"{built.label(c.layer)} received the wrong gradient; it should get {source}: "
                    "grad = layer.backward(grad) for each layer, last to first.")
    if len(order) < n:
        return f"Sequential.backward never called {built.label(reverse[len(order)])}.backward."
    return None


def _forward_for_backward(Sequential, built: Built, x: np.ndarray) -> None:
    """The model's own forward (its backward may need what it saves), then each layer's forward
    again, so that a forward bug is reported by sequential_forward, not here: a forward that
    raises is forgiven only where that cell failed (``autograder.verdicts``)."""
    try:
        call("Sequential.forward", method(built.model, "forward"), x.copy())
    except CheckFailure:
        if not verdicts.failed(Sequential, sequential_forward.__name__):
            raise
    chain(built, x)


@check(hears=("log",))
def sequential_backward(Sequential, Linear, ReLU):
    """backward calls every layer's backward once, last to first, each on the gradient the next
    layer returned, and returns dL/dx; every layer's parameter gradients come out right."""
    for seed, (nested, batch) in enumerate(SHAPES):
        twin = build(Sequential, mlp(Linear, ReLU, seed), nested)
        x, grad_output = _inputs(batch, seed)
        expected = chain(twin, x, grad_output)
        built, recorder = spied_mlp(Sequential, Linear, ReLU, seed, nested)
        _forward_for_backward(Sequential, built, x)
        recorder.clear()
        got = _explained("Sequential.backward", method(built.model, "backward"), grad_output,
                         recorder, lambda got: _backward_hint(built, recorder, expected))
        got = as_array("Sequential.backward return value (dL/dx)", got)
        hint = _backward_hint(built, recorder, expected)
        expect_close("Sequential.backward: grad_input (dL/dx)", got, expected.grad_input,
                     _where(batch, nested), _as_signature(hint))
        for (label, leaf, name), (_, twin_leaf, _) in zip(built.params(), twin.params()):
            expect_close(f"{label}.grad after Sequential.backward", getattr(leaf, name).grad,
                         getattr(twin_leaf, name).grad, _where(batch, nested),
                         _as_signature(hint))


# ---------------------------------------------------------------------------- parameters
def listed(what: str, function: Callable) -> list:
    """The student's return value as a list (any iterable will do)."""
    value = call(what, function)
    if value is None:
        fail(f"{what} returned None. Did you forget a `return`?")
    try:
        return list(value.items() if hasattr(value, "items") else value)
    except TypeError:
        fail(f"{what} should return a list, got {type(value).__name__}.")


def _expect_same_parameters(what: str, got: list, built: Built) -> None:
    expected = [(label, getattr(leaf, name)) for label, leaf, name in built.params()]
    if [id(p) for p in got] == [id(p) for _, p in expected]:
        return
    labels = [label for label, _ in expected]
    expect(len(got) > 0, f"{what} returned no parameters for a model of {len(built.leaves)} "
           f"layers. It must collect the parameters of its children, recursively through nested "
           f"Sequentials: {labels}.")
    expect(not any(isinstance_(p, ndarray) for p in got),
           f"{what} returned arrays; return the Parameter objects themselves, so that an "
           "optimizer can update p.data and read p.grad.")
    known = {id(p): label for label, p in expected}
    expect(all(id(p) in known for p in got),
           f"{what} returned objects that are not the layers' own Parameters (copies?); return "
           "the layers' Parameter objects, so that an optimizer updates the model.")
    missing = [label for label, p in expected if id(p) not in {id(q) for q in got}]
    expect(not missing, f"{what} is missing {', '.join(missing)}: collect the parameters of "
           "its children, recursively through nested Sequentials.")
    expect(len(got) == len(expected), f"{what} lists some parameters more than once: "
           f"{[known[id(p)] for p in got]}.")
    fail(f"{what} lists the parameters in the wrong order: {[known[id(p)] for p in got]}; "
         f"expected the order of the layers, {labels}.")


def _owns_all(pairs: list, built: Built) -> bool:
    """Whether ``pairs`` (the student's named_parameters()) hold every parameter of the model
    once, in whatever order under whatever names."""
    got = sorted(id(p) for _, p in pairs)
    return got == sorted(id(getattr(leaf, name)) for _, leaf, name in built.params())


@check
def sequential_parameters(Sequential, Linear, ReLU):
    """parameters() returns the layers' own Parameter objects, in layer order, each once, also
    through nested Sequentials: those of named_parameters(), in its order (so that an order
    named_parameters() gets wrong is that cell's mistake)."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        got = listed("Sequential.parameters()", method(built.model, "parameters"))
        try:
            _expect_same_parameters("Sequential.parameters()", got, built)
        except CheckFailure:
            pairs = _pairs_or_none(built)
            if pairs is None or not _owns_all(pairs, built) \
                    or [id(p) for p in got] != [id(p) for _, p in pairs]:
                raise


def _pairs_or_none(built: Built) -> list | None:
    try:
        return _named_pairs(built)
    except CheckFailure:
        return None


_ORDER_HINT = ("\n  Likely mistake: the names are right, their order is not: named_modules() must "
               "list the modules depth first, a child and all of its descendants before the next "
               "child (a nested Sequential's layers come before the layers after it).")
_WITHIN_HINT = ("\n  Likely mistake: the modules come in the right order, but within a module the "
                "parameters do not: list them in the order they were assigned in __init__ "
                "(weight, then bias), the order of the module's _parameters dict, not sorted by "
                "name.")


def _order_hint(names: list[str], labels: list[str]) -> str:
    """Why the right names came in the wrong order: the modules' or one module's own."""
    if sorted(names) != sorted(labels):
        return ""
    modules = [name.rsplit(".", 1)[0] for name in names]
    return _WITHIN_HINT if modules == [label.rsplit(".", 1)[0] for label in labels] else _ORDER_HINT


@check
def sequential_named_parameters(Sequential, Linear, ReLU):
    """named_parameters() pairs each Parameter with its dotted name: '0.weight', '0.bias',
    '2.weight', ... and '1.0.weight' inside a nested Sequential (PyTorch's state_dict keys),
    depth first: a nested Sequential's '0.0.weight' comes before the model's own '1.weight';
    a child set to None afterwards takes its parameters with it."""
    for make in (build, functools.partial(build, nested=True), build_mixed):
        built = make(Sequential, mlp(Linear, ReLU, 0))
        pairs = _named_pairs(built)
        names = [name for name, _ in pairs]
        labels = [label for label, _, _ in built.params()]
        expect(names == labels,
               f"Sequential.named_parameters() gave the names {names}; expected {labels}: the "
               "child's index in its Sequential, a dot, then the attribute name."
               + _order_hint(names, labels))
        _expect_same_parameters("Sequential.named_parameters()", [p for _, p in pairs], built)
    _expect_reassignment_unregisters(build(Sequential, mlp(Linear, ReLU, 0)), Linear)


def _named_pairs(built: Built) -> list:
    pairs = listed("Sequential.named_parameters()", method(built.model, "named_parameters"))
    expect(all(isinstance_(p, tuple) and len(p) == 2 for p in pairs),
           "Sequential.named_parameters() should give (name, parameter) pairs.")
    return pairs


def _expect_reassignment_unregisters(built: Built, Linear) -> None:
    """``model.extra = Linear(5, 2)``, then ``model.extra = None``: the child is gone, and so
    are its parameters, as in PyTorch."""
    call("model.extra = Linear(5, 2)", setattr, built.model, "extra", layer(Linear, 5, 2))
    call("model.extra = None", setattr, built.model, "extra", None)
    names = [name for name, _ in _named_pairs(built)]
    labels = [label for label, _, _ in built.params()]
    expect(names == labels,
           f"After model.extra = Linear(5, 2), then model.extra = None, named_parameters() gave "
           f"{names}; expected {labels}: 'extra' holds None now, no module. __setattr__ must "
           "first remove the name from _parameters and _modules (dict.pop(name, None)), then "
           "register the new value if it is a Parameter or a Module.")


def _random_grads(built: Built, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _, leaf, name in built.params():
        param = getattr(leaf, name)
        param.grad = rng.standard_normal(asarray(param.data).shape)


def _in_own_order(Sequential, built: Built) -> list[tuple[str, object]]:
    """(label, parameter) in the order of the student's parameters() when that lists every
    parameter of the model once and a cell that judges that order failed
    (``autograder.verdicts``: parameters(), or named_parameters() whose order it follows),
    else in the layers' order."""
    labels = {id(getattr(leaf, name)): label for label, leaf, name in built.params()}
    if not any(verdicts.failed(Sequential, cell.__name__)
               for cell in (sequential_parameters, sequential_named_parameters)):
        return [(label, getattr(leaf, name)) for label, leaf, name in built.params()]
    try:
        own = listed("Sequential.parameters()", method(built.model, "parameters"))
    except CheckFailure:
        own = []
    if sorted(id(p) for p in own) == sorted(labels):
        return [(labels[id(p)], p) for p in own]
    return [(label, getattr(leaf, name)) for label, leaf, name in built.params()]


@check
def sequential_grads(Sequential, Linear, ReLU):
    """grads() returns every parameter's gradient, in the same order as parameters() (the
    student's own, if it lists every parameter: its order is the parameters cell's)."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        _random_grads(built, 1)
        got = listed("Sequential.grads()", method(built.model, "grads"))
        expected = [(label, param.grad) for label, param in _in_own_order(Sequential, built)]
        expect(len(got) == len(expected),
               f"Sequential.grads() returned {len(got)} arrays for {len(expected)} parameters: "
               "it must give the .grad of every parameter of its children, as parameters() "
               "lists them.")
        others = [grad for _, grad in expected]
        order = when("order", lambda g, e: any(close(g, o) for o in others),
                     "this is another parameter's gradient: grads() must be in the same order as "
                     "parameters(), [p.grad for p in self.parameters()].")
        for i, (grad, (label, want)) in enumerate(zip(got, expected)):
            expect_close(f"Sequential.grads()[{i}]", grad, want, f"it should be {label}.grad",
                         (order,))
    _expect_grads_themselves(built)


def _expect_grads_themselves(built) -> None:
    """grads() returns the gradient arrays themselves: a backward pass adding into param.grad
    shows in the list grads() returned before it."""
    _, read = kept_result("Sequential.grads()", built.model, "grads")
    before = [as_array(f"Sequential.grads()[{i}]", g).copy() for i, g in enumerate(read())]
    for label, leaf, name in built.params():
        shift_in_place(f"{label}.grad", call(label, getattr, leaf, name), "grad", 1.0)
    for i, (now, old) in enumerate(zip(read(), before)):
        expect(close(now, old + 1.0), f"Sequential.grads()[{i}] did not change when its "
               "parameter's gradient was added to in place (as a backward pass does): grads() "
               "returned copies. Return the arrays themselves, [p.grad for p in "
               "self.parameters()], so that an optimizer or a gradient clipper can use them.")


@check
def sequential_zero_grad(Sequential, Linear, ReLU):
    """zero_grad() resets the gradient of every parameter of every child (also nested) to zeros."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        _random_grads(built, 2)
        call("Sequential.zero_grad()", method(built.model, "zero_grad"))
        for label, leaf, name in built.params():
            shape = asarray(getattr(leaf, name).data).shape
            grad = as_array(f"{label}.grad after zero_grad()", getattr(leaf, name).grad, shape)
            expect(not bool(grad.any()),
                   f"After model.zero_grad(), {label}.grad is not zero. zero_grad must reset the "
                   "gradient of every parameter of every child layer (recursively), or the "
                   "gradients of earlier batches add into the next step.")
