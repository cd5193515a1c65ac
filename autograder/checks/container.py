"""Checks of the student's Sequential and of the Module interface used through it:
forward and backward chaining, parameters(), named_parameters(), grads(), zero_grad(),
train()/eval(), state_dict()/load_state_dict() and print(model).

Each check builds the model from the student's own layers and works out what it
should do by calling those same layers one at a time, so only Sequential (and
the Module methods it inherits) is graded: a bug in Linear is not blamed on the
container. Layers are wrapped in a recording subclass, so that a failure can say
which layer was called out of order or first received a wrong input or gradient.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from course.testing._trusted import asarray, isinstance_, ndarray
from autograder.checks._calls import method, set_mode
from autograder.checks.batchnorm import RUNNING, running_stat
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, when
from course.testing.failure import CheckFailure, expect, fail
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call, construct

PARAMS = ("weight", "bias")
NEEDS_LAYERS = ("\n  (This check grades Sequential and needs your {cls} to work on its own; "
                "fix {cls} first.)")


# ---------------------------------------------------------------------------- recording
@dataclass
class Call:
    """One forward or backward call that reached a layer: which one, with what."""

    kind: str
    layer: int
    given: np.ndarray | None


@dataclass
class Recorder:
    """Wraps layer classes so that every forward/backward call is logged in order."""

    leaves: list = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    def spy(self, cls: type) -> type:
        recorder = self

        def forward(layer, x):
            recorder.log("forward", layer, x)
            return cls.forward(layer, x)

        def backward(layer, grad_output):
            recorder.log("backward", layer, grad_output)
            return cls.backward(layer, grad_output)

        def __call__(layer, *args, **kwargs):
            return layer.forward(*args, **kwargs)
        return type(cls.__name__, (cls,), {
            "forward": forward, "backward": backward, "__call__": __call__,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
        })

    def log(self, kind: str, layer: object, value: object) -> None:
        index = next((i for i, leaf in enumerate(self.leaves) if leaf is layer), -1)
        try:
            given = asarray(value, dtype=float).copy()
        except (TypeError, ValueError):
            given = None
        self.calls.append(Call(kind, index, given))

    def of(self, kind: str) -> list[Call]:
        return [c for c in self.calls if c.kind == kind]


# ---------------------------------------------------------------------------- models
@dataclass
class Built:
    """A student's model and its leaf layers, with their dotted names ('0', '1.2', ...)."""

    model: object
    leaves: list
    names: list[str]
    containers: list[tuple[str, object]]

    def label(self, k: int) -> str:
        return f"layer {self.names[k]} ({type(self.leaves[k]).__name__})"

    def params(self) -> list[tuple[str, object, str]]:
        """(dotted name, layer, attribute) of every parameter, in PyTorch's order."""
        return [(f"{self.names[k]}.{name}", leaf, name) for k, leaf in enumerate(self.leaves)
                for name in PARAMS if getattr(leaf, name, None) is not None]


def _sequential(Sequential: type, *children):
    shown = ", ".join(type(c).__name__ + "(...)" for c in children)
    model = call(f"Sequential({shown})", Sequential, *children)
    check_instance("Sequential", model, allowed=children)
    return model


def build(Sequential: type, leaves: list, nested: bool = False) -> Built:
    """``Sequential(*leaves)``, or ``Sequential(Sequential(*first two), Sequential(*rest))``."""
    if not nested:
        model = _sequential(Sequential, *leaves)
        return Built(model, leaves, [str(i) for i in range(len(leaves))], [("the model", model)])
    inner = [_sequential(Sequential, *leaves[:2]), _sequential(Sequential, *leaves[2:])]
    model = _sequential(Sequential, *inner)
    names = [f"0.{i}" for i in range(2)] + [f"1.{i}" for i in range(len(leaves) - 2)]
    containers = [("the model", model), ("its child 0 (Sequential)", inner[0]),
                  ("its child 1 (Sequential)", inner[1])]
    return Built(model, leaves, names, containers)


