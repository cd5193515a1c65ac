"""Checks of the learning-rate schedulers: the rate after construction and after every step().

A scheduler changes ``optimizer.param_groups[i]['lr']``, so each check builds the
student's scheduler on an optimizer of the student's own ``SGD`` class (passed to
the check) and the reference scheduler on the reference ``SGD``. It then compares,
right after construction (which performs step 0, as in PyTorch) and after each of
many ``scheduler.step()`` calls, both ``param_groups[0]['lr']`` (what the optimizer
uses) and ``scheduler.get_last_lr()`` (a list, one rate per group). A wrong rate is
reported at the first step where it goes wrong, with the two sequences side by side
and, when the sequence matches a known mistake (one step late, decaying at every
step, the wrong cosine period...), that mistake in words. As in the optimizer
checks, ``Parameter`` may be the student's class: ``check.step_lr_schedule(StepLR, SGD)``
or ``check.step_lr_schedule(StepLR, SGD, Parameter)``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from autograder.checks._calls import Script
from autograder.checks._optim_twins import Twins, checked_groups
from autograder.remote.doubles import DOUBLES, SCHEDULES, Lambda, halving
from autograder.remote.proxy import Remote
from course.testing.compare import as_array
from course.testing.diagnose import Signature, close, diagnose, when
from course.testing.failure import CheckFailure, fail
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import nn
from minitorch_ref import optim as ref_optim
from minitorch_ref.optim import lr_scheduler as ref

STEPS = 25
BASE_LR = 0.1
SHOWN = 8  # rates shown around the first wrong one


# ----------------------------------------------------------------------------- recording
def _label(name: str, kwargs: dict) -> str:
    return f"{name}(optimizer{''.join(f', {k}={v!r}' for k, v in kwargs.items())})"


def _record(label: str, scheduler, optimizer, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Group rates and get_last_lr() after construction and each step: two (steps+1, groups).
    The student's steps run as one script (one request, graded from outside)."""
    script, reads = Script(scheduler), []
    step = call(f"{label}.step", getattr, scheduler, "step")
    get_last_lr = call(f"{label}.get_last_lr", getattr, scheduler, "get_last_lr")
    for t in range(steps + 1):
        if t:
            script.call(f"{label}.step() (call {t})", step)
        reads.append((script.attributes("the optimizer", [optimizer], "param_groups"),
                      script.call(f"{label}.get_last_lr()", get_last_lr)))
    values = script.finish()
    rates, last = [], []
    for groups_at, last_at in reads:
        groups = checked_groups("the optimizer", values[groups_at][0])
        rates.append([float(g["lr"]) for g in groups])
        value = values[last_at]
        if not isinstance(value, (list, tuple)):
            fail(f"{label}.get_last_lr() returned {type(value).__name__}; it returns a list "
                 "with one learning rate per parameter group, as in PyTorch.")
        last.append(as_array(f"{label}.get_last_lr()", list(value), (len(groups),)))
    return np.array(rates, dtype=float), np.array(last, dtype=float)


def _when(t: int) -> str:
    if t == 0:
        return "right after construction (construction performs step 0)"
    return f"after {t} call{'s' if t > 1 else ''} of scheduler.step()"


def _window(values: np.ndarray, t: int) -> str:
    start = max(0, min(t - 2, len(values) - SHOWN))
    shown = ", ".join(f"{v:.6g}" for v in values[start:start + SHOWN])
    return f"(from step {start}) [{shown}{', ...' if start + SHOWN < len(values) else ''}]"


