"""Checks of the Optimizer base and SGD: plain steps, momentum (dampening, Nesterov), weight
decay, zero_grad and parameter groups. See ``_optim_twins`` for how an optimizer is graded."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from autograder.checks._calls import Script, kept_attribute
from autograder.checks._optim_own import Own, OwnGroups, Part, judge, l2
from autograder.checks._optim_twins import (
    Mistake, PROBLEMS, Step, Twins, decay_mistakes, expect_configs, expect_steps, param_groups,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close, when
from course.testing.failure import expect, fail


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
    expect_configs("SGD", SGD, Parameter, [dict(lr=0.1), dict(lr=0.5)], SGD_MISTAKES,
                   in_place=True)


@check
def sgd_momentum(SGD, Parameter=None):
    """Momentum with a buffer kept between steps (b = g on step 1), dampening, Nesterov."""
    configs = [dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.5),
               dict(lr=0.05, momentum=0.8, nesterov=True)]
    expect_configs("SGD", SGD, Parameter, configs, SGD_MISTAKES)


@check
def sgd_weight_decay(SGD, Parameter=None):
    """L2 weight decay, ``g + weight_decay * w``, alone and with (Nesterov) momentum (judged
    against the student's own SGD without decay when that is wrong: sgd_momentum's part)."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.1, momentum=0.9, weight_decay=0.05),
               dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)]
    expect_configs("SGD", SGD, Parameter, configs, SGD_MISTAKES,
                   judge("SGD", SGD, Parameter, l2("sgd_momentum")))


def with_group(s: Step, **changes) -> Step:
    """The same step under other hyperparameters (what a mistaken optimizer used)."""
    return replace(s, group={**s.group, **changes})


@check
def optimizer_zero_grad(SGD, Parameter=None):
    """zero_grad() resets every .grad to zeros in place (the same array) and leaves .data alone."""
    problem = PROBLEMS[0]
    weights, grads = problem.initial(), problem.gradients(1)[0]
    twins = Twins.build("SGD", SGD, Parameter, weights, dict(lr=0.1))
    given = Script(twins.student)
    given.assign("the parameters' .grad", twins.student_params, "grad", grads)
    given.finish()
    readers = [kept_attribute(f"parameter {i}.grad", param, "grad")[1]
               for i, param in enumerate(twins.student_params)]
    call(f"{twins.label}.zero_grad()", twins.student.zero_grad)
    for i, (param, old, w, g) in enumerate(zip(twins.student_params, readers, weights, grads)):
        what = f"after {twins.label}.zero_grad(), parameter {i}"
        if getattr(param, "grad", None) is None:
            fail(f"{what}.grad is None. In this course a gradient is an array that backward() "
                 "adds into (+=), so zero_grad() resets it to zeros in place: p.grad.fill(0).")
        unchanged = when("unchanged", lambda got, e, g=g: close(got, g),
                         "zero_grad() left the gradient as it was. Reset each p.grad in place "
                         "(p.grad.fill(0)); rebinding a local name to np.zeros_like(...) "
                         "changes nothing.")
        expect_close(f"{what}.grad", param.grad, np.zeros_like(w), signatures=(unchanged,))
        if not close(old(), np.zeros_like(w)):
            fail(f"{what}.grad is a new array of zeros, but the old array still holds the old "
                 "gradient.\n  Likely mistake: zero_grad() replaced p.grad instead of zeroing it "
                 "in place; whatever still holds the old array (the model's grads(), a layer) "
                 "keeps a stale gradient. Use p.grad.fill(0) or p.grad[...] = 0.")
        expect_close(f"{what}.data", param.data, w, "zero_grad() must not change the weights")


RATES = {3: 0.02, 5: 0.3}   # written into param_groups[0]['lr'] before those steps


def _rate(t: int, first: float) -> float:
    """The rate of step ``t`` when ``RATES`` are written into the group, ``first`` before."""
    return next((lr for step, lr in sorted(RATES.items(), reverse=True) if t >= step), first)


@check
def optimizer_lr_from_param_groups(SGD, Parameter=None):
    """param_groups[0]['lr'] holds the rate, and step() reads it anew at every step (judged
    against the student's own SGD stepped by each rate when its step is wrong: sgd_step's)."""
    problem = PROBLEMS[0]
    twins = Twins.build("SGD", SGD, Parameter, problem.initial(), dict(lr=0.1))
    groups = param_groups(twins.label, twins.student)
    expect(len(groups) == 1 and groups[0]["lr"] == 0.1,
           f"{twins.label}.param_groups should be one group with 'lr': 0.1 for a plain list of "
           f"parameters, got {len(groups)} group(s) with lr {[g['lr'] for g in groups]}.")
    stale = Mistake("stale_lr", lambda s: sgd_rule(with_group(s, lr=0.1), s.g),
                    "step() used the learning rate given to the constructor, not "
                    "param_groups[i]['lr']. Schedulers change the rate there, so read "
                    "group['lr'] at every step.")
    rates = Part("reading param_groups[0]['lr'] at every step", {"lr": 1.0}, "sgd_step",
                 gradient=lambda g, w, group, t: _rate(t, 0.1) * g)
    expect_steps(twins, problem, (stale,) + SGD_MISTAKES, new_rates=RATES,
                 own=Own("SGD", SGD, Parameter, dict(lr=0.1), rates))


@check
def optimizer_param_groups(SGD, Parameter=None):
    """Dict groups {'params': [...], 'lr': ...}: a group's keys override the constructor's
    (each group judged against the student's own SGD with its settings when the steps are
    wrong: sgd_step's and sgd_momentum's)."""
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
    expect_steps(twins, problem, (ignored,) + SGD_MISTAKES,
                 own=OwnGroups("SGD", SGD, Parameter, defaults, layout))