def layer(cls: type, *args, rng: np.random.Generator | None = None):
    """A student layer; with ``rng``, its weight and bias get fresh random values."""
    module = construct(cls, *args)
    for name in PARAMS if rng is not None else ():
        param = getattr(module, name, None)
        data = getattr(param, "data", None)
        if data is None:
            fail(f"Your {cls.__name__} has no {name} Parameter with a .data array."
                 + NEEDS_LAYERS.format(cls=cls.__name__))
        param.data = rng.standard_normal(asarray(data).shape)
    return module


def mlp(Linear: type, ReLU: type, seed: int) -> list:
    """Linear(3, 5), ReLU, Linear(5, 4), ReLU, Linear(4, 2) with random parameters."""
    rng = np.random.default_rng(seed)
    return [layer(Linear, 3, 5, rng=rng), layer(ReLU), layer(Linear, 5, 4, rng=rng),
            layer(ReLU), layer(Linear, 4, 2, rng=rng)]


def spied_mlp(Sequential, Linear, ReLU, seed: int, nested: bool) -> tuple[Built, Recorder]:
    recorder = Recorder()
    built = build(Sequential, mlp(recorder.spy(Linear), recorder.spy(ReLU), seed), nested)
    recorder.leaves = built.leaves
    return built, recorder


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
        cls = type(built.leaves[k]).__name__
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