def expect_rates(label: str, what: str, got: np.ndarray, expected: np.ndarray,
                 signatures: tuple[Signature, ...] = (), blame: str = "step") -> None:
    """Every group's rate sequence must match; report the first wrong step of a group.

    ``what`` names the rate, with ``{i}`` for the group index; ``blame`` the code a rate off
    by one step comes from: the base class's ``step`` or a schedule's ``lr_at``.
    """
    for group in range(expected.shape[1]):
        g, e = got[:, group], expected[:, group]
        wrong = [t for t in range(len(e)) if not close(g[t], e[t])]
        if not wrong:
            continue
        t = wrong[0]
        lines = [f"{label}: {what.format(i=group)} is wrong {_when(t)}: got {g[t]:.6g}, "
                 f"expected {e[t]:.6g}.",
                 f"  expected {_window(e, t)}", f"  got      {_window(g, t)}"]
        hint = diagnose(g, e, signatures + _shift_signatures(blame))
        if hint:
            lines.append(f"  Likely mistake: {hint}")
        fail("\n".join(lines))


SHIFTED = {
    "step": {
        "lags": "your rates are one step late. Construction performs step 0 (the given "
                "__init__ calls self.step() with last_epoch = -1): step() must first increment "
                "last_epoch, then compute the rates for it.",
        "ahead": "your rates are one step early: step() computes the rate of the epoch after "
                 "last_epoch. Increment last_epoch first, then compute the rates for it.",
    },
    "lr_at": {
        "lags": "lr_at(base_lr, epoch) gives the rate of the epoch before: epochs count from 0, "
                "and lr_at(base_lr, 0) is the rate right after construction. (Construction "
                "and step() are right: a test schedule on your class steps right.)",
        "ahead": "lr_at(base_lr, epoch) gives the rate of the epoch after: epochs count from 0, "
                 "and lr_at(base_lr, 0) is the rate right after construction, usually base_lr. "
                 "(Construction and step() are right: a test schedule on your class steps "
                 "right.)",
    },
}


def _shift_signatures(blame: str = "step") -> tuple[Signature, ...]:
    def changes(e):
        return not close(e[1:], e[:-1])
    return (
        when("lags", lambda g, e: changes(e) and close(g[1:], e[:-1]), SHIFTED[blame]["lags"]),
        when("ahead", lambda g, e: changes(e) and close(g[:-1], e[1:]), SHIFTED[blame]["ahead"]),
        when("constant", lambda g, e: close(g, np.full_like(e, g[0])),
             "the rate never changes: step() must increment self.last_epoch, compute the "
             "rates for it and write them into every optimizer.param_groups[i]['lr']."
             if blame == "step" else "the rate never changes: lr_at(base_lr, epoch) must "
             "depend on the epoch."),
    )


# ----------------------------------------------------------------------------- running
def expect_schedule(name: str, scheduler_cls: type, SGD: type, Parameter: type | None,
                    kwargs: dict, steps: int = STEPS, lrs: tuple[float, ...] = (BASE_LR,),
                    signatures: tuple[Signature, ...] = (), reference: type | None = None) -> None:
    """The student's scheduler on the student's SGD against the reference (``ref.<name>``
    unless given), ``steps`` steps. A schedule (not given ``reference``) leans on the stepping
    its base class gives it, lr_scheduler_step's part: when its rates are wrong, it is judged
    by its own part, lr_at (``_own_part``)."""
    schedule = Schedule(name, scheduler_cls, SGD, Parameter, kwargs, steps, lrs)
    expected = _expected(reference or getattr(ref, name), kwargs, steps, lrs)
    try:
        schedule.expect(expected, signatures)
    except CheckFailure as failure:
        if reference is not None:
            raise
        _own_part(schedule, expected, signatures, failure)


