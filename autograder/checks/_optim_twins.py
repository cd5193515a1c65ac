"""The machinery of the optimizer checks: twin optimizers, known mistakes, the step loop.

Every check runs the student's optimizer and its ``minitorch_ref`` twin side by side
for ``STEPS`` steps, on the same parameters and the same sequence of gradients, and
compares every parameter after every step ("step 3 of Adam(lr=0.1): parameter 1 is
wrong"). At the first wrong step both optimizers started from the same weights, so
the student's value is also compared with what each known mistake would give from
the reference's state before that step (its momentum buffer, its moments): a match
names the mistake.

Parameters: the student's optimizer gets ``minitorch_ref.nn.Parameter`` objects
(``.data``, ``.grad``, ``zero_grad()``), or objects of the student's own class when
the hidden cell passes it, for an optimizer that insists on its own type:
``check.sgd_step(SGD)`` or ``check.sgd_step(SGD, Parameter)``. Before each
``step()`` the gradient is written into ``param.grad`` in place, as ``zero_grad()``
followed by ``backward()`` would. Graded from outside, the parameters are built in the
student's kernel from the notebook's Parameter class, and every write (a gradient, a
group's learning rate) happens there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from autograder.checks._calls import Script, attribute, item
from autograder.integrity import check_instance
from autograder.sandbox import call
from course.testing._trusted import ndarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, close_or_nan, when
from course.testing.failure import CheckFailure, expect
from minitorch_ref import nn
from minitorch_ref import optim as ref


STEPS = 6


SHAPES = ((3,), (2, 4), (1,))


Groups = Sequence[tuple[Sequence[int], dict]]  # parameter indices and overrides per group


@dataclass(frozen=True)
class Problem:
    """Initial parameter values and one gradient per parameter and step, from a seed."""

    seed: int
    scale: float = 1.0

    def initial(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        return [self.scale * rng.standard_normal(shape) for shape in SHAPES]

    def gradients(self, steps: int = STEPS) -> list[list[np.ndarray]]:
        rng = np.random.default_rng(self.seed + 100)
        return [[self.scale * rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]

    def __str__(self) -> str:
        return f", weights and gradients ~{self.scale:g}" if self.scale != 1 else ""


PROBLEMS = (Problem(0), Problem(1, scale=1e3))


# ----------------------------------------------------------------------------- twins
def make_params(Parameter: type | None, initial: list[np.ndarray]) -> list:
    """Parameters holding copies of ``initial``: the reference's, or the student's class."""
    if Parameter is None:
        return [nn.Parameter(w.copy()) for w in initial]
    made = Script(Parameter)
    for w in initial:
        made.call(f"Parameter(array of shape {w.shape})", Parameter, w.copy())
    params = made.finish()
    given = Script(Parameter)
    data = given.attributes("the parameters' .data", params, "data")
    given.assign("the parameters' .grad", params, "grad", [np.zeros_like(w) for w in initial])
    for w, got in zip(initial, given.finish()[data]):
        as_array(f"Parameter(array of shape {w.shape}).data", got, w.shape)
    return params


def arrange(params: list, groups: Groups | None) -> list:
    """The optimizer's first argument: the parameters, or a list of group dicts."""
    if groups is None:
        return list(params)
    return [{"params": [params[i] for i in indices], **extra} for indices, extra in groups]


def _label(name: str, kwargs: dict, groups: Groups | None) -> str:
    shown = [f"{k}={v!r}" for k, v in kwargs.items()]
    if groups is not None:
        dicts = ", ".join("{'params': [" + ", ".join(f"p{i}" for i in indices) + "]"
                          + "".join(f", '{k}': {v!r}" for k, v in extra.items()) + "}"
                          for indices, extra in groups)
        shown.insert(0, f"[{dicts}]")
    return f"{name}({', '.join(shown)})"


@dataclass
class Twins:
    """The student's optimizer and the reference's, over equal copies of the parameters."""

    label: str
    student: object
    ref: object
    student_params: list
    ref_params: list

    @classmethod
    def build(cls, name: str, student_cls: type, Parameter: type | None, initial: list,
              kwargs: dict, groups: Groups | None = None) -> Twins:
        label = _label(name, kwargs, groups)
        student_params = make_params(Parameter, initial)
        try:
            student = call(label, student_cls, arrange(student_params, groups), **kwargs)
        except CheckFailure as failure:
            signature_error = "argument" in str(failure)  # a missing keyword, not the type
            note = "" if Parameter is not None or signature_error else (
                "\n  Note: the parameters passed have .data and .grad arrays but are not "
                "instances of your Parameter class; an optimizer only needs those two.")
            raise CheckFailure(f"{failure}{note}") from None
        check_instance(name, student, allowed=student_params)
        ref_params = make_params(None, initial)
        reference = getattr(ref, name)(arrange(ref_params, groups), **kwargs)
        return cls(label, student, reference, student_params, ref_params)


