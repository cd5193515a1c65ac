"""Argument checks shared by the dataset generators, with messages that say what to pass."""
from __future__ import annotations

import numbers


def check_count(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int, or ValueError unless it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_noise(value: object) -> float:
    """``value`` as a float, or ValueError unless it is a finite number ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < float("inf"):
        raise ValueError(f"noise must be a finite number >= 0, got {value!r}")
    return float(value)


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float, or ValueError unless it lies strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a fraction strictly between 0 and 1, got {value!r}")
    return float(value)
