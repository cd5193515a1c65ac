"""Checks of the optimizers: SGD, Adam, AdamW, RMSprop, zero_grad and parameter groups.

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
followed by ``backward()`` would.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from course.testing._trusted import ndarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, when
from course.testing.failure import CheckFailure, expect, fail
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call
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
    params = []
    for w in initial:
        param = call(f"Parameter(array of shape {w.shape})", Parameter, w.copy())
        as_array(f"Parameter(array of shape {w.shape}).data", getattr(param, "data", None), w.shape)
        if getattr(param, "grad", None) is None:
            param.grad = np.zeros_like(w)
        params.append(param)
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


def set_grad(param: object, grad: np.ndarray) -> None:
    """Write ``grad`` into ``param.grad`` in place (or set it, if there is no array yet)."""
    current = getattr(param, "grad", None)
    if isinstance(current, ndarray) and current.shape == grad.shape and current.flags.writeable:
        current[...] = grad
    else:
        param.grad = grad.copy()


def param_groups(what: str, optimizer: object) -> list:
    """The optimizer's ``param_groups``: a list of dicts with an 'lr' key each."""
    groups = getattr(optimizer, "param_groups", None)
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
            return predicted is not None and close(got, predicted)
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
                 before_step: Callable[[int, Twins], None] | None = None) -> None:
    """Feed both optimizers the same gradients; every parameter must agree after every step."""
    for t, grads in enumerate(problem.gradients(), start=1):
        if before_step is not None:
            before_step(t, twins)
        weights = [p.data.copy() for p in twins.ref_params]
        states = [_snapshot(twins.ref.state.get(p)) for p in twins.ref_params]
        for student_param, ref_param, g in zip(twins.student_params, twins.ref_params, grads):
            set_grad(student_param, g)
            ref_param.grad[...] = g
        call(f"{twins.label}.step() (step {t})", twins.student.step)
        twins.ref.step()
        for i, (student_param, ref_param) in enumerate(zip(twins.student_params, twins.ref_params)):
            step = Step(t, weights[i], grads[i], _group_of(twins.ref, ref_param), states[i])
            signatures = tuple(m.signature(step) for m in mistakes) + _generic(step)
            expect_close(f"step {t} of {twins.label}: parameter {i}",
                         getattr(student_param, "data", None), ref_param.data,
                         f"shape {ref_param.shape}{problem}", signatures)


def _snapshot(state: dict | None) -> dict:
    return {k: v.copy() if isinstance(v, ndarray) else v for k, v in (state or {}).items()}


def _group_of(optimizer, param) -> dict:
    return next(g for g in optimizer.param_groups if any(p is param for p in g["params"]))


def expect_configs(name: str, student_cls: type, Parameter: type | None, configs: list[dict],
                   mistakes: tuple[Mistake, ...]) -> None:
    """Each configuration on each problem, STEPS steps."""
    for kwargs in configs:
        for problem in PROBLEMS:
            twins = Twins.build(name, student_cls, Parameter, problem.initial(), kwargs)
            expect_steps(twins, problem, mistakes)


# ----------------------------------------------------------------------------- SGD
def sgd_rule(s: Step, grad: np.ndarray, *, keep: bool = True, zero_init: bool = False,
             nesterov: bool | None = None, dampening: float | None = None) -> np.ndarray:
    """The weight after one SGD step with ``grad``, with a variant's deviations."""
    mu = s["momentum"]
    tau = s["dampening"] if dampening is None else dampening
    if mu:
        previous = s.before.get("momentum_buffer") if keep else None
        if previous is None:
            buf = (1 - tau) * grad if zero_init else grad
        else:
            buf = mu * previous + (1 - tau) * grad
        use_nesterov = s["nesterov"] if nesterov is None else nesterov
        grad = grad + mu * buf if use_nesterov else buf
    return s.w - s["lr"] * grad


SGD_MISTAKES = (
    Mistake("buffer_reset", lambda s: sgd_rule(s, s.l2(), keep=False)
            if s["momentum"] and s.t > 1 else None,
            "the momentum buffer is not kept between steps: each step starts it again from "
            "the gradient. Keep it per parameter across calls of step(), e.g. in "
            "self.state[p]['momentum_buffer']."),
    Mistake("buffer_zero_init", lambda s: sgd_rule(s, s.l2(), zero_init=True)
            if s["momentum"] and s["dampening"] and s.t == 1 else None,
            "on the first step the momentum buffer must be the gradient itself, b = g (PyTorch "
            "applies no dampening then); yours is (1 - dampening) * g, as if the buffer "
            "started at zeros."),
    Mistake("nesterov_ignored", lambda s: sgd_rule(s, s.l2(), nesterov=False)
            if s["nesterov"] else None,
            "nesterov=True is ignored: with Nesterov momentum the update is g + momentum * b, "
            "not the buffer b."),
    Mistake("dampening_ignored", lambda s: sgd_rule(s, s.l2(), dampening=0.0)
            if s["dampening"] else None,
            "dampening is ignored: b = momentum * b + (1 - dampening) * g (after step 1)."),
) + decay_mistakes(sgd_rule)


