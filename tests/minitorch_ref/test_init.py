"""Weight initialisation: gains, bounds and spreads for our (in_features, out_features) layout."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch_ref as mt
from minitorch_ref import nn
from minitorch_ref.nn import init

FAN_IN, FAN_OUT = 400, 1600  # deliberately unequal so fan_in and fan_out give different scales
SHAPE = (FAN_IN, FAN_OUT)    # our layout: rows are inputs


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(
    "nonlinearity, param, gain",
    [
        ("linear", None, 1.0),
        ("conv_transpose2d", None, 1.0),
        ("sigmoid", None, 1.0),
        ("tanh", None, 5 / 3),
        ("relu", None, math.sqrt(2)),
        ("leaky_relu", None, math.sqrt(2 / (1 + 0.01**2))),
        ("leaky_relu", 0.2, math.sqrt(2 / 1.04)),
        ("leaky_relu", 0, math.sqrt(2)),
        ("selu", None, 0.75),
    ],
)
def test_calculate_gain(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-12)


def test_calculate_gain_rejects_unknown_nonlinearity():
    with pytest.raises(ValueError, match="swish"):
        init.calculate_gain("swish")


# ----------------------------------------------------------------------------- uniform
UNIFORM = [
    # (initialiser, bound on |w|)
    pytest.param(lambda w: init.kaiming_uniform_(w, rng=rng()),
                 math.sqrt(2) * math.sqrt(3 / FAN_IN), id="kaiming-default-fan_in"),
    pytest.param(lambda w: init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu", rng=rng()),
                 math.sqrt(2) * math.sqrt(3 / FAN_OUT), id="kaiming-relu-fan_out"),
    pytest.param(lambda w: init.kaiming_uniform_(w, a=math.sqrt(5), rng=rng()),
                 1 / math.sqrt(FAN_IN), id="kaiming-a-sqrt5-is-pytorch-linear-default"),
    pytest.param(lambda w: init.xavier_uniform_(w, rng=rng()),
                 math.sqrt(6 / (FAN_IN + FAN_OUT)), id="xavier"),
    pytest.param(lambda w: init.xavier_uniform_(w, gain=init.calculate_gain("tanh"), rng=rng()),
                 5 / 3 * math.sqrt(6 / (FAN_IN + FAN_OUT)), id="xavier-tanh-gain"),
    pytest.param(lambda w: init.uniform_(w, -0.3, 0.3, rng=rng()), 0.3, id="uniform"),
]


@pytest.mark.parametrize("fill, bound", UNIFORM)
def test_uniform_initialisers_fill_the_whole_bound(fill, bound):
    w = fill(np.zeros(SHAPE))
    assert np.abs(w).max() <= bound
    # 640k draws: the extremes come within a hair of the bound, the mean is ~0 and the
    # standard deviation is that of U(-bound, bound), bound / sqrt(3).
    assert np.abs(w).max() > 0.999 * bound
    assert abs(w.mean()) < 0.01 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.01)


# ----------------------------------------------------------------------------- normal
NORMAL = [
    pytest.param(lambda w: init.kaiming_normal_(w, nonlinearity="relu", rng=rng()),
                 math.sqrt(2 / FAN_IN), id="kaiming-relu-fan_in"),
    pytest.param(lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu", rng=rng()),
                 math.sqrt(2 / FAN_OUT), id="kaiming-relu-fan_out"),
    pytest.param(lambda w: init.kaiming_normal_(w, nonlinearity="linear", rng=rng()),
                 math.sqrt(1 / FAN_IN), id="kaiming-linear"),
    pytest.param(lambda w: init.xavier_normal_(w, rng=rng()),
                 math.sqrt(2 / (FAN_IN + FAN_OUT)), id="xavier"),
    pytest.param(lambda w: init.normal_(w, 0.0, 0.02, rng=rng()), 0.02, id="normal"),
]


@pytest.mark.parametrize("fill, std", NORMAL)
def test_normal_initialisers_have_the_right_spread(fill, std):
    w = fill(np.zeros(SHAPE))
    assert abs(w.mean()) < 0.01 * std
    assert w.std() == pytest.approx(std, rel=0.01)


def test_fan_in_is_the_number_of_rows():
    # A (in=1000, out=10) weight must be scaled by 1/sqrt(1000), not 1/sqrt(10).
    w = init.kaiming_normal_(np.zeros((1000, 10)), nonlinearity="linear", rng=rng())
    assert w.std() == pytest.approx(1 / math.sqrt(1000), rel=0.05)


def test_normal_mean_is_respected():
    w = init.normal_(np.zeros((200, 200)), mean=3.0, std=0.1, rng=rng())
    assert w.mean() == pytest.approx(3.0, abs=0.01)


# ----------------------------------------------------------------------------- API
@pytest.mark.parametrize("fill, value", [(init.zeros_, 0.0), (init.ones_, 1.0),
                                         (lambda w: init.constant_(w, 0.7), 0.7)],
                         ids=["zeros_", "ones_", "constant_"])
def test_constant_fills(fill, value):
    w = np.random.default_rng(0).standard_normal((3, 4))
    fill(w)
    np.testing.assert_array_equal(w, np.full((3, 4), value))


INITIALISERS = {
    "uniform_": lambda t, **kw: init.uniform_(t, -1, 1, **kw),
    "normal_": lambda t, **kw: init.normal_(t, **kw),
    "xavier_uniform_": init.xavier_uniform_,
    "xavier_normal_": init.xavier_normal_,
    "kaiming_uniform_": init.kaiming_uniform_,
    "kaiming_normal_": init.kaiming_normal_,
    "zeros_": lambda t, **kw: init.zeros_(t),
    "ones_": lambda t, **kw: init.ones_(t),
}


def tensor(kind: str):
    data = np.full((6, 5), 9.0)
    return nn.Parameter(data) if kind == "Parameter" else data


@pytest.mark.parametrize("kind", ["Parameter", "ndarray"])
@pytest.mark.parametrize("name", INITIALISERS)
def test_initialisers_fill_in_place_and_return_their_argument(name, kind):
    t = tensor(kind)
    array = t.data if kind == "Parameter" else t
    returned = INITIALISERS[name](t, **({} if name in ("zeros_", "ones_") else {"rng": rng()}))
    assert returned is t
    current = t.data if kind == "Parameter" else t
    assert current is array, "the same array is filled, so optimizers keep their reference"
    assert not np.any(array == 9.0), "every entry was overwritten"


RANDOM_INITIALISERS = [n for n in INITIALISERS if n not in ("zeros_", "ones_")]


@pytest.mark.parametrize("name", RANDOM_INITIALISERS)
def test_random_initialisers_are_reproducible_with_rng(name):
    fill = INITIALISERS[name]
    a, b, c = (fill(np.zeros((6, 5)), rng=rng(seed)) for seed in (1, 1, 2))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", RANDOM_INITIALISERS)
def test_random_initialisers_are_reproducible_under_manual_seed(name):
    fill = INITIALISERS[name]

    def draw(seed):
        mt.manual_seed(seed)
        return fill(np.zeros((6, 5)))

    np.testing.assert_array_equal(draw(1), draw(1))
    assert not np.array_equal(draw(1), draw(2))


@pytest.mark.parametrize("fill", [init.kaiming_uniform_, init.kaiming_normal_,
                                  init.xavier_uniform_, init.xavier_normal_],
                         ids=lambda f: f.__name__)
def test_fan_based_initialisers_reject_1d_arrays(fill):
    with pytest.raises(ValueError, match=r"at least 2 dimensions.*\(7,\)"):
        fill(np.zeros(7))


def test_kaiming_rejects_unknown_mode():
    with pytest.raises(ValueError, match="fan_avg"):
        init.kaiming_uniform_(np.zeros((3, 3)), mode="fan_avg")


# ----------------------------------------------------------------------------- Linear
def test_linear_default_init_is_uniform_within_one_over_sqrt_in_features():
    layer = nn.Linear(256, 400, rng=rng())
    bound = 1 / math.sqrt(256)
    for param in (layer.weight.data, layer.bias.data):
        assert np.abs(param).max() <= bound
        assert np.abs(param).max() > 0.95 * bound, "spread over the whole interval"
    assert layer.weight.data.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)


def linear_state(layer: nn.Linear) -> list[np.ndarray]:
    return [layer.weight.data, layer.bias.data]


def test_linear_init_is_reproducible_under_manual_seed():
    def build(seed):
        mt.manual_seed(seed)
        return linear_state(nn.Linear(4, 3))

    for x, y in zip(build(5), build(5)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(build(5)[0], build(6)[0])


def test_linear_init_is_reproducible_with_rng():
    a = linear_state(nn.Linear(4, 3, rng=rng(5)))
    b = linear_state(nn.Linear(4, 3, rng=rng(5)))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
