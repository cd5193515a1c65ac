"""Compare a student's array with the expected one and explain any difference."""
from __future__ import annotations

import numpy as np

from course.testing._trusted import asarray, floating, issubdtype, ndarray
from course.testing.diagnose import ATOL, RTOL, Signature, close, diagnose, finite
from course.testing.failure import fail

SAMPLE = 3  # how many expected values a message may show


def _sample(a: np.ndarray) -> str:
    values = asarray(a, dtype=float).ravel()[:SAMPLE].tolist()
    return "[" + ", ".join(f"{v:.6g}" for v in values) + (", ...]" if a.size > SAMPLE else "]")


def as_array(what: str, value: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """The student's return value as a float array, or a failure that says why not."""
    if value is None:
        fail(f"{what} is None. Did you forget a `return` (or to store the result)?")
    if not isinstance(value, ndarray):
        try:
            value = asarray(value, dtype=float)
        except (TypeError, ValueError):
            fail(f"{what} should be a numpy array, got {type(value).__name__}.")
    if not (issubdtype(value.dtype, floating) or issubdtype(value.dtype, np.integer)
            or value.dtype == bool):
        fail(f"{what} should be a float array, got dtype {value.dtype}.")
    if shape is not None and value.shape != tuple(shape):
        fail(f"{what} has shape {value.shape}, expected {tuple(shape)}.")
    return value


def mismatch(what: str, got: np.ndarray, expected: np.ndarray, where: str = "",
             signatures: tuple[Signature, ...] = ()) -> str:
    """The message for a wrong array: what, the errors, a sample, the likely mistake."""
    lines = [f"{what} is wrong" + (f" ({where})" if where else "") + "."]
    if got.shape != expected.shape:
        lines.append(f"  shape: got {got.shape}, expected {expected.shape}")
    else:
        err = (asarray(got, dtype=float) - expected).__abs__()
        rel = err / (expected.__abs__() + ATOL)
        if finite(got):
            lines.append(f"  max abs error {err.max():.3g}, max rel error {rel.max():.3g}")
        lines.append(f"  expected {_sample(expected)}")
        lines.append(f"  got      {_sample(got)}")
    hint = diagnose(got, expected, signatures)
    if hint:
        lines.append(f"  Likely mistake: {hint}")
    return "\n".join(lines)


def expect_close(what: str, got: object, expected: np.ndarray, where: str = "",
                 signatures: tuple[Signature, ...] = (), rtol: float = RTOL,
                 atol: float = ATOL) -> np.ndarray:
    """Fail unless the student's ``got`` equals ``expected`` to ``rtol``/``atol``.

    A shape mismatch is still diagnosed (a transposed gradient, a batch axis
    not summed) before it is reported.
    """
    expected = asarray(expected, dtype=float)
    got = as_array(what, got)
    if got.shape == expected.shape and close(got, expected, rtol, atol):
        return got
    fail(mismatch(what, got, expected, where, signatures))