@check
def sgd_step(SGD, Parameter=None):
    """Plain SGD, ``w <- w - lr * g``, with two learning rates, over several steps."""
    expect_configs("SGD", SGD, Parameter, [dict(lr=0.1), dict(lr=0.5)], SGD_MISTAKES)


@check
def sgd_momentum(SGD, Parameter=None):
    """Momentum with a buffer kept between steps (b = g on step 1), dampening, Nesterov."""
    configs = [dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.5),
               dict(lr=0.05, momentum=0.8, nesterov=True)]
    expect_configs("SGD", SGD, Parameter, configs, SGD_MISTAKES)


@check
def sgd_weight_decay(SGD, Parameter=None):
    """L2 weight decay, ``g + weight_decay * w``, alone and with (Nesterov) momentum."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.1, momentum=0.9, weight_decay=0.05),
               dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)]
    expect_configs("SGD", SGD, Parameter, configs, SGD_MISTAKES)


def with_group(s: Step, **changes) -> Step:
    """The same step under other hyperparameters (what a mistaken optimizer used)."""
    return replace(s, group={**s.group, **changes})


@check
def optimizer_zero_grad(SGD, Parameter=None):
    """zero_grad() resets every .grad to zeros in place (the same array) and leaves .data alone."""
    problem = PROBLEMS[0]
    weights, grads = problem.initial(), problem.gradients(1)[0]
    twins = Twins.build("SGD", SGD, Parameter, weights, dict(lr=0.1))
    for param, g in zip(twins.student_params, grads):
        set_grad(param, g)
    held = [param.grad for param in twins.student_params]
    call(f"{twins.label}.zero_grad()", twins.student.zero_grad)
    for i, (param, old, w, g) in enumerate(zip(twins.student_params, held, weights, grads)):
        what = f"after {twins.label}.zero_grad(), parameter {i}"
        if getattr(param, "grad", None) is None:
            fail(f"{what}.grad is None. In this course a gradient is an array that backward() "
                 "adds into (+=), so zero_grad() resets it to zeros in place: p.grad.fill(0).")
        unchanged = when("unchanged", lambda got, e, g=g: close(got, g),
                         "zero_grad() left the gradient as it was. Reset each p.grad in place "
                         "(p.grad.fill(0)); rebinding a local name to np.zeros_like(...) "
                         "changes nothing.")
        expect_close(f"{what}.grad", param.grad, np.zeros_like(w), signatures=(unchanged,))
        if not close(old, np.zeros_like(w)):
            fail(f"{what}.grad is a new array of zeros, but the old array still holds the old "
                 "gradient.\n  Likely mistake: zero_grad() replaced p.grad instead of zeroing it "
                 "in place; whatever still holds the old array (the model's grads(), a layer) "
                 "keeps a stale gradient. Use p.grad.fill(0) or p.grad[...] = 0.")
        expect_close(f"{what}.data", param.data, w, "zero_grad() must not change the weights")


@check
def optimizer_lr_from_param_groups(SGD, Parameter=None):
    """param_groups[0]['lr'] holds the rate, and step() reads it anew at every step."""
    problem = PROBLEMS[0]
    twins = Twins.build("SGD", SGD, Parameter, problem.initial(), dict(lr=0.1, momentum=0.9))
    groups = param_groups(twins.label, twins.student)
    expect(len(groups) == 1 and groups[0]["lr"] == 0.1,
           f"{twins.label}.param_groups should be one group with 'lr': 0.1 for a plain list of "
           f"parameters, got {len(groups)} group(s) with lr {[g['lr'] for g in groups]}.")
    new_rates = {3: 0.02, 5: 0.3}

    def change_lr(t: int, twins: Twins) -> None:
        if t in new_rates:
            param_groups(twins.label, twins.student)[0]["lr"] = new_rates[t]
            twins.ref.param_groups[0]["lr"] = new_rates[t]

    stale = Mistake("stale_lr", lambda s: sgd_rule(with_group(s, lr=0.1), s.g),
                    "step() used the learning rate given to the constructor, not "
                    "param_groups[i]['lr']. Schedulers change the rate there, so read "
                    "group['lr'] at every step.")
    expect_steps(twins, problem, (stale,) + SGD_MISTAKES, change_lr)


@check
def optimizer_param_groups(SGD, Parameter=None):
    """Dict groups {'params': [...], 'lr': ...}: a group's keys override the constructor's."""
    problem, defaults = PROBLEMS[0], dict(lr=0.1)
    layout = [((0, 1), {"lr": 0.01}), ((2,), {"momentum": 0.9})]
    twins = Twins.build("SGD", SGD, Parameter, problem.initial(), defaults, layout)
    rates = [group["lr"] for group in param_groups(twins.label, twins.student)]
    expect(rates == [0.01, 0.1],
           f"{twins.label}.param_groups should hold two groups with lr 0.01 and 0.1 (the "
           f"default), got lr {rates}. A key in a group dict overrides the constructor's value "
           "for that group; the constructor's values only fill in the keys a group lacks.")
    ignored = Mistake("group_ignored",
                      lambda s: sgd_rule(with_group(s, momentum=0.0, **defaults), s.g),
                      "the group's own settings are ignored: a key in a group dict ('lr', "
                      "'momentum') overrides the constructor's value for that group; the "
                      "constructor's values only fill in the keys a group lacks.")
    expect_steps(twins, problem, (ignored,) + SGD_MISTAKES)


# ----------------------------------------------------------------------------- Adam, AdamW
def adam_rule(s: Step, grad: np.ndarray, *, correct: bool = True, decay: float = 0.0,
              eps_at: str = "outside") -> np.ndarray:
    """The weight after one Adam step with ``grad``; ``decay`` shrinks w first (AdamW);
    ``eps_at`` places eps as PyTorch does ("outside" sqrt(v_hat)), "inside" the root, or
    "uncorrected", added to sqrt(v) before the bias correction."""
    beta1, beta2 = s["betas"]
    m = beta1 * s.before.get("exp_avg", 0.0) + (1 - beta1) * grad
    v = beta2 * s.before.get("exp_avg_sq", 0.0) + (1 - beta2) * grad * grad
    c1, c2 = (1 - beta1**s.t, 1 - beta2**s.t) if correct else (1.0, 1.0)
    denominator = {"outside": np.sqrt(v / c2) + s["eps"], "inside": np.sqrt(v / c2 + s["eps"]),
                   "uncorrected": (np.sqrt(v) + s["eps"]) / np.sqrt(c2)}[eps_at]
    return s.w * (1 - decay) - s["lr"] * (m / c1) / denominator


def _decoupled(s: Step) -> float:
    return s["lr"] * s["weight_decay"]


def no_bias_correction(decoupled: bool) -> Mistake:
    def predict(s: Step) -> np.ndarray:
        if decoupled:
            return adam_rule(s, s.g, correct=False, decay=_decoupled(s))
        return adam_rule(s, s.l2(), correct=False)
    return Mistake(
        "no_bias_correction", predict,
        "Adam without bias correction: divide the moments by (1 - beta1**t) and "
        "(1 - beta2**t), with t the number of steps so far, counted from 1. Without it the "
        "first steps have the wrong size.")


EPS_MISTAKES = (
    Mistake("eps_inside_sqrt", lambda s: adam_rule(s, s.l2(), eps_at="inside"),
            "eps is inside the square root (sqrt(v_hat + eps)); PyTorch divides by "
            "sqrt(v_hat) + eps."),
    Mistake("eps_before_correction", lambda s: adam_rule(s, s.l2(), eps_at="uncorrected"),
            "eps was added to sqrt(v) before the bias correction; correct v first, then add "
            "eps: sqrt(v / (1 - beta2**t)) + eps."),
)

ADAM_MISTAKES = EPS_MISTAKES + (
    no_bias_correction(decoupled=False),
    Mistake("decay_after_moments", lambda s: adam_rule(s, s.g, decay=_decoupled(s))
            if s["weight_decay"] else None,
            "weight decay was applied to the weights after the moments (that is AdamW's "
            "decoupled decay). Adam's weight_decay is L2: add weight_decay * w to the gradient "
            "before updating m and v."),
) + decay_mistakes(adam_rule)

ADAMW_MISTAKES = (
    no_bias_correction(decoupled=True),
    Mistake("decay_in_gradient", lambda s: adam_rule(s, s.l2()) if s["weight_decay"] else None,
            "the weight decay went into the gradient (g + weight_decay * w): that is Adam with "
            "L2. AdamW decouples it: first w <- w * (1 - lr * weight_decay), then the Adam step "
            "with the plain gradient."),
    Mistake("decay_without_lr", lambda s: adam_rule(s, s.g, decay=s["weight_decay"])
            if s["weight_decay"] else None,
            "the decay is w * (1 - weight_decay); AdamW multiplies by (1 - lr * weight_decay)."),
    Mistake("decoupled_missing", lambda s: adam_rule(s, s.g) if s["weight_decay"] else None,
            "weight_decay is ignored: AdamW first shrinks w <- w * (1 - lr * weight_decay)."),
)


@check
def adam_step(Adam, Parameter=None):
    """Adam with bias correction: the defaults (lr=1e-3), lr=0.1, other betas, and a large
    eps=0.1, where its place in the denominator shows."""
    configs = [dict(), dict(lr=0.1), dict(lr=0.01, betas=(0.8, 0.99)), dict(lr=0.1, eps=0.1)]
    expect_configs("Adam", Adam, Parameter, configs, ADAM_MISTAKES)


@check
def adam_weight_decay(Adam, Parameter=None):
    """Adam's weight_decay is L2: weight_decay * w is added to the gradient before the moments."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.5)]
    expect_configs("Adam", Adam, Parameter, configs, ADAM_MISTAKES)


