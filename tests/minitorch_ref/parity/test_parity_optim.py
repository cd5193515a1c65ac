"""PyTorch parity of minitorch_ref.optim: optimizers and learning-rate schedulers.

Optimizers follow identical trajectories from identical starting points; parameters
are compared after every step. Gradients come either from a fixed noisy quadratic
(evaluated at each side's own current parameters, so errors would compound) or from
a real MLP trained on minibatches.
"""
import numpy as np
import pytest

from minitorch_ref import nn as mnn
from minitorch_ref import optim as moptim
from minitorch_ref.optim import lr_scheduler as msched

from .conftest import (
    assert_close, assert_same_buffers, assert_same_parameters, make_mlp, needs_torch, to_torch,
    torch, twin,
)

pytestmark = needs_torch

STEPS = 12


# ====================================================================== optimizer configurations
# Keyword names are the same in both libraries, so one dict builds both optimizers.
OPTIMIZER_CASES = [
    pytest.param("SGD", {"lr": 0.1}, id="SGD"),
    pytest.param("SGD", {"lr": 0.05, "momentum": 0.9}, id="SGD-momentum"),
    pytest.param("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1}, id="SGD-dampening"),
    pytest.param("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}, id="SGD-nesterov"),
    pytest.param("SGD", {"lr": 0.1, "weight_decay": 0.05}, id="SGD-wd"),
    pytest.param("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01},
                 id="SGD-nesterov-wd"),
    pytest.param("Adam", {}, id="Adam-default"),
    pytest.param("Adam", {"lr": 0.05, "weight_decay": 0.1}, id="Adam-wd"),
    pytest.param("Adam", {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6}, id="Adam-betas-eps"),
    pytest.param("AdamW", {}, id="AdamW-default"),
    pytest.param("AdamW", {"lr": 0.05, "weight_decay": 0.1}, id="AdamW-wd0.1"),
    pytest.param("AdamW", {"lr": 0.05, "weight_decay": 0.0}, id="AdamW-wd0"),
    pytest.param("RMSprop", {}, id="RMSprop-default"),
    pytest.param("RMSprop", {"momentum": 0.9}, id="RMSprop-momentum"),
    pytest.param("RMSprop", {"centered": True}, id="RMSprop-centered"),
    pytest.param("RMSprop", {"weight_decay": 0.1}, id="RMSprop-wd"),
    pytest.param("RMSprop", {"lr": 0.005, "alpha": 0.9, "centered": True, "momentum": 0.5,
                             "weight_decay": 0.01}, id="RMSprop-all"),
]

# Parameter groups as indices into the parameter list; the second layout gives the
# last parameters their own learning rate.
GROUP_LAYOUTS = {
    "one-group": [{"params": [0, 1, 2]}],
    "two-groups": [{"params": [0, 1]}, {"params": [2], "lr": 0.03}],
}


def build_optimizers(name, kwargs, ours, theirs, layout):
    """The same optimizer over ``ours`` (minitorch) and ``theirs`` (torch), same groups."""
    def groups(params):
        return [{**group, "params": [params[i] for i in group["params"]]} for group in layout]
    return (getattr(moptim, name)(groups(ours), **kwargs),
            getattr(torch.optim, name)(groups(theirs), **kwargs))


# ====================================================================== trajectory on a noisy quadratic
class NoisyQuadratic:
    """Gradient ``c * (w - w*) + noise_t`` for each parameter: fixed curvature, centre
    and per-step noise, evaluated at whatever the current parameters are."""

    shapes = [(3, 4), (4,), (2, 5)]

    def __init__(self, seed, steps=STEPS):
        rng = np.random.default_rng(seed)
        self.start = [rng.standard_normal(s) for s in self.shapes]
        self.curvature = [rng.uniform(0.1, 3.0, s) for s in self.shapes]
        self.centre = [rng.standard_normal(s) for s in self.shapes]
        self.noise = [[rng.normal(0, 0.5, s) for s in self.shapes] for _ in range(steps)]

    def gradient(self, step, index, w):
        return self.curvature[index] * (w - self.centre[index]) + self.noise[step][index]

    def parameters(self):
        ours = [mnn.Parameter(w.copy()) for w in self.start]
        theirs = [torch.nn.Parameter(to_torch(w)) for w in self.start]
        return ours, theirs


def run_quadratic(problem, ours, theirs, optimizer, torch_optimizer, after_step=None):
    """STEPS identical updates; parameters compared after each one."""
    for step in range(STEPS):
        optimizer.zero_grad()
        torch_optimizer.zero_grad()
        for i, (p, q) in enumerate(zip(ours, theirs)):
            p.grad += problem.gradient(step, i, p.data)
            q.grad = to_torch(problem.gradient(step, i, q.detach().numpy()))
        optimizer.step()
        torch_optimizer.step()
        for i, (p, q) in enumerate(zip(ours, theirs)):
            assert_close(p.data, q, f"parameter {i} after step {step + 1}")
        if after_step is not None:
            after_step(step)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("layout", GROUP_LAYOUTS)
@pytest.mark.parametrize("name, kwargs", OPTIMIZER_CASES)
def test_optimizer_trajectory(name, kwargs, layout, seed):
    problem = NoisyQuadratic(seed)
    ours, theirs = problem.parameters()
    optimizer, torch_optimizer = build_optimizers(name, kwargs, ours, theirs, GROUP_LAYOUTS[layout])
    run_quadratic(problem, ours, theirs, optimizer, torch_optimizer)


@pytest.mark.parametrize("name, kwargs", OPTIMIZER_CASES)
def test_param_groups_hold_torch_hyperparameters(name, kwargs):
    """Every hyperparameter torch puts in a group (defaults filled in) has the same value."""
    problem = NoisyQuadratic(0)
    optimizer, torch_optimizer = build_optimizers(
        name, kwargs, *problem.parameters(), GROUP_LAYOUTS["two-groups"])
    for ours, theirs in zip(optimizer.param_groups, torch_optimizer.param_groups):
        for key in ours.keys() & theirs.keys() - {"params"}:
            assert ours[key] == theirs[key], f"group[{key!r}]"


# ====================================================================== trajectory of an MLP
MLP_CASES = [
    pytest.param("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3},
                 id="SGD-nesterov"),
    pytest.param("Adam", {"lr": 0.01}, id="Adam"),
    pytest.param("AdamW", {"lr": 0.01, "weight_decay": 0.1}, id="AdamW"),
    pytest.param("RMSprop", {"lr": 0.005, "centered": True, "momentum": 0.5}, id="RMSprop"),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name, kwargs", MLP_CASES)
def test_optimizer_trains_mlp_like_torch(name, kwargs, seed):
    """Minibatch training with MSE: the first Linear in its own group at a smaller lr."""
    rng = np.random.default_rng(seed)
    model = make_mlp(seed)
    twin_model = twin(model)

    def groups(named):
        named = list(named)  # torch's named_parameters() is a one-shot generator
        first = [p for n, p in named if n.startswith("1.")]
        rest = [p for n, p in named if not n.startswith("1.")]
        return [{"params": first, "lr": 0.5 * kwargs.get("lr", 1e-3)}, {"params": rest}]

    optimizer = getattr(moptim, name)(groups(model.named_parameters()), **kwargs)
    torch_optimizer = getattr(torch.optim, name)(groups(twin_model.named_parameters()), **kwargs)
    loss, torch_loss = mnn.MSELoss(), torch.nn.MSELoss()
    for step in range(STEPS):
        x, y = rng.standard_normal((8, 2, 3)), rng.standard_normal((8, 3))
        optimizer.zero_grad()
        loss(model(x), y)
        model.backward(loss.backward())
        optimizer.step()
        torch_optimizer.zero_grad()
        torch_loss(twin_model(to_torch(x)), to_torch(y)).backward()
        torch_optimizer.step()
        assert_same_parameters(model, twin_model)
        assert_same_buffers(model, twin_model)


@pytest.mark.parametrize("name, kwargs", OPTIMIZER_CASES[:1] + OPTIMIZER_CASES[6:7])
def test_zero_grad_zeros_gradients_in_place(name, kwargs):
    problem = NoisyQuadratic(0)
    ours, theirs = problem.parameters()
    optimizer, torch_optimizer = build_optimizers(name, kwargs, ours, theirs, GROUP_LAYOUTS["two-groups"])
    held = [p.grad for p in ours]
    for i, (p, q) in enumerate(zip(ours, theirs)):
        p.grad += problem.gradient(0, i, p.data)
        q.grad = to_torch(p.grad)
    optimizer.zero_grad()
    torch_optimizer.zero_grad(set_to_none=False)
    for p, q, grad in zip(ours, theirs, held):
        assert p.grad is grad, "zero_grad replaced the gradient array instead of zeroing it"
        assert_close(p.grad, q.grad, "gradient after zero_grad")
        assert not p.grad.any()


# ====================================================================== schedulers
def same(name, **kwargs):
    """A scheduler that has the same name and arguments in both libraries."""
    return (lambda opt: getattr(msched, name)(opt, **kwargs),
            lambda opt: getattr(torch.optim.lr_scheduler, name)(opt, **kwargs))


def warmup_cosine(warmup, total, start_factor, eta_min):
    """Ours, and torch's SequentialLR(LinearLR warmup, CosineAnnealingLR) equivalent."""
    def ours(opt):
        return msched.WarmupCosineLR(opt, warmup_steps=warmup, total_steps=total,
                                     warmup_start_factor=start_factor, eta_min=eta_min)

    def theirs(opt):
        schedulers = torch.optim.lr_scheduler
        cosine = schedulers.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=eta_min)
        if warmup == 0:
            return cosine
        linear = schedulers.LinearLR(opt, start_factor=start_factor, end_factor=1.0, total_iters=warmup)
        return schedulers.SequentialLR(opt, [linear, cosine], milestones=[warmup])
    return ours, theirs


def decay(epoch):
    return 0.9**epoch


def bumpy(epoch):
    return 1.0 / (1 + epoch % 4)


EPOCHS = 35
SCHEDULER_CASES = [
    pytest.param(*same("StepLR", step_size=3, gamma=0.5), EPOCHS, id="StepLR-3-0.5"),
    pytest.param(*same("StepLR", step_size=1), EPOCHS, id="StepLR-1-default-gamma"),
    pytest.param(*same("ExponentialLR", gamma=0.9), EPOCHS, id="ExponentialLR"),
    pytest.param(*same("CosineAnnealingLR", T_max=10), EPOCHS, id="Cosine-T10"),
    pytest.param(*same("CosineAnnealingLR", T_max=7, eta_min=0.002), EPOCHS, id="Cosine-T7-etamin"),
    pytest.param(*same("LambdaLR", lr_lambda=decay), EPOCHS, id="LambdaLR"),
    pytest.param(*same("LambdaLR", lr_lambda=[decay, bumpy]), EPOCHS, id="LambdaLR-per-group"),
    pytest.param(*same("LinearLR"), EPOCHS, id="LinearLR-default"),
    pytest.param(*same("LinearLR", start_factor=0.25, total_iters=8), EPOCHS, id="LinearLR-warmup"),
    pytest.param(*same("LinearLR", start_factor=1.0, end_factor=0.1, total_iters=20), EPOCHS,
                 id="LinearLR-decay"),
    pytest.param(*warmup_cosine(5, 30, 0.1, 0.0), 30, id="WarmupCosine-5-30"),
    pytest.param(*warmup_cosine(8, 40, 0.25, 0.001), 40, id="WarmupCosine-8-40-etamin"),
    pytest.param(*warmup_cosine(0, 30, 0.1, 0.0), 30, id="WarmupCosine-no-warmup"),
]

LR_TOL = {"rtol": 1e-6, "atol": 1e-12}  # rates are small: an absolute 1e-8 would be loose


def lr_optimizers():
    """SGD with two groups (lr 0.1 and 0.03) over throwaway parameters, ours and torch's."""
    def build(sgd, params):
        return sgd([{"params": params[:1]}, {"params": params[1:], "lr": 0.03}], lr=0.1)
    return (build(moptim.SGD, [mnn.Parameter(np.zeros(2)) for _ in range(2)]),
            build(torch.optim.SGD, [torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
                                    for _ in range(2)]))


@pytest.mark.parametrize("make_ours, make_theirs, epochs", SCHEDULER_CASES)
def test_scheduler_lr_sequence(make_ours, make_theirs, epochs):
    """The rates right after construction and after each of ``epochs`` steps."""
    optimizer, torch_optimizer = lr_optimizers()
    scheduler, torch_scheduler = make_ours(optimizer), make_theirs(torch_optimizer)
    for epoch in range(epochs + 1):
        expected = torch_scheduler.get_last_lr()
        assert_close(scheduler.get_last_lr(), expected, f"get_last_lr() at epoch {epoch}", **LR_TOL)
        assert_close([g["lr"] for g in optimizer.param_groups], expected,
                     f"param_groups lr at epoch {epoch}", **LR_TOL)
        optimizer.step()
        torch_optimizer.step()
        scheduler.step()
        torch_scheduler.step()


COMBINED_CASES = [
    pytest.param("SGD", {"lr": 0.1, "momentum": 0.9}, *same("StepLR", step_size=4, gamma=0.3),
                 id="SGD-StepLR"),
    pytest.param("Adam", {"lr": 0.05}, *warmup_cosine(4, STEPS, 0.2, 0.001), id="Adam-WarmupCosine"),
    pytest.param("AdamW", {"lr": 0.05}, *same("CosineAnnealingLR", T_max=5), id="AdamW-Cosine"),
    pytest.param("RMSprop", {"centered": True}, *same("ExponentialLR", gamma=0.8),
                 id="RMSprop-ExponentialLR"),
    pytest.param("SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.5},
                 *same("LambdaLR", lr_lambda=[decay, bumpy]), id="SGD-LambdaLR"),
    pytest.param("Adam", {"lr": 0.05}, *same("LinearLR", start_factor=0.5, total_iters=6),
                 id="Adam-LinearLR"),
]


@pytest.mark.parametrize("name, kwargs, make_ours, make_theirs", COMBINED_CASES)
def test_scheduler_drives_optimizer(name, kwargs, make_ours, make_theirs):
    """Scheduler stepped after each optimizer step: parameters and rates stay equal."""
    problem = NoisyQuadratic(3)
    ours, theirs = problem.parameters()
    optimizer, torch_optimizer = build_optimizers(name, kwargs, ours, theirs, GROUP_LAYOUTS["two-groups"])
    scheduler, torch_scheduler = make_ours(optimizer), make_theirs(torch_optimizer)

    def step_schedulers(step):
        scheduler.step()
        torch_scheduler.step()
        assert_close(scheduler.get_last_lr(), torch_scheduler.get_last_lr(),
                     f"lr after step {step + 1}", **LR_TOL)

    run_quadratic(problem, ours, theirs, optimizer, torch_optimizer, after_step=step_schedulers)


def test_scheduler_records_initial_lr_like_torch():
    optimizer, torch_optimizer = lr_optimizers()
    scheduler = msched.StepLR(optimizer, step_size=2)
    torch_scheduler = torch.optim.lr_scheduler.StepLR(torch_optimizer, step_size=2)
    assert scheduler.base_lrs == pytest.approx(torch_scheduler.base_lrs)
    assert [g["initial_lr"] for g in optimizer.param_groups] == pytest.approx(
        [g["initial_lr"] for g in torch_optimizer.param_groups])
    assert scheduler.last_epoch == torch_scheduler.last_epoch == 0
