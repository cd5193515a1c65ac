"""The optimizer and scheduler checks: the family has its checks and mutants
(test_mutation_audit runs them on the reference and every mutant), and they turn whatever a
standalone student implementation does into a readable CheckFailure."""
from __future__ import annotations

import math

import numpy as np
import pytest

from autograder import check
from autograder.mutants import lr_scheduler as scheduler_mutants
from autograder.mutants import optim as optim_mutants
from students import failure, family, grade, notebook_class, solution_source, student_with

FAMILY_CHECKS = family("optim", "adam", "lr_scheduler")
MUTANTS = optim_mutants.MUTANTS + scheduler_mutants.MUTANTS


# ------------------------------------------------------------------------ a student's own classes
class Param:
    """A student's Parameter: data and an accumulated gradient."""

    def __init__(self, data):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)


class StudentOptimizer:
    """What a student writes: groups as dicts, per-parameter state keyed by id under names of
    their own (the notebook gives PyTorch's as an example), weights updated in place."""

    def __init__(self, params, lr, **defaults):
        params = list(params)
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = {"lr": lr, **defaults}
        self.param_groups = [{**self.defaults, **g, "params": list(g["params"])} for g in groups]
        self.state = {}

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad[...] = 0

    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.update(p, group, self.state.setdefault(id(p), {}))


class StudentSGD(StudentOptimizer):
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)

    def update(self, p, g, state):
        d = p.grad + g["weight_decay"] * p.data
        if g["momentum"]:
            if "buf" in state:
                state["buf"] = g["momentum"] * state["buf"] + (1 - g["dampening"]) * d
            else:
                state["buf"] = d.copy()
            d = d + g["momentum"] * state["buf"] if g["nesterov"] else state["buf"]
        p.data -= g["lr"] * d