@check
def adamw_step(AdamW, Parameter=None):
    """AdamW: decoupled decay w <- w * (1 - lr * weight_decay) then Adam; default decay 1e-2."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.01), dict(lr=0.05, betas=(0.8, 0.99))]
    expect_configs("AdamW", AdamW, Parameter, configs, ADAMW_MISTAKES)


# ----------------------------------------------------------------------------- RMSprop
def rmsprop_rule(s: Step, grad: np.ndarray, *, root: Callable = np.sqrt, eps_inside: bool = False,
                 centered: bool | None = None, momentum: float | None = None) -> np.ndarray:
    """The weight after one RMSprop step with ``grad``, with a variant's deviations."""
    alpha = s["alpha"]
    mean_square = alpha * s.before.get("square_avg", 0.0) + (1 - alpha) * grad * grad
    if s["centered"] if centered is None else centered:
        grad_avg = alpha * s.before.get("grad_avg", 0.0) + (1 - alpha) * grad
        mean_square = mean_square - grad_avg * grad_avg
    denom = root(mean_square + s["eps"]) if eps_inside else root(mean_square) + s["eps"]
    update = grad / denom
    mu = s["momentum"] if momentum is None else momentum
    if mu > 0:
        update = mu * s.before.get("momentum_buffer", 0.0) + update
    return s.w - s["lr"] * update


