"""An optimizer cell that leans on another cell's work judges its own part against the
student's own other work, so that one mistake costs one cell.

``adam_weight_decay`` leans on Adam's update (adam_step's part), ``adamw_step`` on the Adam
update AdamW inherits, ``sgd_weight_decay`` on SGD's momentum (sgd_momentum's), the group
cells on SGD's step (sgd_step's). Each first compares the student's optimizer with the
reference (``_optim_twins``). When the weights differ, it steps the student's own *plain* twin
(the same class with the part under test switched off: ``weight_decay=0``, a rate of 1, one
group's settings) in lockstep from the student's own weights before each step, fed what the
part under test should make of them (the decayed weights, the L2 gradient, the group's rate).
Equal weights after every step mean the part under test is right and the difference is the
other cell's mistake, which that cell scores.

A twin must be able to tell: when its steps do not change with what the part under test
feeds it (an Adam update that moves nothing cannot show an L2 term), nothing is judged and the
cell keeps the reference's verdict, naming the cell to fix first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.checks._calls import Script
from autograder.checks._optim_twins import Groups, arrange, make_params
from autograder.sandbox import call
from course.testing.diagnose import close
from course.testing.failure import CheckFailure

Trajectory = list[list[np.ndarray]]   # every parameter's weights before step 1, 2, ... (or after)


@dataclass(frozen=True)
class Part:
    """What a cell judges, as a change to each step of a plain twin: ``start(w, group)`` the
    weights the plain step starts from, ``gradient(g, w, group, t)`` the gradient it sees
    (``group``: the reference's hyperparameters); ``plain``: the twin's keyword arguments, the
    part switched off; ``fix_first``: the cell that judges the twin's own work."""

    text: str
    plain: dict
    fix_first: str
    start: Callable[[np.ndarray, dict], np.ndarray] = lambda w, group: w
    gradient: Callable[[np.ndarray, np.ndarray, dict, int], np.ndarray] = lambda g, w, group, t: g


def l2(fix_first: str) -> Part:
    """L2 weight decay: the plain step sees ``g + weight_decay * w``."""
    return Part("the L2 weight decay (the gradient g + weight_decay * w)", {"weight_decay": 0.0},
                fix_first, gradient=lambda g, w, group, t: g + group["weight_decay"] * w)


DECOUPLED = Part("AdamW's decoupled decay (w * (1 - lr * weight_decay) before the Adam step)",
                 {"weight_decay": 0.0}, "adam_step",
                 start=lambda w, group: w * (1 - group["lr"] * group["weight_decay"]))


def own_steps(name: str, cls: type, Parameter: type | None, kwargs: dict, starts: Trajectory,
              grads: Trajectory, groups: Groups | None = None) -> Trajectory:
    """The student's ``cls(params, **kwargs)`` stepped once from each of ``starts[t]`` with the
    gradients ``grads[t]``, in lockstep (its state carried from step to step): the weights
    after each step. The student's steps run as one script."""
    params = make_params(Parameter, starts[0])
    optimizer = call(f"{name}(...)", cls, arrange(params, groups), **kwargs)
    step = call(f"{name}.step", getattr, optimizer, "step")
    script, after = Script(optimizer), []
    for t, (weights, gradients) in enumerate(zip(starts, grads), start=1):
        script.assign(f"the parameters' .data (step {t})", params, "data", weights)
        script.assign(f"the parameters' .grad (step {t})", params, "grad", gradients)
        script.call(f"{name}.step() (step {t})", step)
        after.append(script.attributes(f"the parameters' .data after step {t}", params, "data"))
    values = script.finish()
    return [[np.asarray(w, dtype=float) for w in values[i]] for i in after]


def same(a: Trajectory, b: Trajectory) -> bool:
    return len(a) == len(b) and all(close(x, y) for xs, ys in zip(a, b) for x, y in zip(xs, ys))


@dataclass(frozen=True)
class Own:
    """The student's plain twin, to judge ``part`` of a run of ``cls(**kwargs)``."""

    name: str
    cls: type
    Parameter: type | None
    kwargs: dict
    part: Part

    def agrees(self, trajectory: Trajectory, grads: Trajectory, group: dict) -> bool:
        """Whether the student's weights after each step (``trajectory[1:]``; ``[0]`` the
        start) are the plain twin's from the weights before it, fed the part under test; False
        too when the twin cannot tell (its steps do not change with what the part feeds it) or
        fails."""
        before = trajectory[:-1]
        starts = [[self.part.start(w, group) for w in ws] for ws in before]
        fed = [[self.part.gradient(g, w, group, t) for g, w in zip(gs, ws)]
               for t, (gs, ws) in enumerate(zip(grads, before), start=1)]
        kwargs = {**self.kwargs, **self.part.plain}
        try:
            expected = own_steps(self.name, self.cls, self.Parameter, kwargs, starts, fed)
            unfed = own_steps(self.name, self.cls, self.Parameter, kwargs, before, grads)
        except CheckFailure:
            return False
        if same(starts, before) and same(fed, grads) or same(expected, unfed):
            return False
        return same(trajectory[1:], expected)

    def note(self) -> str:
        return note(self.name, self.part.text, self.part.fix_first)


def note(name: str, text: str, fix_first: str) -> str:
    """What a failure adds when the student's own plain twin disagrees too."""
    return (f"\n  (This cell judges {text}. It also compared your {name} with your own "
            f"{name} without it, stepped from your weights, so that a mistake {fix_first} "
            f"already counts would not cost this cell too: they differ as well. If "
            f"{fix_first} fails, fix it first.)")


@dataclass(frozen=True)
class OwnGroups:
    """The student's own plain twins of a run with parameter ``groups``: each group's
    parameters stepped by ``cls(those parameters, **defaults, **the group's keys)``."""

    name: str
    cls: type
    Parameter: type | None
    defaults: dict
    groups: Groups

    def agrees(self, trajectory: Trajectory, grads: Trajectory, group: dict) -> bool:
        """Whether each group's parameters moved as the student's own optimizer with that
        group's settings moves them; False too when such a twin moves them as one with the
        constructor's settings alone (it cannot show a group's keys) or fails."""
        for indices, extra in self.groups:
            picked = [[ws[i] for i in indices] for ws in trajectory]
            fed = [[gs[i] for i in indices] for gs in grads]
            try:
                expected, plain = (own_steps(self.name, self.cls, self.Parameter, kwargs,
                                             picked[:-1], fed)
                                   for kwargs in ({**self.defaults, **extra}, self.defaults))
            except CheckFailure:
                return False
            if same(expected, plain) or not same(picked[1:], expected):
                return False
        return True

    def note(self) -> str:
        return note(self.name, "the group dicts' own settings", "sgd_step and sgd_momentum")


def judge(name: str, cls: type, Parameter: type | None, part: Part) -> Callable[[dict], Own]:
    """For ``expect_configs``: the plain twin that judges ``part`` of a run with ``kwargs``."""
    return lambda kwargs: Own(name, cls, Parameter, kwargs, part)