class StudentAdam(StudentOptimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def update(self, p, g, state):
        if self.decoupled:
            p.data *= 1 - g["lr"] * g["weight_decay"]
            d = p.grad
        else:
            d = p.grad + g["weight_decay"] * p.data
        b1, b2 = g["betas"]
        t = state["t"] = state.get("t", 0) + 1
        m = state["m"] = b1 * state.get("m", 0) + (1 - b1) * d
        v = state["v"] = b2 * state.get("v", 0) + (1 - b2) * d**2
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        p.data -= g["lr"] * m_hat / (np.sqrt(v_hat) + g["eps"])


class StudentAdamW(StudentAdam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


class StudentRMSprop(StudentOptimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False):
        super().__init__(params, lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                         momentum=momentum, centered=centered)

    def update(self, p, g, state):
        d, a = p.grad + g["weight_decay"] * p.data, g["alpha"]
        s = state["s"] = a * state.get("s", 0) + (1 - a) * d**2
        if g["centered"]:
            state["avg"] = a * state.get("avg", 0) + (1 - a) * d
            s = s - state["avg"] ** 2
        d = d / (np.sqrt(s) + g["eps"])
        if g["momentum"]:
            d = state["buf"] = g["momentum"] * state.get("buf", 0) + d
        p.data -= g["lr"] * d


class StudentScheduler:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]
        self.last_epoch = -1
        self.step()

    def step(self):
        self.last_epoch += 1
        self.last = [self.rate(base, self.last_epoch) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, self.last):
            group["lr"] = lr

    def get_last_lr(self):
        return list(self.last)


class StudentStepLR(StudentScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def rate(self, base, epoch):
        return base * self.gamma ** (epoch // self.step_size)


class StudentCosine(StudentScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer)

    def rate(self, base, epoch):
        cosine = math.cos(math.pi * epoch / self.T_max)
        return self.eta_min + (base - self.eta_min) * (1 + cosine) / 2


# ------------------------------------------------------------------------ checks and mutants
def test_the_family_has_its_checks_and_mutants():
    assert len(FAMILY_CHECKS) >= 19 and len(MUTANTS) >= 20


# ------------------------------------------------------------------------ student implementations
STUDENT_CHECKS = [
    ("sgd_step", StudentSGD), ("sgd_momentum", StudentSGD), ("sgd_weight_decay", StudentSGD),
    ("optimizer_zero_grad", StudentSGD), ("optimizer_lr_from_param_groups", StudentSGD),
    ("optimizer_param_groups", StudentSGD), ("adam_step", StudentAdam),
    ("adam_weight_decay", StudentAdam), ("adamw_step", StudentAdamW),
    ("rmsprop_step", StudentRMSprop), ("rmsprop_centered_momentum", StudentRMSprop),
]


@pytest.mark.parametrize("name, cls", STUDENT_CHECKS, ids=[n for n, _ in STUDENT_CHECKS])
@pytest.mark.parametrize("with_parameter", [False, True], ids=["ref-params", "own-params"])
def test_a_correct_student_optimizer_passes(name, cls, with_parameter):
    getattr(check, name)(cls, *([Param] if with_parameter else []))


def test_correct_student_schedulers_pass():
    check.step_lr_schedule(StudentStepLR, StudentSGD)
    check.cosine_annealing_lr_schedule(StudentCosine, StudentSGD)
    check.cosine_annealing_lr_past_t_max(StudentCosine, StudentSGD)


# The base class as unit 9's own solution writes it (subclasses give lr_at(base_lr, epoch)).
SCHEDULER_BASE = solution_source("09_training", "scheduler-base")


def test_a_correct_student_scheduler_base_class_passes():
    assert grade("lr_scheduler_step", notebook_class(SCHEDULER_BASE, "LRScheduler"),
                 StudentSGD, Param) is None


@pytest.mark.parametrize("step, expected", [
    ("def step(self):\n    self.last_epoch += 1\n    self._last_lr = self.get_lr()\n"
     "    self.optimizer.param_groups[0]['lr'] = self._last_lr[0]",
     "param_groups[1]['lr'] is wrong after 1 call"),
    ("def step(self):\n    self._last_lr = self.get_lr()\n    self.last_epoch += 1\n"
     "    for group, lr in zip(self.optimizer.param_groups, self._last_lr):\n"
     "        group['lr'] = lr", "one step late"),
    ("def step(self):\n    raise NotImplementedError()", "not implemented yet"),
])
def test_a_broken_step_of_the_base_class_is_named(step, expected):
    message = failure("lr_scheduler_step", student_with("LRScheduler", step, SCHEDULER_BASE),
                      StudentSGD, Param)
    assert expected in message and "Halving(optimizer)" in message


class RaisesInStep(StudentSGD):
    def update(self, p, g, state):
        return state["missing"]


class WrongShape(StudentSGD):
    def update(self, p, g, state):
        p.data = (p.data - g["lr"] * p.grad).sum()


class DataBecomesNone(StudentSGD):
    def update(self, p, g, state):
        p.data = None


class NoMomentumArgument(StudentOptimizer):
    def __init__(self, params, lr):
        super().__init__(params, lr)


class OnlyItsOwnParameters(StudentSGD):
    def __init__(self, params, lr, **kwargs):
        params = list(params)
        if not all(isinstance(p, Param) for p in params):
            raise TypeError("SGD only optimises Param objects")
        super().__init__(params, lr, **kwargs)


class NoParamGroups(StudentSGD):
    def __init__(self, params, lr, **kwargs):
        super().__init__(params, lr, **kwargs)
        self.groups = self.param_groups
        del self.param_groups

    def step(self):
        for group in self.groups:
            for p in group["params"]:
                self.update(p, group, self.state.setdefault(id(p), {}))


class SetToNone(StudentSGD):
    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None


@pytest.mark.parametrize("name, cls, expected", [
    ("sgd_step", RaisesInStep, "raised KeyError: 'missing'\n  at line"),
    ("sgd_step", WrongShape, "shape: got (), expected (3,)"),
    ("sgd_step", DataBecomesNone, "is None"),
    ("sgd_momentum", NoMomentumArgument, "raised TypeError"),
    ("sgd_step", OnlyItsOwnParameters, "SGD only optimises Param objects"),
    ("optimizer_lr_from_param_groups", NoParamGroups, "needs a `param_groups` attribute"),
    ("optimizer_zero_grad", SetToNone, "grad is None"),
], ids=["raises", "wrong-shape", "none", "missing-kwarg", "own-param-type", "no-groups",
        "set-to-none"])
def test_broken_student_optimizers_get_clean_messages(name, cls, expected):
    assert expected in failure(name, cls)


def test_an_optimizer_insisting_on_its_own_parameter_passes_when_given_it():
    check.sgd_momentum(OnlyItsOwnParameters, Param)


def test_an_endless_step_is_stopped(timed_out):
    class Endless(StudentSGD):
        def update(self, p, g, state):
            while True:
                pass
    assert timed_out in failure("sgd_step", Endless)


class FloatLastLr(StudentStepLR):
    def get_last_lr(self):
        return self.last[0]


class NoStepZero(StudentStepLR):
    def __init__(self, optimizer, step_size, gamma=0.1):
        super().__init__(optimizer, step_size, gamma)
        self.last_epoch = -1


class SchedulerRaises(StudentStepLR):
    def step(self):
        raise RuntimeError("not yet")


@pytest.mark.parametrize("cls, expected", [
    (FloatLastLr, "returns a list with one learning rate per parameter group"),
    (NoStepZero, "one step late"),
    (SchedulerRaises, "raised RuntimeError: not yet"),
])
def test_broken_student_schedulers_get_clean_messages(cls, expected):
    assert expected in failure("step_lr_schedule", cls, StudentSGD)


def test_a_scheduler_message_names_the_step_and_shows_both_sequences():
    message = failure("step_lr_schedule", NoStepZero, StudentSGD)
    assert "after 3 calls of scheduler.step(): got 0.1, expected 0.05" in message
    assert "expected (from step 1) [0.1, 0.1, 0.05" in message


# ------------------------------------------------------------------------ integrity
def test_an_optimizer_wrapping_the_reference_scores_zero():
    from minitorch_ref import optim as ref_optim

    class Wrapper:
        def __init__(self, params, lr, **kwargs):
            self.inner = ref_optim.SGD(params, lr, **kwargs)
            self.param_groups = self.inner.param_groups

        def step(self):
            self.inner.step()

    assert "scores zero" in failure("sgd_step", Wrapper)