def _expected(reference: type, kwargs: dict, steps: int,
              lrs: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The reference scheduler's rates and get_last_lr() on an optimizer with groups ``lrs``."""
    optimizer = ref_optim.SGD([{"params": [nn.Parameter(np.zeros(2))], "lr": lr} for lr in lrs],
                              lr=lrs[0])
    return _record(_label(reference.__name__, kwargs), reference(optimizer, **kwargs), optimizer,
                   steps)


@dataclass(frozen=True)
class Schedule:
    """The student's scheduler ``cls(optimizer, **kwargs)`` on an optimizer of the student's
    SGD, built when first needed, and what it does."""

    name: str
    cls: type
    SGD: type
    Parameter: type | None
    kwargs: dict
    steps: int
    lrs: tuple[float, ...] = (BASE_LR,)

    @property
    def label(self) -> str:
        return _label(self.name, self.kwargs)

    @functools.cached_property
    def built(self) -> tuple[object, object]:
        """The student's scheduler and the optimizer it drives."""
        layout = (None if len(self.lrs) == 1 else
                  [((i,), {"lr": lr}) for i, lr in enumerate(self.lrs)])
        twins = Twins.build("SGD", self.SGD, self.Parameter, [np.zeros(2) for _ in self.lrs],
                            dict(lr=self.lrs[0]), layout)
        scheduler = call(self.label, self.cls, twins.student, **_handed(self.cls, self.kwargs))
        check_instance(self.name, scheduler, allowed=[twins.student, *twins.student_params,
                                                      *self.kwargs.values()])
        return scheduler, twins.student

    @functools.cached_property
    def recorded(self) -> tuple[np.ndarray, np.ndarray]:
        """The rates and get_last_lr() after construction and each step (stepped once)."""
        return _record(self.label, *self.built, self.steps)

    def expect(self, expected: tuple[np.ndarray, np.ndarray], signatures: tuple[Signature, ...],
               blame: str = "step") -> None:
        (rates, last), (got_rates, got_last) = expected, self.recorded
        expect_rates(self.label, "optimizer.param_groups[{i}]['lr']", got_rates, rates,
                     signatures + _not_written(got_last, last), blame)
        expect_rates(self.label, "get_last_lr()[{i}]", got_last, last,
                     signatures + _stale_last_lr(), blame)

    def subclass(self, double: str) -> Schedule:
        """The same schedule on a test subclass of the student's (``doubles.DOUBLES``)."""
        cls = (self.cls._session.send("double", double, self.cls)
               if isinstance(self.cls, Remote) else DOUBLES[double](self.cls))
        return replace(self, name=f"{cls.__name__}({self.name})", cls=cls)

    def steps_right(self) -> bool:
        """Whether the stepping the schedule inherits (construction, step(), get_last_lr())
        is right: the schedule's test subclass whose lr_at halves the rate every epoch must
        step as the reference's does."""
        halving = replace(self.subclass("halving"), steps=HALVING_STEPS, lrs=(BASE_LR,))
        try:
            rates, last = halving.recorded
        except CheckFailure:
            return False
        expected = BASE_LR * 0.5 ** np.arange(HALVING_STEPS + 1)[:, None]
        return close(rates, expected) and close(last, expected)

    def own_rates(self) -> np.ndarray:
        """The first group's rate at every epoch as the student's code gives it: stepped, if
        the stepping is right, else lr_at called directly."""
        return self.recorded[0][:, 0] if self.steps_right() else self.lr_at()

    def lr_at(self) -> np.ndarray:
        """``lr_at(BASE_LR, epoch)`` for every epoch, called directly on the schedule's test
        subclass whose step() does nothing (so that the student's step() never runs)."""
        scheduler, _ = self.subclass("still").built
        lr_at = call(f"{self.label}.lr_at", getattr, scheduler, "lr_at")
        script = Script(scheduler)
        for epoch in range(self.steps + 1):
            script.call(f"{self.label}.lr_at({BASE_LR}, {epoch})", lr_at, BASE_LR, epoch)
        values = script.finish()
        try:
            return np.array([float(v) for v in values])
        except (TypeError, ValueError):
            fail(f"{self.label}.lr_at(base_lr, epoch) should return a number, got "
                 f"{values[0]!r:.60}.")


HALVING_STEPS = 8


def _own_part(schedule: Schedule, expected: tuple[np.ndarray, np.ndarray],
              signatures: tuple[Signature, ...], failure: CheckFailure) -> None:
    """A schedule whose rates are wrong: if the stepping it inherits is right, lr_at is what
    is wrong, and the failure says so; else lr_at, called directly for every epoch, decides
    (the stepping is lr_scheduler_step's to judge)."""
    if schedule.steps_right():
        if "recorded" in vars(schedule):
            schedule.expect(expected, signatures, blame="lr_at")
        raise failure
    try:
        got = schedule.lr_at()
    except CheckFailure:
        raise failure from None
    wanted = expected[0][:, 0]
    if close(got, wanted):
        return
    try:
        expect_rates(schedule.label, f"lr_at({BASE_LR}, epoch)", got[:, None], wanted[:, None],
                     signatures, "lr_at")
    except CheckFailure as wrong:
        raise CheckFailure(f"{failure}\n  Your base class's step() is wrong too: a test "
                           "schedule on your class steps wrong (lr_scheduler_step judges it; "
                           f"fix it first). Called directly, lr_at gives:\n  {wrong}") from None


def _handed(scheduler_cls: type, kwargs: dict) -> dict:
    """The arguments for the student's scheduler: a schedule function is made in the
    student's kernel when graded from outside (it cannot travel as data)."""
    if not isinstance(scheduler_cls, Remote):
        return kwargs
    session = scheduler_cls._session
    return {k: session.send("double", "lambda", v.text) if isinstance(v, Lambda) else v
            for k, v in kwargs.items()}


def _stale_last_lr() -> tuple[Signature, ...]:
    """Hints for get_last_lr() once the optimizer's rates are right."""
    return (when("stale", lambda g, e: close(g[1:], e[:-1]),
                 "get_last_lr() is one step behind the optimizer's rates: keep in "
                 "self._last_lr the rates step() has just computed, not the groups' rates from "
                 "before the update."),)


def _not_written(got_last: np.ndarray, last: np.ndarray) -> tuple[Signature, ...]:
    if not close(got_last, last):
        return ()
    return (
        when("not_written", lambda g, e: close(g, np.full_like(e, e[0])),
             "get_last_lr() is right, but the rates are not written into the optimizer: "
             "step() must set optimizer.param_groups[i]['lr'], which is what step() of the "
             "optimizer reads."),
        when("written_wrong", lambda g, e: True,
             "get_last_lr() is right, but optimizer.param_groups[i]['lr'] holds other values: "
             "write exactly the rates step() computes into the groups."),
    )


def expect_configs(name: str, scheduler_cls: type, SGD: type, Parameter: type | None,
                   configs: list[tuple[dict, Callable]], steps: int = STEPS) -> None:
    """Each configuration, with the signatures ``hints(kwargs)`` makes for it."""
    for kwargs, hints in configs:
        expect_schedule(name, scheduler_cls, SGD, Parameter, kwargs, steps,
                        signatures=hints(**kwargs))


def _epochs(steps: int = STEPS) -> np.ndarray:
    return np.arange(steps + 1, dtype=float)


def _cosine(start: float, end: float, progress: np.ndarray) -> np.ndarray:
    return end + (start - end) * (1 + np.cos(math.pi * progress)) / 2


# ----------------------------------------------------------------------------- StepLR
def step_lr_hints(step_size: int, gamma: float = 0.1) -> tuple[Signature, ...]:
    every_step = BASE_LR * gamma ** _epochs()
    return (when("every_step", lambda g, e: close(g, every_step[:len(g)]),
                 "the rate decays at every step. StepLR multiplies it by gamma once every "
                 "step_size steps: lr = initial_lr * gamma ** (epoch // step_size)."),)


@check
def step_lr_schedule(StepLR, SGD, Parameter=None):
    """StepLR: lr = initial_lr * gamma ** (epoch // step_size), for 25 steps (default gamma 0.1)."""
    configs = [dict(step_size=3, gamma=0.5), dict(step_size=7, gamma=0.1), dict(step_size=4)]
    expect_configs("StepLR", StepLR, SGD, Parameter, [(c, step_lr_hints) for c in configs])


# ----------------------------------------------------------------------------- the base class
def base_class_hints(lrs: tuple[float, ...]) -> tuple[Signature, ...]:
    def first_rate(g, e):
        return close(g, e / e[0] * lrs[0])

    def compounded(g, e):
        return close(g, e[0] * np.cumprod(e / e[0]))

    return (
        when("first_rate", first_rate,
             "this group gets the first group's rate: write each group its own rate "
             "(zip the optimizer's param_groups with the rates)."),
        when("compounded", compounded,
             "the rate compounds: each step computes it from the group's current rate. Compute "
             "it from the initial rate, with self.get_lr() (lr_at(base_lr, epoch))."),
    )


@check
def lr_scheduler_step(LRScheduler, SGD, Parameter=None):
    """LRScheduler.step() with a test subclass whose rate halves every epoch, on an optimizer
    with two parameter groups (initial rates 0.1 and 0.02), for 8 steps."""
    lrs = (0.1, 0.02)
    student = (LRScheduler._session.send("double", "halving", LRScheduler)
               if isinstance(LRScheduler, Remote) else halving(LRScheduler))
    expect_schedule("Halving", student, SGD, Parameter, {}, steps=8, lrs=lrs,
                    signatures=base_class_hints(lrs), reference=halving(ref.LRScheduler))


# ----------------------------------------------------------------------------- ExponentialLR
def no_hints(**kwargs) -> tuple[Signature, ...]:
    return ()


@check
def exponential_lr_schedule(ExponentialLR, SGD, Parameter=None):
    """ExponentialLR: lr = initial_lr * gamma ** epoch, for 25 steps."""
    configs = [dict(gamma=0.9), dict(gamma=0.5)]
    expect_configs("ExponentialLR", ExponentialLR, SGD, Parameter, [(c, no_hints) for c in configs])


# ----------------------------------------------------------------------------- cosine
def cosine_hints(T_max: int, eta_min: float = 0.0) -> tuple[Signature, ...]:
    t = _epochs()

    def period(T: float) -> Signature:
        wrong = _cosine(BASE_LR, eta_min, t / T)
        return when(f"period_{T:g}", lambda g, e: close(g, wrong[:len(g)]),
                    f"the cosine has the wrong period (your rates follow T_max = {T:g}): the "
                    "rate reaches eta_min after exactly T_max steps, lr = eta_min + "
                    "(initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.")

    clamped = _cosine(BASE_LR, eta_min, np.minimum(t, T_max) / T_max)
    no_floor = _cosine(BASE_LR, 0.0, t / T_max)
    return tuple(period(T) for T in (T_max / 2, 2 * T_max, T_max - 1, T_max + 1)) + (
        when("clamped", lambda g, e: close(g, clamped[:len(g)]),
             "after T_max steps your rate stays at eta_min. CosineAnnealingLR, like "
             "PyTorch's, keeps following the cosine, which rises again: do not clamp the "
             "epoch at T_max."),
        when("no_eta_min", lambda g, e: eta_min > 0 and close(g, no_floor[:len(g)]),
             "eta_min is ignored: the cosine goes from initial_lr down to eta_min, not to 0."),
    )


@check
def cosine_annealing_lr_schedule(CosineAnnealingLR, SGD, Parameter=None):
    """CosineAnnealingLR from initial_lr down to eta_min over T_max steps (up to T_max)."""
    for kwargs in (dict(T_max=25), dict(T_max=20, eta_min=0.01), dict(T_max=7, eta_min=0.001)):
        expect_schedule("CosineAnnealingLR", CosineAnnealingLR, SGD, Parameter, kwargs,
                        steps=kwargs["T_max"], signatures=cosine_hints(**kwargs))


@check
def cosine_annealing_lr_past_t_max(CosineAnnealingLR, SGD, Parameter=None):
    """Past T_max the cosine continues and rises again, as in PyTorch (25 steps, T_max=8).
    While the rates up to T_max are wrong (the other cosine cell's part), the student's own
    cosine must rise again after its minimum, as it fell."""
    kwargs = dict(T_max=8, eta_min=0.01)
    try:
        expect_schedule("CosineAnnealingLR", CosineAnnealingLR, SGD, Parameter, kwargs,
                        signatures=cosine_hints(**kwargs))
    except CheckFailure as failure:
        schedule = Schedule("CosineAnnealingLR", CosineAnnealingLR, SGD, Parameter, kwargs, STEPS)
        rates = _expected(ref.CosineAnnealingLR, kwargs, STEPS, (BASE_LR,))[0][:, 0]
        try:
            own = schedule.own_rates()
        except CheckFailure:
            raise failure from None
        up_to = kwargs["T_max"] + 1
        if close(own[:up_to], rates[:up_to]) or not _mirrored(own):
            raise


def _mirrored(rates: np.ndarray) -> bool:
    """Whether ``rates`` fall to a minimum and rise again as they fell (the cosine past its
    minimum, whatever its period or phase), for at least two epochs on each side."""
    low = int(np.argmin(rates))
    span = min(low, len(rates) - 1 - low)
    if span < 2 or not rates[low + 1] > rates[low] + 1e-12:
        return False
    return close(rates[low + 1:low + span + 1], rates[low - 1::-1][:span])


# ----------------------------------------------------------------------------- LambdaLR
def lambda_hints(lr_lambda: Callable) -> tuple[Signature, ...]:
    factors = np.array([lr_lambda(int(t)) for t in _epochs()])
    chained = BASE_LR * np.cumprod(factors)
    return (
        when("multiplicative", lambda g, e: close(g, chained[:len(g)]),
             "the factor multiplies the current rate (that is MultiplicativeLR). LambdaLR sets "
             "lr = initial_lr * lr_lambda(epoch), from the group's initial rate."),
        when("no_base", lambda g, e: close(g, factors[:len(g)]),
             "the rate is lr_lambda(epoch) itself; multiply it by the group's initial rate."),
    )


@check
def lambda_lr_schedule(LambdaLR, SGD, Parameter=None):
    """LambdaLR: lr = initial_lr * lr_lambda(epoch), for decaying and warm-up functions."""
    configs = [(dict(lr_lambda=Lambda(text)), lambda_hints) for text in SCHEDULES]
    expect_configs("LambdaLR", LambdaLR, SGD, Parameter, configs)


# ----------------------------------------------------------------------------- LinearLR
def linear_hints(start_factor: float = 1 / 3, end_factor: float = 1.0,
                 total_iters: int = 5) -> tuple[Signature, ...]:
    unclamped = BASE_LR * (start_factor + (end_factor - start_factor) * _epochs() / total_iters)
    return (when("unclamped", lambda g, e: close(g, unclamped[:len(g)]),
                 "the rate keeps changing after total_iters steps; from then on the factor "
                 "stays at end_factor: progress = min(epoch, total_iters) / total_iters."),)


@check
def linear_lr_schedule(LinearLR, SGD, Parameter=None):
    """LinearLR: the factor goes linearly from start_factor to end_factor, then stays."""
    configs = [dict(start_factor=0.25, total_iters=8),
               dict(start_factor=1.0, end_factor=0.1, total_iters=10), dict()]
    expect_configs("LinearLR", LinearLR, SGD, Parameter, [(c, linear_hints) for c in configs])


# ----------------------------------------------------------------------------- warmup + cosine
@check
def warmup_cosine_lr_schedule(WarmupCosineLR, SGD, Parameter=None):
    """WarmupCosineLR: linear warm-up for warmup_steps, then cosine to eta_min at total_steps."""
    configs = [dict(warmup_steps=5, total_steps=20),
               dict(warmup_steps=5, total_steps=20, warmup_start_factor=0.1, eta_min=0.01),
               dict(warmup_steps=0, total_steps=10)]
    expect_configs("WarmupCosineLR", WarmupCosineLR, SGD, Parameter,
                   [(c, no_hints) for c in configs])
