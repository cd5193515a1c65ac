"""Checks of a Sequential's state: train()/eval() reaching every layer,
state_dict()/load_state_dict() (copies, buffers) and print(model).

The models are built as in ``container``, from the student's own layers.
"""
from __future__ import annotations

import numpy as np

from autograder import verdicts
from autograder.checks._calls import attribute, kept_result, method, shift_in_place, type_name
from autograder.checks._sequential_models import Built, build, layer, mlp
from autograder.checks.batchnorm import RUNNING, running_stat
from autograder.checks.container import sequential_named_parameters
from autograder.registry import check
from autograder.remote import doubles
from autograder.remote.proxy import Remote
from autograder.sandbox import call
from course.testing._trusted import asarray, isinstance_
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import CheckFailure, expect, fail


# ---------------------------------------------------------------------------- modes
def _mode_hint(after: str, training: bool) -> str:
    if after == "construction":
        return "A new module is in training mode (training = True)."
    method = after.split(".")[1]
    return (f"{method} must be propagated to every child module (recursively), or Dropout and "
            f"BatchNorm inside the model keep behaving as in {'eval' if training else 'training'} "
            "mode.")


@check
def sequential_modes(Sequential, Linear, GaussianNoise):
    """eval() and train() set .training on the model and on every child, recursively; a new
    model is in training mode."""
    leaves = [layer(Linear, 3, 4), layer(GaussianNoise, 0.5), layer(Linear, 4, 4),
              layer(GaussianNoise, 0.3), layer(Linear, 4, 2)]
    built = build(Sequential, leaves, nested=True)
    modules = built.containers + [(built.label(k), leaf) for k, leaf in enumerate(leaves)]
    for training, after in ((True, "construction"), (False, "model.eval()"),
                            (True, "model.train()"), (False, "model.eval()")):
        if after != "construction":
            _expect_returns_itself(built.model, after.split(".")[1].rstrip("()"))
        for label, module in modules:
            flag = getattr(module, "training", None)
            expect(flag is not None, f"After {after}, {label} has no attribute training.")
            expect(bool(flag) == training, f"After {after}, {label} has training={flag}, "
                   f"expected {training}. {_mode_hint(after, training)}")


def _expect_returns_itself(model, name: str) -> None:
    """``model.<name>()`` (train or eval) returns the model, so that calls chain."""
    returned, _ = kept_result(f"Sequential.{name}()", model, name)
    expect(returned is model, f"Sequential.{name}() did not return the model itself: return "
           f"self, so that calls chain, model = Sequential(...).{name}(), as in PyTorch.")


# ---------------------------------------------------------------------------- state
def state_of(built: Built) -> dict:
    """The student's state_dict() as a dict of float arrays."""
    state = call("Sequential.state_dict()", method(built.model, "state_dict"))
    _expect_mapping(state)
    return state


def _expect_mapping(state) -> None:
    expect(hasattr(state, "keys") and hasattr(state, "__getitem__"),
           f"Sequential.state_dict() should return a dict from names to arrays, got "
           f"{type(state).__name__}.")


def _expect_keys(state: dict, expected: list[str]) -> None:
    keys = list(state.keys())
    missing = [k for k in expected if k not in keys]
    unexpected = [k for k in keys if k not in expected]
    expect(not missing and not unexpected,
           f"Sequential.state_dict() has the keys {keys}; expected {expected}, PyTorch's dotted "
           "names (the child's index, a dot, the attribute name).")
    expect(keys == expected, f"Sequential.state_dict() has the right keys in the order {keys}; "
           f"expected {expected}: the parameters in the order of named_parameters(), then the "
           "buffers in the order of named_buffers().")