def param_groups(what: str, optimizer: object) -> list:
    """The optimizer's ``param_groups``: a list of dicts with an 'lr' key each."""
    return checked_groups(what, getattr(optimizer, "param_groups", None))


def checked_groups(what: str, groups: object) -> list:
    """``groups`` (an optimizer's ``param_groups``), if it is a list of dicts with an 'lr' key
    each."""
    expect(isinstance(groups, (list, tuple)) and len(groups) > 0
           and all(isinstance(g, dict) and "lr" in g for g in groups),
           f"{what} needs a `param_groups` attribute: a list of dicts, one per parameter "
           f"group, each with the key 'lr' (schedulers change the rate there); got {groups!r:.80}.")
    return list(groups)


# ----------------------------------------------------------------------------- mistakes
@dataclass
class Step:
    """What a known mistake needs to predict one parameter after step ``t``."""

    t: int
    w: np.ndarray    # the parameter before the step (equal in both optimizers)
    g: np.ndarray    # this step's gradient
    group: dict      # the reference's hyperparameters for this parameter
    before: dict     # the reference's state for this parameter before the step

    def __getitem__(self, name: str):
        return self.group[name]

    def l2(self, sign: float = 1.0) -> np.ndarray:
        """The gradient with L2 weight decay folded in, ``g + weight_decay * w``."""
        return self.g + sign * self["weight_decay"] * self.w


@dataclass(frozen=True)
class Mistake:
    """A known mistake: the parameter it would produce (None: not applicable), and why."""

    name: str
    predict: Callable[[Step], np.ndarray | None]
    message: str

    def signature(self, step: Step) -> Signature:
        def matches(got, expected):
            with np.errstate(all="ignore"):
                predicted = self.predict(step)
            return predicted is not None and close_or_nan(got, predicted)
        return when(self.name, matches, self.message)


def _generic(step: Step) -> tuple[Signature, ...]:
    w, lr = step.w, step["lr"]
    return (
        when("no_update", lambda g, e: not close(e, w) and close(g, w),
             "the parameter did not change. step() must change p.data itself (p.data -= ...); "
             "assigning to a local variable or a copy changes nothing."),
        when("ascent", lambda g, e: close(g, 2 * w - e),
             "the parameter moved by the right amount in the wrong direction: subtract "
             "lr * update (descend the gradient), do not add it."),
        when("lr_ignored", lambda g, e: lr != 1 and close(g, w - (w - e) / lr),
             "the update is not multiplied by the learning rate lr (read from param_groups)."),
    )


def decay_mistakes(rule: Callable[[Step, np.ndarray], np.ndarray]) -> tuple[Mistake, ...]:
    """L2 weight decay with the wrong sign, or forgotten, for an update ``rule(step, grad)``."""
    return (
        Mistake("decay_sign", lambda s: rule(s, s.l2(-1)) if s["weight_decay"] else None,
                "weight decay has the wrong sign: it adds +weight_decay * w to the gradient, "
                "which pulls the weights towards 0."),
        Mistake("decay_missing", lambda s: rule(s, s.g) if s["weight_decay"] else None,
                "weight_decay is ignored: add weight_decay * w to the gradient first."),
    )


