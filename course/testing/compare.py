"""Compare a student's array with the expected one and explain any difference."""
from __future__ import annotations

import numpy as np

from course.testing._trusted import asarray, floating, issubdtype, ndarray
from course.testing.diagnose import ATOL, RTOL, Signature, close, diagnose, finite
from course.testing.failure import fail

SAMPLE = 3  # how many expected values a message may show


def _sample(a: np.ndarray, start: int = 0) -> str:
    """``SAMPLE`` values of ``a`` (flattened) from ``start``, with "..." where there are more."""
    values = asarray(a, dtype=float).ravel()[start:start + SAMPLE].tolist()
    return ("[" + ("..., " if start else "") + ", ".join(f"{v:.6g}" for v in values)
            + (", ...]" if a.size > start + SAMPLE else "]"))


def _first_difference(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> int:
    """The flat index of the first entry that is not close (NaN never is)."""
    far = ~((asarray(got, dtype=float) - expected).__abs__() <= atol + rtol * expected.__abs__())
    return int(far.ravel().argmax())


def _errors(got: np.ndarray, expected: np.ndarray) -> str:
    """The largest absolute error, and the largest relative one over the entries whose
    expected value is not zero (dividing by a zero says nothing)."""
    err = (asarray(got, dtype=float) - expected).__abs__()
    line = f"  max abs error {err.max():.3g}"
    nonzero = expected.__abs__() > ATOL
    if nonzero.any():
        rel = err[nonzero] / expected.__abs__()[nonzero]
        line += f", max rel error {rel.max():.3g} (over the non-zero entries)"
    return line


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
             signatures: tuple[Signature, ...] = (), rtol: float = RTOL,
             atol: float = ATOL) -> str:
    """The message for a wrong array: what, the errors, the values from the first entry that
    differs (and its index), the likely mistake."""
    lines = [f"{what} is wrong" + (f" ({where})" if where else "") + "."]
    if got.shape != expected.shape:
        lines.append(f"  shape: got {got.shape}, expected {expected.shape}")
    else:
        if finite(got):
            lines.append(_errors(got, expected))
        first = _first_difference(got, expected, rtol, atol) if expected.size else 0
        if expected.ndim:
            index = tuple(int(i) for i in np.unravel_index(first, expected.shape))
            lines.append(f"  first difference at index {index}")
        lines.append(f"  expected {_sample(expected, first)}")
        lines.append(f"  got      {_sample(got, first)}")
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
    fail(mismatch(what, got, expected, where, signatures, rtol, atol))