def _key_order(Sequential, built: Built, expected: list[str]) -> list[str]:
    """``expected`` (the keys of the parameters), in the order of the student's own
    named_parameters() when it names them all and the named_parameters cell failed on its
    order (``autograder.verdicts``: its order is that cell's to judge)."""
    if not verdicts.failed(Sequential, sequential_named_parameters.__name__):
        return expected
    try:
        pairs = call("Sequential.named_parameters()", method(built.model, "named_parameters"))
        names = [name for name, _ in pairs]
    except (CheckFailure, TypeError, ValueError):
        return expected
    return names if sorted(names) == sorted(expected) else expected


@check
def sequential_state_dict(Sequential, Linear, ReLU):
    """b.load_state_dict(a.state_dict()) gives b a's parameter values, in b's own Parameter
    objects; the keys are PyTorch's ('0.weight', '1.0.bias' in a nested model)."""
    for nested in (False, True):
        a = build(Sequential, mlp(Linear, ReLU, 1), nested)
        b = build(Sequential, mlp(Linear, ReLU, 2), nested)
        state = state_of(a)
        _expect_keys(state, _key_order(Sequential, a, [label for label, _, _ in a.params()]))
        before = [asarray(getattr(leaf, name).data).copy() for _, leaf, name in b.params()]
        call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
        for (label, leaf, name), (_, a_leaf, _), old in zip(b.params(), a.params(), before):
            unchanged = when("unchanged", lambda g, e, old=old: close(g, old),
                             "load_state_dict left this parameter unchanged.")
            expect_close(f"{label} after load_state_dict", getattr(leaf, name).data,
                         getattr(a_leaf, name).data, "it should equal the saved model's",
                         (unchanged,))
    _expect_partial_load(Sequential, Linear, ReLU)


def _expect_partial_load(Sequential, Linear, ReLU) -> None:
    """strict=False copies the common keys and skips a missing and an unexpected one."""
    a, b = (build(Sequential, mlp(Linear, ReLU, seed)) for seed in (1, 2))
    (first, *rest) = [label for label, _, _ in a.params()]
    state = state_of(a)
    partial = {key: state[key] for key in rest}
    partial["9.weight"] = np.zeros((2, 2))
    kept = as_array(f"{first} before loading", _data(b, first)).copy()
    call("Sequential.load_state_dict(state without '0.weight', with '9.weight', strict=False)",
         method(b.model, "load_state_dict"), partial, False)
    expect_close(f"{first} after load_state_dict(..., strict=False) without it", _data(b, first),
                 kept, "a key missing from the state dict leaves its parameter as it was")
    for key in rest:
        expect_close(f"{key} after load_state_dict(..., strict=False)", _data(b, key),
                     _data(a, key), "with strict=False the common keys are still copied")


def _data(built: Built, key: str):
    """The array of the parameter named ``key`` in ``built``."""
    (leaf, name), = [(leaf, name) for label, leaf, name in built.params() if label == key]
    return getattr(getattr(leaf, name), "data", None)


def _shift_in_place(built: Built) -> None:
    """What an optimizer step does: change every parameter's array in place."""
    for label, leaf, name in built.params():
        shift_in_place(f"{label}.data", call(label, getattr, leaf, name), "data", 1.0)


def _arrays(built: Built) -> list:
    """The arrays the model's parameters hold (handles to them, graded from outside)."""
    return [attribute(f"{label}.data", call(label, getattr, leaf, name), "data")
            for label, leaf, name in built.params()]