def _explained(what: str, function: Callable, value: np.ndarray, recorder: Recorder,
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


def _forward_hint(built: Built, recorder: Recorder, expected: Expected, got) -> str | None:
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


@check
def sequential_forward(Sequential, Linear, ReLU):
    """forward calls every layer once, in order, each on the previous layer's output, and returns
    the last output (a batch of 1, and layers inside nested Sequentials)."""
    for seed, (nested, batch) in enumerate(SHAPES):
        built, recorder = spied_mlp(Sequential, Linear, ReLU, seed, nested)
        x, _ = _inputs(batch, seed)
        expected = chain(built, x)
        recorder.calls.clear()

        def hint(got):
            return _forward_hint(built, recorder, expected, got)
        got = _explained("Sequential.forward", method(built.model, "forward"), x, recorder, hint)
        expect_close("Sequential.forward output", got, expected.inputs[-1], _where(batch, nested),
                     _as_signature(hint(got)))


def _backward_hint(built: Built, recorder: Recorder, expected: Expected) -> str | None:
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


def _forward_for_backward(built: Built, x: np.ndarray) -> None:
    """The model's own forward (its backward may need what it saves), then each layer's forward
    again, so that a forward bug is reported by sequential_forward, not here."""
    try:
        call("Sequential.forward", method(built.model, "forward"), x.copy())
    except CheckFailure:
        pass
    chain(built, x)


@check
def sequential_backward(Sequential, Linear, ReLU):
    """backward calls every layer's backward once, last to first, each on the gradient the next
    layer returned, and returns dL/dx; every layer's parameter gradients come out right."""
    for seed, (nested, batch) in enumerate(SHAPES):
        twin = build(Sequential, mlp(Linear, ReLU, seed), nested)
        x, grad_output = _inputs(batch, seed)
        expected = chain(twin, x, grad_output)
        built, recorder = spied_mlp(Sequential, Linear, ReLU, seed, nested)
        _forward_for_backward(built, x)
        recorder.calls.clear()
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


@check
def sequential_parameters(Sequential, Linear, ReLU):
    """parameters() returns the layers' own Parameter objects, in layer order, each once, also
    through nested Sequentials."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        got = listed("Sequential.parameters()", method(built.model, "parameters"))
        _expect_same_parameters("Sequential.parameters()", got, built)


@check
def sequential_named_parameters(Sequential, Linear, ReLU):
    """named_parameters() pairs each Parameter with its dotted name: '0.weight', '0.bias',
    '2.weight', ... and '1.0.weight' inside a nested Sequential (PyTorch's state_dict keys)."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        pairs = listed("Sequential.named_parameters()", method(built.model, "named_parameters"))
        expect(all(isinstance_(p, tuple) and len(p) == 2 for p in pairs),
               "Sequential.named_parameters() should give (name, parameter) pairs.")
        names = [name for name, _ in pairs]
        labels = [label for label, _, _ in built.params()]
        expect(names == labels,
               f"Sequential.named_parameters() gave the names {names}; expected {labels}: the "
               "child's index in its Sequential, a dot, then the attribute name.")
        _expect_same_parameters("Sequential.named_parameters()", [p for _, p in pairs], built)


def _random_grads(built: Built, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _, leaf, name in built.params():
        param = getattr(leaf, name)
        param.grad = rng.standard_normal(asarray(param.data).shape)


@check
def sequential_grads(Sequential, Linear, ReLU):
    """grads() returns every parameter's gradient, in the same order as parameters()."""
    for nested in (False, True):
        built = build(Sequential, mlp(Linear, ReLU, 0), nested)
        _random_grads(built, 1)
        got = listed("Sequential.grads()", method(built.model, "grads"))
        expected = [(label, getattr(leaf, name).grad) for label, leaf, name in built.params()]
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


# ---------------------------------------------------------------------------- modes
def _mode_hint(after: str, training: bool) -> str:
    if after == "construction":
        return "A new module is in training mode (training = True)."
    method = after.split(".")[1]
    return (f"{method} must be propagated to every child module (recursively), or Dropout and "
            f"BatchNorm inside the model keep behaving as in {'eval' if training else 'training'} "
            "mode.")


@check
def sequential_modes(Sequential, Linear, Dropout):
    """eval() and train() set .training on the model and on every child, recursively; a new
    model is in training mode."""
    leaves = [layer(Linear, 3, 4), layer(Dropout, 0.5), layer(Linear, 4, 4), layer(Dropout, 0.3),
              layer(Linear, 4, 2)]
    built = build(Sequential, leaves, nested=True)
    modules = built.containers + [(built.label(k), leaf) for k, leaf in enumerate(leaves)]
    for training, after in ((True, "construction"), (False, "model.eval()"),
                            (True, "model.train()"), (False, "model.eval()")):
        if after != "construction":
            set_mode("Sequential", built.model, training)
        for label, module in modules:
            flag = getattr(module, "training", None)
            expect(flag is not None, f"After {after}, {label} has no attribute training.")
            expect(bool(flag) == training, f"After {after}, {label} has training={flag}, "
                   f"expected {training}. {_mode_hint(after, training)}")


# ---------------------------------------------------------------------------- state
def state_of(built: Built) -> dict:
    """The student's state_dict() as a dict of float arrays."""
    state = call("Sequential.state_dict()", method(built.model, "state_dict"))
    expect(hasattr(state, "keys") and hasattr(state, "__getitem__"),
           f"Sequential.state_dict() should return a dict from names to arrays, got "
           f"{type(state).__name__}.")
    return state


def _expect_keys(state: dict, expected: list[str]) -> None:
    keys = list(state.keys())
    missing = [k for k in expected if k not in keys]
    unexpected = [k for k in keys if k not in expected]
    expect(not missing and not unexpected,
           f"Sequential.state_dict() has the keys {keys}; expected {expected}, PyTorch's dotted "
           "names (the child's index, a dot, the attribute name).")


@check
def sequential_state_dict(Sequential, Linear, ReLU):
    """b.load_state_dict(a.state_dict()) gives b a's parameter values, in b's own Parameter
    objects; the keys are PyTorch's ('0.weight', '1.0.bias' in a nested model)."""
    for nested in (False, True):
        a = build(Sequential, mlp(Linear, ReLU, 1), nested)
        b = build(Sequential, mlp(Linear, ReLU, 2), nested)
        state = state_of(a)
        _expect_keys(state, [label for label, _, _ in a.params()])
        before = [(getattr(leaf, name), asarray(getattr(leaf, name).data).copy())
                  for _, leaf, name in b.params()]
        call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
        for (label, leaf, name), (_, a_leaf, _), (param, old) in zip(b.params(), a.params(),
                                                                     before):
            expect(getattr(leaf, name) is param,
                   f"load_state_dict replaced the Parameter objects ({label}): an optimizer "
                   "built before loading would keep updating the old ones. Copy the values into "
                   "the existing Parameters (param.data[...] = value).")
            unchanged = when("unchanged", lambda g, e, old=old: close(g, old),
                             "load_state_dict left this parameter unchanged.")
            expect_close(f"{label} after load_state_dict", param.data, getattr(a_leaf, name).data,
                         "it should equal the saved model's", (unchanged,))


def _shift_in_place(built: Built) -> None:
    """What an optimizer step does: change every parameter's array in place."""
    for _, leaf, name in built.params():
        data = getattr(leaf, name).data
        np.add(data, 1.0, out=data)


@check
def sequential_state_dict_copies(Sequential, Linear, ReLU):
    """A saved state_dict() does not change when training goes on (it holds copies), and a model
    loaded from it does not share arrays with it."""
    a = build(Sequential, mlp(Linear, ReLU, 1))
    state = state_of(a)
    saved = {key: as_array(f"state_dict()['{key}']", state[key]).copy() for key in state.keys()}
    _shift_in_place(a)
    for key, value in saved.items():
        expect(close(state[key], value),
               f"state_dict()['{key}'] changed when the model's parameter changed in place (as "
               "an optimizer step does): the state holds the parameters' own arrays, no copies. "
               "Return copies (param.data.copy()), so that a saved best model stays as it was.")
    b = build(Sequential, mlp(Linear, ReLU, 2))
    call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
    _shift_in_place(b)
    for key, value in saved.items():
        expect(close(state[key], value),
               f"After load_state_dict(state), training the loaded model changed state['{key}']: "
               "the model shares its arrays with the state dict. Copy the values in "
               "(param.data[...] = value, or value.copy()).")


@check
def sequential_state_dict_buffers(Sequential, Linear, BatchNorm1d):
    """state_dict() also holds the buffers of a layer that has some (BatchNorm1d's, or the
    notebook's Standardize's running_mean and running_var: '1.running_mean'), and
    load_state_dict restores them."""
    kind = getattr(BatchNorm1d, "__name__", "BatchNorm1d")

    def model(seed):
        rng = np.random.default_rng(seed)
        built = build(Sequential, [layer(Linear, 3, 4, rng=rng), layer(BatchNorm1d, 4, rng=rng),
                                   layer(Linear, 4, 2, rng=rng)])
        for name in RUNNING:
            values = rng.uniform(0.5, 2.0, 4)
            call(f"setting {kind}.{name}", setattr, built.leaves[1], name, values)
        return built
    a, b = model(1), model(2)
    state = state_of(a)
    for name in RUNNING:
        expect(f"1.{name}" in list(state.keys()),
               f"Sequential.state_dict() has no '1.{name}' (keys: {list(state.keys())}). Running "
               f"statistics such as {kind}.{name} are buffers: state, though not parameters. "
               "Save and load them with the parameters, or a loaded model predicts differently "
               "in eval mode.")
    call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
    for name in RUNNING:
        expect_close(f"{kind} (layer 1) {name} after load_state_dict",
                     running_stat(kind, b.leaves[1], name, 4),
                     running_stat(kind, a.leaves[1], name, 4),
                     "it should equal the saved model's")


# ---------------------------------------------------------------------------- print
def _layout(name: str, children: list[str]) -> str:
    """PyTorch's print(model) for a container called ``name`` with these children's texts."""
    lines = [f"  ({i}): " + text.replace("\n", "\n  ") for i, text in enumerate(children)]
    return "\n".join([f"{name}("] + lines + [")"])


@check
def sequential_repr(Sequential, Linear, ReLU):
    """print(model) shows 'Sequential(', then '(i): <child>' per child, nested ones indented, and
    ')', as PyTorch does."""
    built = build(Sequential, mlp(Linear, ReLU, 0), nested=True)
    texts = [call(f"repr({built.label(k)})", repr, leaf) for k, leaf in enumerate(built.leaves)]
    name = type(built.model).__name__
    expected = _layout(name, [_layout(name, texts[:2]), _layout(name, texts[2:])])
    got = call("repr(model)", repr, built.model)
    expect(isinstance_(got, str), f"repr(model) returned {type(got).__name__}, not a string.")
    lines = [line.rstrip() for line in got.strip("\n").splitlines()]
    if lines == expected.splitlines():
        return
    message = f"print(model) shows\n{got}\n\nexpected (as PyTorch prints it)\n{expected}"
    if [line.strip() for line in lines] == [line.strip() for line in expected.splitlines()]:
        message += ("\n  Likely mistake: the nesting is not indented: every line of a child's "
                    "text gets two more spaces, repr(child).replace('\\n', '\\n  ').")
    fail(message)
