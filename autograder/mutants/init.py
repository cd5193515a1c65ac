"""Initialisers with one classic bug each (built on the reference's ``normal_``)."""
from __future__ import annotations

import math

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref.nn import init


def _fans(tensor) -> tuple[int, int]:
    return init._calculate_fan_in_and_fan_out(tensor)


def xavier_fan_in_only(tensor, gain=1.0, rng=None):
    return init.normal_(tensor, 0.0, gain / math.sqrt(_fans(tensor)[0]), rng=rng)


def xavier_gain_ignored(tensor, gain=1.0, rng=None):
    return init.xavier_normal_(tensor, 1.0, rng=rng)


def xavier_uniform(tensor, gain=1.0, rng=None):
    return init.xavier_uniform_(tensor, gain, rng=rng)


def xavier_variance_as_std(tensor, gain=1.0, rng=None):
    return init.normal_(tensor, 0.0, gain**2 * 2 / sum(_fans(tensor)), rng=rng)


def xavier_returns_none(tensor, gain=1.0, rng=None):
    init.xavier_normal_(tensor, gain, rng=rng)


def xavier_new_array(tensor, gain=1.0, rng=None):
    std = gain * math.sqrt(2 / sum(_fans(tensor)))
    values = np.random.default_rng() if rng is None else rng
    if isinstance(tensor, np.ndarray):
        tensor[...] = values.normal(0.0, std, tensor.shape)
    else:
        tensor.data = values.normal(0.0, std, tensor.shape)
    return tensor


def xavier_ignores_rng(tensor, gain=1.0, rng=None):
    return init.xavier_normal_(tensor, gain)


def kaiming_mode_ignored(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    return init.kaiming_normal_(tensor, a, "fan_in", nonlinearity, rng=rng)


def kaiming_fans_swapped(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    other = "fan_out" if mode == "fan_in" else "fan_in"
    return init.kaiming_normal_(tensor, a, other, nonlinearity, rng=rng)


def kaiming_slope_ignored(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    return init.kaiming_normal_(tensor, 0.0, mode, nonlinearity, rng=rng)


def kaiming_always_relu(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    return init.kaiming_normal_(tensor, 0.0, mode, "relu", rng=rng)


def kaiming_multiplies_fan(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    gain = init.calculate_gain(nonlinearity, a)
    return init.normal_(tensor, 0.0, gain * math.sqrt(init._fan(tensor, mode)), rng=rng)


MUTANTS = [
    Mutant("xavier_fan_in_only", "xavier_normal_", xavier_fan_in_only, "fan_in alone",
           "std = gain / sqrt(fan_in)"),
    Mutant("xavier_gain_ignored", "xavier_normal_", xavier_gain_ignored, "gain argument is ignored",
           "gain not applied"),
    Mutant("xavier_uniform", "xavier_normal_", xavier_uniform, "not a uniform",
           "Glorot uniform, same variance"),
    Mutant("xavier_variance_as_std", "xavier_normal_", xavier_variance_as_std,
           "the variance was passed", "rng.normal(0, std**2)"),
    Mutant("xavier_returns_none", "xavier_normal_", xavier_returns_none, "return the tensor",
           "no return"),
    Mutant("xavier_new_array", "xavier_normal_", xavier_new_array, "in place",
           "tensor.data = new array"),
    Mutant("xavier_ignores_rng", "xavier_normal_", xavier_ignores_rng, "ignores the rng",
           "draws from the default generator whatever rng is passed"),
    Mutant("kaiming_mode_ignored", "kaiming_normal_", kaiming_mode_ignored, "mode is ignored",
           "always fan_in"),
    Mutant("kaiming_fans_swapped", "kaiming_normal_", kaiming_fans_swapped, "swapped",
           "fan_in = shape[1] (PyTorch's layout)"),
    Mutant("kaiming_slope_ignored", "kaiming_normal_", kaiming_slope_ignored, "negative slope a",
           "calculate_gain(nonlinearity) without a"),
    Mutant("kaiming_always_relu", "kaiming_normal_", kaiming_always_relu, "nonlinearity is ignored",
           "gain sqrt(2) for every nonlinearity"),
    Mutant("kaiming_multiplies_fan", "kaiming_normal_", kaiming_multiplies_fan, "divide",
           "std = gain * sqrt(fan)"),
]