@check
def sequential_state_dict_copies(Sequential, Linear, ReLU):
    """A saved state_dict() does not change when training goes on (it holds copies), and a model
    loaded from it does not share arrays with it: load_state_dict copies into the model's own
    arrays, in place."""
    a = build(Sequential, mlp(Linear, ReLU, 1))
    state, read = kept_result("Sequential.state_dict()", a.model, "state_dict")
    saved = {key: as_array(f"state_dict()['{key}']", value).copy()
             for key, value in _entries(read()).items()}
    _shift_in_place(a)
    _expect_unchanged(read(), saved, "state_dict()['{key}'] changed when the model's parameter "
                      "changed in place (as an optimizer step does): the state holds the "
                      "parameters' own arrays, no copies. Return copies (param.data.copy()), so "
                      "that a saved best model stays as it was.")
    b = build(Sequential, mlp(Linear, ReLU, 2))
    arrays, params = _arrays(b), [call(label, getattr, leaf, name) for label, leaf, name in b.params()]
    call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
    for (label, leaf, name), param in zip(b.params(), params):
        expect(call(label, getattr, leaf, name) is param,
               f"load_state_dict replaced the Parameter objects ({label}): an optimizer "
               "built before loading would keep updating the old ones. Copy the values into "
               "the existing Parameters (param.data[...] = value).")
    for (label, _, _), before, after in zip(b.params(), arrays, _arrays(b)):
        expect(after is before,
               f"After load_state_dict(state), {label} holds a new array: load_state_dict must "
               "copy the values into the arrays the model has, in place (param.data[...] = "
               "value), as the text says, so that anything holding them (an optimizer's state, a "
               "view) sees the loaded values.")
    _shift_in_place(b)
    _expect_unchanged(read(), saved, "After load_state_dict(state), training the loaded model "
                      "changed state['{key}']: the model shares its arrays with the state dict. "
                      "Copy the values in (param.data[...] = value, or value.copy()).")


def _entries(state) -> dict:
    """The student's state dict, checked to be one."""
    _expect_mapping(state)
    return {key: state[key] for key in state.keys()}


def _expect_unchanged(state, saved: dict, message: str) -> None:
    """Every entry of ``state`` still equals its ``saved`` copy; ``message`` names ``{key}``."""
    for key, value in saved.items():
        expect(close(state[key], value), message.format(key=key))


