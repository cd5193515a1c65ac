"""Checks of the adaptive optimizers: Adam (bias correction, eps, L2 decay), AdamW (decoupled
decay) and RMSprop (centred, momentum). See ``_optim_twins`` for how an optimizer is graded."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from autograder.checks._optim_own import DECOUPLED, judge, l2
from autograder.checks._optim_twins import Mistake, Step, decay_mistakes, expect_configs
from autograder.registry import check


# ----------------------------------------------------------------------------- Adam, AdamW
def adam_rule(s: Step, grad: np.ndarray, *, correct: bool = True, decay: float = 0.0,
              eps_at: str = "outside", correct_v: bool = True) -> np.ndarray:
    """The weight after one Adam step with ``grad``; ``decay`` shrinks w first (AdamW);
    ``eps_at`` places eps as PyTorch does ("outside" sqrt(v_hat)), "inside" the root, or
    "uncorrected", added to sqrt(v) before the bias correction; ``correct_v=False`` corrects
    m only."""
    beta1, beta2 = s["betas"]
    m = beta1 * s.before.get("exp_avg", 0.0) + (1 - beta1) * grad
    v = beta2 * s.before.get("exp_avg_sq", 0.0) + (1 - beta2) * grad * grad
    c1, c2 = (1 - beta1**s.t, 1 - beta2**s.t) if correct else (1.0, 1.0)
    c2 = c2 if correct_v else 1.0
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


SECOND_MOMENT = Mistake(
    "no_second_moment_correction", lambda s: adam_rule(s, s.l2(), correct_v=False),
    "the second moment is not bias-corrected: m_hat = m / (1 - beta1**t) is there, v_hat = "
    "v / (1 - beta2**t) is missing. Divide by sqrt(v_hat) + eps: without it the first steps "
    "are 1/sqrt(1 - beta2**t) times too large (32 times at t = 1 with beta2 = 0.999).")
EPS_MISTAKES = (
    Mistake("eps_inside_sqrt", lambda s: adam_rule(s, s.l2(), eps_at="inside"),
            "eps is inside the square root (sqrt(v_hat + eps)); PyTorch divides by "
            "sqrt(v_hat) + eps."),
    Mistake("eps_before_correction", lambda s: adam_rule(s, s.l2(), eps_at="uncorrected"),
            "eps was added to sqrt(v) before the bias correction; correct v first, then add "
            "eps: sqrt(v / (1 - beta2**t)) + eps."),
)


STATE_LOST = ("step 1 is right, and a later step is not: m and v are rebuilt from zeros at every "
              "step. Keep them between steps in the state dict _update is given "
              "(state['exp_avg'], state['exp_avg_sq'], with the step count t): store the new "
              "moments back into it, or update its arrays in place.")


def state_lost(decay: Callable[[Step], dict]) -> tuple[Mistake, ...]:
    """The moments rebuilt from zeros at each step, with the step count kept or lost too;
    ``decay(s)`` the gradient and decay of the rule (Adam's L2 or AdamW's)."""
    return tuple(
        Mistake(name, lambda s, t=t: adam_rule(replace(s, before={}, t=t or s.t), **decay(s))
                if s.t > 1 else None, STATE_LOST)
        for name, t in (("moments_lost", 0), ("state_lost", 1)))


ADAM_MISTAKES = EPS_MISTAKES + state_lost(lambda s: {"grad": s.l2()}) + (
    no_bias_correction(decoupled=False), SECOND_MOMENT,
    Mistake("decay_after_moments", lambda s: adam_rule(s, s.g, decay=_decoupled(s))
            if s["weight_decay"] else None,
            "weight decay was applied to the weights after the moments (that is AdamW's "
            "decoupled decay). Adam's weight_decay is L2: add weight_decay * w to the gradient "
            "before updating m and v."),
) + decay_mistakes(adam_rule)


ADAMW_MISTAKES = state_lost(lambda s: {"grad": s.g, "decay": _decoupled(s)}) + (
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
    expect_configs("Adam", Adam, Parameter, configs, ADAM_MISTAKES, in_place=True)


@check
def adam_weight_decay(Adam, Parameter=None):
    """Adam's weight_decay is L2: weight_decay * w is added to the gradient before the moments
    (judged against the student's own Adam update when that is wrong: adam_step's part)."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.5)]
    expect_configs("Adam", Adam, Parameter, configs, ADAM_MISTAKES,
                   judge("Adam", Adam, Parameter, l2("adam_step")))


@check
def adamw_step(AdamW, Parameter=None):
    """AdamW: decoupled decay w <- w * (1 - lr * weight_decay) then Adam; default decay 1e-2
    (judged against the student's own AdamW without decay, the Adam update it inherits, when
    that is wrong: adam_step's part)."""
    configs = [dict(lr=0.1, weight_decay=0.1), dict(lr=0.01), dict(lr=0.05, betas=(0.8, 0.99))]
    expect_configs("AdamW", AdamW, Parameter, configs, ADAMW_MISTAKES,
                   judge("AdamW", AdamW, Parameter, DECOUPLED))


# ----------------------------------------------------------------------------- RMSprop
def rmsprop_rule(s: Step, grad: np.ndarray, *, root: Callable = np.sqrt, eps_inside: bool = False,
                 centered: bool | None = None, momentum: float | None = None,
                 square: Callable = lambda a: a * a) -> np.ndarray:
    """The weight after one RMSprop step with ``grad``, with a variant's deviations (``square``:
    what the centred form subtracts of the running mean g_avg)."""
    alpha = s["alpha"]
    mean_square = alpha * s.before.get("square_avg", 0.0) + (1 - alpha) * grad * grad
    if s["centered"] if centered is None else centered:
        grad_avg = alpha * s.before.get("grad_avg", 0.0) + (1 - alpha) * grad
        mean_square = mean_square - square(grad_avg)
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
    Mistake("mean_not_squared", lambda s: rmsprop_rule(s, s.l2(), square=lambda a: a)
            if s["centered"] else None,
            "centered=True subtracts the running mean g_avg itself: subtract its square, "
            "sqrt(s - g_avg**2) + eps. s - g_avg is no variance and can be negative (a negative "
            "variance), whose square root is NaN: that is where the NaN comes from."),
    Mistake("momentum_ignored", lambda s: rmsprop_rule(s, s.l2(), momentum=0.0)
            if s["momentum"] else None,
            "momentum is ignored: b = momentum * b + g / (sqrt(s) + eps), then w -= lr * b."),
) + decay_mistakes(rmsprop_rule)


@check
def rmsprop_step(RMSprop, Parameter=None):
    """RMSprop: the defaults (lr=1e-2, alpha=0.99), another alpha, a large eps, weight decay."""
    configs = [dict(), dict(lr=0.01, alpha=0.9, eps=1e-2), dict(lr=0.01, weight_decay=0.1)]
    expect_configs("RMSprop", RMSprop, Parameter, configs, RMSPROP_MISTAKES, in_place=True)


@check
def rmsprop_centered_momentum(RMSprop, Parameter=None):
    """RMSprop with centered=True, with momentum, and with both."""
    configs = [dict(lr=0.01, centered=True), dict(lr=0.01, momentum=0.9),
               dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)]
    expect_configs("RMSprop", RMSprop, Parameter, configs, RMSPROP_MISTAKES)
