"""Weight initialisers, named as in ``torch.nn.init``; each fills its argument in place.

Our weights are stored ``(in_features, out_features)`` (rows are inputs), so for a
2-D array ``fan_in = shape[0]`` and ``fan_out = shape[1]``: the transpose of
PyTorch's layout, with the same variances.
"""
from __future__ import annotations

import math
from typing import Union

import numpy as np

from minitorch_ref._random import resolve_rng
from minitorch_ref.nn.parameter import Parameter

Tensor = Union[np.ndarray, Parameter]


def _array(tensor: Tensor) -> np.ndarray:
    return tensor.data if isinstance(tensor, Parameter) else tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activation variance constant through a nonlinearity.

    linear/sigmoid/conv*: 1, tanh: 5/3, relu: sqrt(2),
    leaky_relu: sqrt(2 / (1 + slope**2)) (slope ``param``, default 0.01), selu: 3/4.
    """
    linear_like = ("linear", "sigmoid", "conv1d", "conv2d", "conv3d",
                   "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_like:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    shape = _array(tensor).shape
    if len(shape) < 2:
        raise ValueError(
            f"Fan in and fan out need an array with at least 2 dimensions, got shape {shape}"
        )
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[0] * receptive, shape[1] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, rng=None) -> Tensor:
    arr = _array(tensor)
    arr[...] = resolve_rng(rng).uniform(a, b, size=arr.shape)
    return tensor


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, rng=None) -> Tensor:
    arr = _array(tensor)
    arr[...] = resolve_rng(rng).normal(mean, std, size=arr.shape)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    _array(tensor).fill(val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, rng=None) -> Tensor:
    """Glorot: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, rng=rng)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, rng=None) -> Tensor:
    """Glorot: ``N(0, std^2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), rng=rng)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", rng=None
) -> Tensor:
    """He: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``."""
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, rng=rng)


def kaiming_normal_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", rng=None
) -> Tensor:
    """He: ``N(0, std^2)`` with ``std = gain / sqrt(fan)``."""
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)), rng=rng)