RMSPROP_MISTAKES = (
    Mistake("no_sqrt", lambda s: rmsprop_rule(s, s.l2(), root=lambda a: a),
            "the gradient is divided by the mean square itself: divide by its square root, "
            "sqrt(s) + eps."),
    Mistake("eps_inside_sqrt", lambda s: rmsprop_rule(s, s.l2(), eps_inside=True),
            "eps is inside the square root: PyTorch divides by sqrt(s) + eps."),
    Mistake("centered_ignored", lambda s: rmsprop_rule(s, s.l2(), centered=False)
            if s["centered"] else None,
            "centered=True is ignored: subtract the squared running mean of the gradient, "
            "sqrt(s - g_avg**2) + eps."),
    Mistake("momentum_ignored", lambda s: rmsprop_rule(s, s.l2(), momentum=0.0)
            if s["momentum"] else None,
            "momentum is ignored: b = momentum * b + g / (sqrt(s) + eps), then w -= lr * b."),
) + decay_mistakes(rmsprop_rule)


@check
def rmsprop_step(RMSprop, Parameter=None):
    """RMSprop: the defaults (lr=1e-2, alpha=0.99), another alpha, a large eps, weight decay."""
    configs = [dict(), dict(lr=0.01, alpha=0.9, eps=1e-2), dict(lr=0.01, weight_decay=0.1)]
    expect_configs("RMSprop", RMSprop, Parameter, configs, RMSPROP_MISTAKES)


@check
def rmsprop_centered_momentum(RMSprop, Parameter=None):
    """RMSprop with centered=True, with momentum, and with both."""
    configs = [dict(lr=0.01, centered=True), dict(lr=0.01, momentum=0.9),
               dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)]
    expect_configs("RMSprop", RMSprop, Parameter, configs, RMSPROP_MISTAKES)
