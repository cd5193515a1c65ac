"""The models the Sequential checks build from the student's own layers, each wrapped in a
recording subclass (``doubles.Recorder``), so that a failure can say which layer was called
out of order or first received a wrong input or gradient. The recorder's log is the kernel's
testimony (``autograder.testimony``): it explains a failure the outputs decided."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder import testimony
from autograder.checks._calls import type_name
from autograder.integrity import check_instance
from autograder.remote.doubles import Recorder
from autograder.remote.proxy import Remote
from autograder.sandbox import call, construct
from course.testing._trusted import asarray
from course.testing.failure import fail


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


class Log:
    """The calls a ``doubles.Recorder`` logged, read when asked: the recorder lives in the
    student's kernel when graded from outside (its spies subclass the student's classes),
    here otherwise."""

    def __init__(self, beside: object) -> None:
        self.recorder = (beside._session.send("double", "recorder") if isinstance(beside, Remote)
                         else Recorder())

    def spy(self, cls: type) -> type:
        return self.recorder.spy(cls)

    def watch(self, leaves: list) -> None:
        self.recorder.leaves = leaves

    @property
    def calls(self) -> list[Call]:
        return [Call(kind, int(layer), given)
                for kind, layer, given in testimony.log_of(self.recorder)]

    def of(self, kind: str) -> list[Call]:
        return [c for c in self.calls if c.kind == kind]

    def clear(self) -> None:
        self.recorder.clear()


# ---------------------------------------------------------------------------- models
@dataclass
class Built:
    """A student's model and its leaf layers, with their dotted names ('0', '1.2', ...)."""

    model: object
    leaves: list
    names: list[str]
    containers: list[tuple[str, object]]
    found: list[tuple[str, object, str]] | None = None

    def label(self, k: int) -> str:
        return f"layer {self.names[k]} ({type_name(self.leaves[k])})"

    def params(self) -> list[tuple[str, object, str]]:
        """(dotted name, layer, attribute) of every parameter, in PyTorch's order; which
        layers have which is looked up once (graded from outside, each lookup is a request)."""
        if self.found is None:
            self.found = [(f"{self.names[k]}.{name}", leaf, name)
                          for k, leaf in enumerate(self.leaves)
                          for name in PARAMS if getattr(leaf, name, None) is not None]
        return list(self.found)


def _sequential(Sequential: type, *children):
    shown = ", ".join(type_name(c) + "(...)" for c in children)
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


def build_mixed(Sequential: type, leaves: list) -> Built:
    """``Sequential(Sequential(*first two), *rest)``: a nested Sequential before layers of the
    model's own, where depth first and breadth first give different orders."""
    inner = _sequential(Sequential, *leaves[:2])
    model = _sequential(Sequential, inner, *leaves[2:])
    names = ["0.0", "0.1"] + [str(i) for i in range(1, len(leaves) - 1)]
    return Built(model, leaves, names, [("the model", model), ("its child 0 (Sequential)", inner)])


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


def spied_mlp(Sequential, Linear, ReLU, seed: int, nested: bool) -> tuple[Built, Log]:
    log = Log(Linear)
    built = build(Sequential, mlp(log.spy(Linear), log.spy(ReLU), seed), nested)
    log.watch(built.leaves)
    return built, log
