"""Optimizer update rules checked against trajectories computed by hand (no torch needed)."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn, optim


def scalar_param(value: float = 1.0) -> nn.Parameter:
    return nn.Parameter(np.array([value]))


def run(optimizer, param: nn.Parameter, grads) -> list[float]:
    """Feed ``grads`` one per step, as a training loop would; return the weight after each step."""
    trajectory = []
    for g in grads:
        optimizer.zero_grad()
        param.grad += g            # what backward does: accumulate into .grad
        optimizer.step()
        trajectory.append(float(param.data[0]))
    return trajectory


GRADS = (1.0, 2.0, -1.0)

# Every case starts from w = 1 and sees the gradients 1, 2, -1 (as many as values listed).
TRAJECTORIES = [
    # w <- w - 0.1 g: 1 - .1 = .9; .9 - .2 = .7; .7 + .1 = .8
    pytest.param(dict(cls=optim.SGD, lr=0.1), [0.9, 0.7, 0.8], id="sgd"),
    # b = g on step 1, then b = .9 b + g: b = 1, 2.9, 1.61; w -= .1 b
    pytest.param(dict(cls=optim.SGD, lr=0.1, momentum=0.9), [0.9, 0.61, 0.449],
                 id="sgd-momentum"),
    # b = 1 (no dampening on the first step), then b = .9 b + .5 g: 1.9, 1.21
    pytest.param(dict(cls=optim.SGD, lr=0.1, momentum=0.9, dampening=0.5), [0.9, 0.71, 0.589],
                 id="sgd-dampening"),
    # b = 1, 2.9, 1.61 as above; step uses g + .9 b = 1.9, 4.61, 0.449
    pytest.param(dict(cls=optim.SGD, lr=0.1, momentum=0.9, nesterov=True),
                 [0.81, 0.349, 0.3041], id="sgd-nesterov"),
    # g' = g + .1 w: 1.1 -> .89; 2.089 -> .6811; -0.93189 -> .774289
    pytest.param(dict(cls=optim.SGD, lr=0.1, weight_decay=0.1), [0.89, 0.6811, 0.774289],
                 id="sgd-weight-decay"),
    # Adam, lr .1, betas (.9, .999), eps 1e-8.
    # t=1: m = .1, v = .001, m^ = 1, v^ = 1 -> w = 1 - .1 / (1 + 1e-8) = .900000001
    # t=2: m = .09 + .2 = .29, v = .000999 + .004 = .004999,
    #      m^ = .29 / .19 = 1.526315789, v^ = .004999 / .001999 = 2.500750375,
    #      w = .900000001 - .1 * 1.526315789 / 1.581376098 = .803481799
    pytest.param(dict(cls=optim.Adam, lr=0.1), [0.900000001, 0.8034817990], id="adam"),
    # RMSprop, lr .01, alpha .99, eps 1e-8.
    # t=1: s = .01, w = 1 - .01 * 1 / (.1 + 1e-8) = .90000001
    # t=2: s = .0099 + .04 = .0499, w -= .01 * 2 / .223383079 -> .810467718
    pytest.param(dict(cls=optim.RMSprop, lr=0.01), [0.90000001, 0.8104677178], id="rmsprop"),
    # centered: gbar = .01 then .0099 + .02 = .0299; denominators sqrt(s - gbar^2):
    # t=1: sqrt(.01 - .0001) = .099498744 -> w = 1 - .01 / .099498744 = .899496229
    # t=2: sqrt(.0499 - .00089401) = .221373417 -> w -= .02 / .221373417 -> .809150964
    pytest.param(dict(cls=optim.RMSprop, lr=0.01, centered=True), [0.8994962286, 0.8091509643],
                 id="rmsprop-centered"),
    # momentum .9: b = 1 / .1 = 10 -> w = .9; b = 9 + 2 / .223383079 = 17.953229 -> w = .720467727
    pytest.param(dict(cls=optim.RMSprop, lr=0.01, momentum=0.9), [0.90000001, 0.7204677268],
                 id="rmsprop-momentum"),
]


@pytest.mark.parametrize("config, expected", TRAJECTORIES)
def test_update_rule_matches_hand_computed_trajectory(config, expected):
    config = dict(config)
    cls = config.pop("cls")
    param = scalar_param(1.0)
    trajectory = run(cls([param], **config), param, GRADS[:len(expected)])
    assert trajectory == pytest.approx(expected, rel=1e-9, abs=1e-10)


# ----------------------------------------------------------------------------- Adam / AdamW
def test_adam_first_step_moves_each_weight_by_lr_whatever_the_gradient_scale():
    # Bias correction makes the first step lr * g / |g|, for tiny and huge gradients alike.
    g = np.array([0.5, -3.0, 1e-3, 40.0, -1e-2])
    param = nn.Parameter(np.zeros(5))
    param.grad += g
    optim.Adam([param], lr=0.01).step()
    np.testing.assert_allclose(param.data, -0.01 * np.sign(g), atol=1e-7)


WEIGHTS = np.array([2.0, -0.5])


def zero_gradient_steps(optimizer, param, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        optimizer.step()
    return param.data


def test_adamw_decay_shrinks_every_weight_by_the_same_factor():
    # Zero gradient: the Adam part does nothing (m = v = 0), decay gives w (1 - lr wd)^t.
    param = nn.Parameter(WEIGHTS.copy())
    data = zero_gradient_steps(optim.AdamW([param], lr=0.1, weight_decay=0.1), param, steps=3)
    np.testing.assert_allclose(data, WEIGHTS * 0.99**3, rtol=1e-12)


def test_adam_l2_decay_goes_through_the_adaptive_step():
    # Adam folds wd * w = [.2, -.05] into the gradient, and its first step is then
    # lr * sign: every weight moves by lr = .1 towards 0, however large it is.
    param = nn.Parameter(WEIGHTS.copy())
    data = zero_gradient_steps(optim.Adam([param], lr=0.1, weight_decay=0.1), param, steps=1)
    np.testing.assert_allclose(data, [1.9, -0.4], atol=1e-6)


def test_adamw_decays_before_an_adam_step_on_the_raw_gradient():
    # w = 2 * (1 - .1 * .1) = 1.98, then the first Adam step on g = 1 moves it by .1.
    param = nn.Parameter(np.array([2.0]))
    assert run(optim.AdamW([param], lr=0.1, weight_decay=0.1), param, [1.0]) == \
        pytest.approx([1.88], abs=1e-7)


def test_adamw_default_weight_decay_is_pytorchs():
    param = scalar_param()
    assert optim.AdamW([param]).param_groups[0]["weight_decay"] == 0.01
    assert optim.Adam([param]).param_groups[0]["weight_decay"] == 0.0


# ----------------------------------------------------------------------------- bookkeeping
OPTIMIZER_CLASSES = {
    "SGD": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    "Adam": lambda ps: optim.Adam(ps, lr=0.1),
    "AdamW": lambda ps: optim.AdamW(ps, lr=0.1),
    "RMSprop": lambda ps: optim.RMSprop(ps, lr=0.1),
}


def model_with_gradients():
    model = nn.Linear(3, 2, rng=np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((5, 3))
    model(x)
    model.backward(np.ones((5, 2)))
    return model, x


@pytest.mark.parametrize("name", OPTIMIZER_CLASSES)
def test_step_updates_the_models_parameter_arrays_in_place(name):
    model, x = model_with_gradients()
    weight_array, bias_array = model.weight.data, model.bias.data
    before_w, before_out = weight_array.copy(), model(x)
    OPTIMIZER_CLASSES[name](model.parameters()).step()
    assert model.weight.data is weight_array and model.bias.data is bias_array
    assert not np.allclose(weight_array, before_w), "the weights moved"
    assert not np.allclose(model(x), before_out), "the model computes with the new weights"


@pytest.mark.parametrize("name", OPTIMIZER_CLASSES)
def test_zero_grad_resets_gradients_in_place(name):
    model, _ = model_with_gradients()
    grads = model.grads()
    optimizer = OPTIMIZER_CLASSES[name](model.parameters())
    optimizer.zero_grad()
    for param, grad in zip(model.parameters(), grads):
        assert param.grad is grad, "arrays handed out by grads() stay valid"
        assert not grad.any()


def test_param_groups_use_their_own_learning_rate():
    slow, fast = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(2))
    optimizer = optim.SGD([{"params": [slow]}, {"params": [fast], "lr": 0.5}], lr=0.1)
    for p in (slow, fast):
        p.grad += 1.0
    optimizer.step()
    np.testing.assert_allclose(slow.data, [-0.1, -0.1])
    np.testing.assert_allclose(fast.data, [-0.5, -0.5])
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]


def test_each_parameter_keeps_its_own_momentum():
    a, b = scalar_param(0.0), scalar_param(0.0)
    optimizer = optim.SGD([a, b], lr=0.1, momentum=0.9)
    for _ in range(2):
        optimizer.zero_grad()
        a.grad += 1.0
        b.grad -= 2.0
        optimizer.step()
    # a: buffers 1, 1.9 -> -.1, -.29;  b: buffers -2, -3.8 -> .2, .58
    assert float(a.data[0]) == pytest.approx(-0.29)
    assert float(b.data[0]) == pytest.approx(0.58)


def test_adam_state_counts_steps_per_parameter():
    a, b = scalar_param(), scalar_param()
    optimizer = optim.Adam([a, b], lr=0.1)
    for _ in range(3):
        a.grad += 1.0
        optimizer.step()
    assert optimizer.state[a]["step"] == 3
    assert optimizer.state[b]["step"] == 3
