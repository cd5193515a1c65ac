"""Learning-rate schedules: closed-form values, step 0 at construction, per-group rates."""
from __future__ import annotations

import math

import numpy as np
import pytest

from minitorch_ref import nn, optim
from minitorch_ref.optim import lr_scheduler as sched


def optimizer(*lrs: float) -> optim.SGD:
    """SGD with one parameter group per learning rate."""
    groups = [{"params": [nn.Parameter(np.zeros(2))], "lr": lr} for lr in lrs]
    return optim.SGD(groups, lr=lrs[0])


def schedule(make, epochs: int, base_lr: float = 0.1) -> list[float]:
    """The optimizer's lr right after construction (epoch 0) and after each of ``epochs`` steps."""
    opt = optimizer(base_lr)
    scheduler = make(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(epochs):
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def cosine(base, eta_min, t, T):
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * t / T)) / 2


CLOSED_FORMS = [
    pytest.param(lambda o: sched.StepLR(o, step_size=3, gamma=0.5),
                 [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025], id="StepLR"),
    pytest.param(lambda o: sched.ExponentialLR(o, gamma=0.9),
                 [0.1, 0.09, 0.081, 0.0729, 0.06561], id="ExponentialLR"),
    pytest.param(lambda o: sched.CosineAnnealingLR(o, T_max=4),
                 [0.1, 0.05 + 0.05 * math.sqrt(0.5), 0.05, 0.05 - 0.05 * math.sqrt(0.5), 0.0],
                 id="CosineAnnealingLR"),
    pytest.param(lambda o: sched.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
                 [cosine(0.1, 0.01, t, 10) for t in range(11)], id="CosineAnnealingLR-eta-min"),
    pytest.param(lambda o: sched.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=3),
                 [0.025, 0.05, 0.075, 0.1, 0.1, 0.1], id="LinearLR-warmup"),
    pytest.param(lambda o: sched.LinearLR(o, start_factor=1.0, end_factor=0.5, total_iters=2),
                 [0.1, 0.075, 0.05, 0.05], id="LinearLR-decay"),
    pytest.param(lambda o: sched.LambdaLR(o, lambda e: 1 / (e + 1)),
                 [0.1, 0.05, 0.1 / 3, 0.025], id="LambdaLR"),
    pytest.param(lambda o: sched.WarmupCosineLR(o, warmup_steps=2, total_steps=6),
                 [0.0, 0.05, 0.1, 0.05 + 0.05 * math.sqrt(0.5), 0.05,
                  0.05 - 0.05 * math.sqrt(0.5), 0.0, 0.0], id="WarmupCosineLR"),
    pytest.param(lambda o: sched.WarmupCosineLR(o, warmup_steps=2, total_steps=4,
                                                 warmup_start_factor=0.2, eta_min=0.02),
                 [0.02, 0.06, 0.1, 0.06, 0.02, 0.02], id="WarmupCosineLR-start-factor-eta-min"),
]


@pytest.mark.parametrize("make, expected", CLOSED_FORMS)
def test_schedule_follows_its_closed_form(make, expected):
    assert schedule(make, len(expected) - 1) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_warmup_cosine_shape():
    warmup, total, eta_min = 5, 25, 1e-3
    lrs = schedule(lambda o: sched.WarmupCosineLR(o, warmup_steps=warmup, total_steps=total,
                                                   eta_min=eta_min), epochs=total + 10)
    rises = np.diff(lrs[:warmup + 1])
    np.testing.assert_allclose(rises, 0.1 / warmup, err_msg="linear warmup to the base lr")
    assert max(lrs) == pytest.approx(0.1) and int(np.argmax(lrs)) == warmup, \
        "peaks at the base lr at warmup_steps"
    assert np.all(np.diff(lrs[warmup:total + 1]) < 0), "then decays"
    np.testing.assert_allclose(lrs[total:], eta_min, err_msg="reaches eta_min and stays there")


@pytest.mark.parametrize(
    "make, lr_at_construction",
    [
        (lambda o: sched.StepLR(o, step_size=2), 0.1),
        (lambda o: sched.LinearLR(o, start_factor=0.25), 0.025),
        (lambda o: sched.WarmupCosineLR(o, warmup_steps=3, total_steps=10), 0.0),
        (lambda o: sched.LambdaLR(o, lambda e: 0.5 ** (e + 1)), 0.05),
    ],
    ids=["StepLR", "LinearLR", "WarmupCosineLR", "LambdaLR"],
)
def test_construction_sets_the_epoch_0_rate_immediately(make, lr_at_construction):
    opt = optimizer(0.1)
    scheduler = make(opt)
    assert scheduler.last_epoch == 0
    assert opt.param_groups[0]["lr"] == pytest.approx(lr_at_construction)
    assert scheduler.get_last_lr() == pytest.approx([lr_at_construction])


def test_lambda_lr_applies_one_lambda_per_group():
    opt = optimizer(0.1, 1.0)
    scheduler = sched.LambdaLR(opt, [lambda e: 0.5**e, lambda e: 1 / (e + 1)])
    scheduler.step()
    scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([0.025, 1 / 3])


ALL_SCHEDULERS = {
    "StepLR": lambda o: sched.StepLR(o, step_size=2, gamma=0.5),
    "ExponentialLR": lambda o: sched.ExponentialLR(o, gamma=0.8),
    "CosineAnnealingLR": lambda o: sched.CosineAnnealingLR(o, T_max=5),
    "LinearLR": lambda o: sched.LinearLR(o),
    "LambdaLR": lambda o: sched.LambdaLR(o, lambda e: 0.9**e),
    "WarmupCosineLR": lambda o: sched.WarmupCosineLR(o, warmup_steps=2, total_steps=5),
}


@pytest.mark.parametrize("name", ALL_SCHEDULERS)
def test_get_last_lr_lists_each_groups_rate(name):
    opt = optimizer(0.1, 1.0)
    scheduler = ALL_SCHEDULERS[name](opt)
    for _ in range(6):
        last = scheduler.get_last_lr()
        assert isinstance(last, list)
        assert last == [group["lr"] for group in opt.param_groups]
        # None of these schedules has an eta_min, so each group keeps its own scale.
        assert last[1] == pytest.approx(10 * last[0])
        scheduler.step()


def test_optimizer_steps_with_the_scheduled_rate():
    param = nn.Parameter(np.zeros(1))
    opt = optim.SGD([param], lr=1.0)
    scheduler = sched.StepLR(opt, step_size=1, gamma=0.5)
    positions = []
    for _ in range(3):
        opt.zero_grad()
        param.grad += 1.0
        opt.step()
        scheduler.step()
        positions.append(float(param.data[0]))
    assert positions == pytest.approx([-1.0, -1.5, -1.75])