@check
def sequential_state_dict_buffers(Sequential, Linear, Standardize):
    """state_dict() also holds the buffers of a layer that has some (the notebook's
    Standardize: running_mean and running_var, '1.running_mean'), as copies, and
    load_state_dict restores them."""
    kind = getattr(Standardize, "__name__", "Standardize")

    def model(seed):
        rng = np.random.default_rng(seed)
        built = build(Sequential, [layer(Linear, 3, 4, rng=rng), layer(Standardize, 4, rng=rng),
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
    params = _key_order(Sequential, a, [label for label, _, _ in a.params()])
    _expect_keys(state, params + [key for key in state.keys() if key not in params])
    _expect_current_buffers(state, a, layer(Standardize, 4), kind)
    buffers = [attribute(f"{kind}.{name}", b.leaves[1], name) for name in RUNNING]
    call("Sequential.load_state_dict(state)", method(b.model, "load_state_dict"), state)
    for name, buffer in zip(RUNNING, buffers):
        expect_close(f"{kind} (layer 1) {name} after load_state_dict",
                     running_stat(kind, b.leaves[1], name, 4),
                     running_stat(kind, a.leaves[1], name, 4),
                     "it should equal the saved model's")
        expect(attribute(f"{kind}.{name}", b.leaves[1], name) is buffer,
               f"After load_state_dict(state), {kind}.{name} (layer 1) is a new array: copy the "
               "saved values into the buffer the layer has, in place (buffer[...] = value), as "
               "for the parameters.")
    _expect_buffer_copies(a, kind)


def _expect_current_buffers(state: dict, built: Built, fresh, kind: str) -> None:
    """The state holds the buffers' values when state_dict() was called; ``fresh``, a new
    layer of the same kind, holds the values they were registered with."""
    for name in RUNNING:
        registered = running_stat(kind, fresh, name, 4)
        stale = when("registered", lambda g, e, r=registered: close(g, r),
                     f"it holds the value {kind}.{name} was registered with, not its value now: "
                     "the layer assigned a new array to the buffer (self.running_mean = ...), and "
                     "the registry kept the old one. __setattr__ must store the new value in "
                     "_buffers when the name is a buffer, so that named_buffers() and "
                     "state_dict() see what the layer holds.")
        expect_close(f"state_dict()['1.{name}']", state[f"1.{name}"],
                     running_stat(kind, built.leaves[1], name, 4),
                     f"{kind}.{name} (layer 1) when state_dict() was called", (stale,))


def _expect_buffer_copies(built: Built, kind: str) -> None:
    """A saved state_dict() keeps its buffers when the layer's buffers change in place."""
    _, read = kept_result("Sequential.state_dict()", built.model, "state_dict")
    saved = {name: as_array(f"state_dict()['1.{name}']", read()[f"1.{name}"]).copy()
             for name in RUNNING}
    for name in RUNNING:
        shift_in_place(f"{kind}.{name}", built.leaves[1], name, 1.0)
    for name, value in saved.items():
        expect(close(read()[f"1.{name}"], value),
               f"state_dict()['1.{name}'] changed when {kind}.{name} changed in place: the state "
               "holds the buffers' own arrays. Return copies of the buffers too, as of the "
               "parameters (np.array(buffer, copy=True)), so that a saved model stays as it was.")


# ---------------------------------------------------------------------------- print
def _layout(name: str, children: list[str], extra: str = "") -> str:
    """PyTorch's print(model) for a container called ``name`` with these children's texts and
    the ``extra`` text of its extra_repr()."""
    lines = [f"  ({i}): " + text.replace("\n", "\n  ") for i, text in enumerate(children)]
    return "\n".join([f"{name}("] + ([f"  {extra}"] if extra else []) + lines + [")"])


@check
def sequential_repr(Sequential, Linear, ReLU):
    """print(model) shows 'Sequential(', then '(i): <child>' per child, nested ones indented, and
    ')', as PyTorch does; a container's extra_repr() text comes first, above its children."""
    built = build(Sequential, mlp(Linear, ReLU, 0), nested=True)
    texts = [call(f"repr({built.label(k)})", repr, leaf) for k, leaf in enumerate(built.leaves)]
    name = type_name(built.model)
    expected = _layout(name, [_layout(name, texts[:2]), _layout(name, texts[2:])])
    got = call("repr(model)", repr, built.model)
    expect(isinstance_(got, str), f"repr(model) returned {type(got).__name__}, not a string.")
    lines = [line.rstrip() for line in got.strip("\n").splitlines()]
    if lines == expected.splitlines():
        _expect_extra_repr_with_children(Sequential, built.leaves[:2], texts[:2])
        return
    message = f"print(model) shows\n{got}\n\nexpected (as PyTorch prints it)\n{expected}"
    if [line.strip() for line in lines] == [line.strip() for line in expected.splitlines()]:
        message += ("\n  Likely mistake: the nesting is not indented: every line of a child's "
                    "text gets two more spaces, repr(child).replace('\\n', '\\n  ').")
    fail(message)


def _expect_extra_repr_with_children(Sequential, leaves: list, texts: list[str]) -> None:
    """A container whose extra_repr() says something prints it first, above its children."""
    tagged = (Sequential._session.send("double", "tagged", Sequential, "tag=1")
              if isinstance(Sequential, Remote) else doubles.tagged(Sequential, "tag=1"))
    model = call("Tagged(Linear(...), ReLU(...)), a subclass of your Sequential", tagged, *leaves)
    got = call("repr(Tagged(...))", repr, model)
    expected = _layout("Tagged", texts, extra="tag=1")
    expect(isinstance_(got, str) and [line.rstrip() for line in got.strip("\n").splitlines()]
           == expected.splitlines(),
           f"A module with children whose extra_repr() returns 'tag=1' prints\n{got}\n\nexpected "
           f"(as PyTorch prints it)\n{expected}\n  Likely mistake: extra_repr() is left out when "
           "a module has children: its text is the first line inside the parentheses, above "
           "the children.")