# ----------------------------------------------------------------------------- running
def expect_steps(twins: Twins, problem: Problem, mistakes: tuple[Mistake, ...] = (),
                 new_rates: dict[int, float] | None = None, own=None,
                 in_place: bool = False) -> None:
    """Feed both optimizers the same gradients; every parameter must agree after every step
    (and, ``in_place``, still be held in the array it started in). ``new_rates[t]`` is
    written into ``param_groups[0]['lr']`` of both before step t, as a scheduler does. The
    student's steps run as one script, then each step is compared in turn. ``own``
    (``_optim_own.Own``) judges a run the reference disagrees with against the student's own
    plain twin: if they agree, the difference is another cell's."""
    params, new_rates = twins.student_params, new_rates or {}
    arrays = [attribute(f"parameter {i}.data", p, "data") for i, p in enumerate(params)]
    script, after = _student_steps(twins, problem, new_rates)
    values = script.run()
    try:
        for t, grads in enumerate(problem.gradients(), start=1):
            if after[t - 1] >= len(values):
                break
            if t in new_rates:
                twins.ref.param_groups[0]["lr"] = new_rates[t]
            _expect_step(twins, problem, mistakes, t, grads, values[after[t - 1]])
    except CheckFailure as failure:
        if own is None or script.failure is not None:
            raise
        trajectory = [problem.initial()] + [values[i] for i in after]
        if own.agrees(trajectory, problem.gradients(), _group_of(twins.ref, twins.ref_params[0])):
            return
        raise CheckFailure(f"{failure}{own.note()}") from None
    if script.failure is not None:
        raise script.failure
    for i, param in enumerate(params if in_place else ()):
        expect(attribute(f"parameter {i}.data", param, "data") is arrays[i],
               f"after {STEPS} steps of {twins.label}, parameter {i} has the right values in a "
               "new array: step() replaced p.data. Update it in place (p.data -= ..., p.data "
               "*= ...), as PyTorch's optimizers do: whatever else holds the weights' array "
               "keeps seeing the old one.")


def _student_steps(twins: Twins, problem: Problem,
                   new_rates: dict[int, float]) -> tuple[Script, list[int]]:
    """The student's steps as one script (to run), and the position of the parameters'
    values after each step among its values."""
    params, script, after = twins.student_params, Script(twins.student), []
    first_group = _first_group(twins) if new_rates else None
    step = call(f"{twins.label}.step", getattr, twins.student, "step")
    for t, grads in enumerate(problem.gradients(), start=1):
        if t in new_rates:
            script.set_item(f"{twins.label}.param_groups[0]['lr'] = {new_rates[t]}",
                            first_group, "lr", new_rates[t])
        script.assign(f"the parameters' .grad (step {t})", params, "grad", grads)
        script.call(f"{twins.label}.step() (step {t})", step)
        after.append(script.attributes(f"the parameters' .data after step {t}", params, "data"))
    return script, after


def _first_group(twins: Twins) -> object:
    """The student's ``param_groups[0]`` itself (a handle, graded from outside)."""
    groups = attribute(f"{twins.label}.param_groups", twins.student, "param_groups")
    return item(f"{twins.label}.param_groups[0]", groups, 0)


def _expect_step(twins: Twins, problem: Problem, mistakes: tuple[Mistake, ...], t: int,
                 grads: list[np.ndarray], got: list) -> None:
    """Step ``t`` of the reference, and the student's parameters after their step ``t``."""
    weights = [p.data.copy() for p in twins.ref_params]
    states = [_snapshot(twins.ref.state.get(p)) for p in twins.ref_params]
    for ref_param, g in zip(twins.ref_params, grads):
        ref_param.grad[...] = g
    twins.ref.step()
    for i, ref_param in enumerate(twins.ref_params):
        step = Step(t, weights[i], grads[i], _group_of(twins.ref, ref_param), states[i])
        signatures = tuple(m.signature(step) for m in mistakes) + _generic(step)
        expect_close(f"step {t} of {twins.label}: parameter {i}", got[i], ref_param.data,
                     f"shape {ref_param.shape}{problem}", signatures)


def _snapshot(state: dict | None) -> dict:
    return {k: v.copy() if isinstance(v, ndarray) else v for k, v in (state or {}).items()}


def _group_of(optimizer, param) -> dict:
    return next(g for g in optimizer.param_groups if any(p is param for p in g["params"]))


def expect_configs(name: str, student_cls: type, Parameter: type | None, configs: list[dict],
                   mistakes: tuple[Mistake, ...], own: Callable | None = None,
                   in_place: bool = False) -> None:
    """Each configuration on each problem, STEPS steps; ``own(kwargs)`` (``_optim_own.judge``)
    judges a run the reference disagrees with against the student's own plain twin, for a cell
    that judges one part of the optimizer."""
    for kwargs in configs:
        for problem in PROBLEMS:
            twins = Twins.build(name, student_cls, Parameter, problem.initial(), kwargs)
            expect_steps(twins, problem, mistakes, own=own and own(kwargs), in_place=in_place)
