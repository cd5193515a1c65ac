"""Bug signatures: recognise *how* a wrong array is wrong, and say it in plain words.

A signature is a test on ``(got, expected)`` plus the sentence to show when it
matches, e.g. "got == expected / N: the gradient is averaged over the batch a
second time". Checks pass the signatures that make sense for the quantity they
compare; ``diagnose`` returns the message of the first one that matches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from course.testing._trusted import asarray

RTOL, ATOL = 1e-6, 1e-8


def close(got: np.ndarray, expected: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Elementwise ``|got - expected| <= atol + rtol * |expected|``, NaN never close.

    Written with ndarray operators and methods only, which a submission cannot rebind.
    """
    got, expected = asarray(got, dtype=float), asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return False
    return bool(((got - expected).__abs__() <= atol + rtol * expected.__abs__()).all())


def close_or_nan(got: np.ndarray, expected: np.ndarray) -> bool:
    """``close`` where ``expected`` is finite, and the same inf or NaN where it is not (a
    mistake that predicts NaN, a wrong gradient computed twice the same way)."""
    got, expected = asarray(got, dtype=float), asarray(expected, dtype=float)
    if got.shape != expected.shape or not ((got != got) == (expected != expected)).all():
        return False
    number = expected.__abs__() < float("inf")
    infinite = ~number & (expected == expected)
    return close(got[number], expected[number]) and bool((got[infinite] == expected[infinite]).all())


def finite(a: np.ndarray) -> bool:
    a = asarray(a, dtype=float)
    return bool((a.__abs__() < float("inf")).all())


@dataclass(frozen=True)
class Signature:
    """A recognisable way of being wrong: ``matches(got, expected)`` and its ``message``."""

    name: str
    matches: Callable[[np.ndarray, np.ndarray], bool]
    message: str


def _nonzero(expected: np.ndarray) -> bool:
    return bool((asarray(expected, dtype=float).__abs__() > ATOL).any())


def scaled(factor: float, message: str, name: str = "scaled") -> Signature:
    """``got == factor * expected`` (factor != 1)."""
    return Signature(name, lambda g, e: _nonzero(e) and close(g, factor * e), message)


def sign_flipped(message: str = "the sign is flipped: got is exactly -expected.") -> Signature:
    return scaled(-1.0, message, "sign")


def transposed(message: str) -> Signature:
    def matches(got, expected):
        return expected.ndim == 2 and got.shape == expected.shape[::-1] and close(got.T, expected) \
            and (expected.shape[0] != expected.shape[1] or not close(expected, expected.T))
    return Signature("transposed", matches, message)


def not_summed(message: str) -> Signature:
    """``got`` kept a leading batch axis that should have been summed away."""
    def matches(got, expected):
        return got.ndim == expected.ndim + 1 and got.shape[1:] == expected.shape \
            and close(got.sum(axis=0), expected)
    return Signature("not_summed", matches, message)


def not_finite(message: str) -> Signature:
    return Signature("not_finite", lambda g, e: finite(e) and not finite(g), message)


def all_zero(message: str) -> Signature:
    return Signature(
        "zero", lambda g, e: _nonzero(e) and not bool(asarray(g, dtype=float).any()), message
    )


def when(name: str, predicate: Callable[[np.ndarray, np.ndarray], bool], message: str) -> Signature:
    """A signature from any predicate on ``(got, expected)``."""
    return Signature(name, predicate, message)


GENERIC = (
    not_finite("got contains inf or NaN where the expected values are finite: a numerically "
               "unstable formula (an exp that overflows, a log of 0, a division by 0)."),
    sign_flipped(),
    all_zero("got is all zeros where the expected values are not."),
)


def diagnose(got: np.ndarray, expected: np.ndarray, signatures: tuple[Signature, ...] = ()) -> str | None:
    """The message of the first matching signature (specific ones first), or None."""
    for signature in tuple(signatures) + GENERIC:
        try:
            if signature.matches(got, expected):
                return signature.message
        except (ValueError, TypeError, IndexError):
            continue
    return None
