"""How unit 13's layers are used in a network: in float32, and forward twice before backward.

- **float32**: a layer built with ``dtype=np.float32`` (Conv2d) or given a float32 input (the
  pools) keeps float32 in its output, its dL/dx and its gradients. Each cell judges the dtype
  of its own quantity, on a pass that runs right (a wrong value is the float64 cases' to judge).
- **a second forward**: ``forward(x1)``, ``forward(x2)``, ``backward(G)`` (a validation batch
  between training steps) must give the gradients of ``x2``: judged against the student's own
  gradients of ``x2`` alone, so a wrong backward costs nothing more here.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from course.testing._trusted import asarray
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, fail

FLOAT32 = ("{quantity} has dtype {dtype} for a float32 {given}: a float32 network stays in "
           "float32 (half the memory, twice the speed). Create arrays with the dtype of what "
           "you compute from, np.zeros(shape, dtype=x.dtype), and no float64 constants.")
SECOND_FORWARD = ("{quantity} after forward(x1), forward(x2), backward(G) is {which}: backward "
                  "used what the first forward saved. Save what backward needs at every "
                  "forward, so that it always belongs to the last input (a validation batch "
                  "between two training steps does just this).")


def expect_float32(quantity: str, value: object, given: str) -> None:
    """``value`` (the student's array, or None where that step failed) is float32."""
    if value is None:
        return
    dtype = asarray(value).dtype
    if dtype != np.float32:
        fail(FLOAT32.format(quantity=quantity, dtype=dtype, given=given))


def expect_latest(quantity: str, twice: np.ndarray, alone: np.ndarray,
                  first: Callable[[], np.ndarray]) -> None:
    """``twice`` (after two forwards) equals ``alone`` (the student's own, after the second
    forward only); ``first()`` is the student's own for the first input, to name the mistake."""
    twice, alone = asarray(twice, dtype=float), asarray(alone, dtype=float)
    if twice.shape == alone.shape and close(twice, alone):
        return
    try:
        earlier = asarray(first(), dtype=float)
    except CheckFailure:
        earlier = None
    which = ("the one of x1" if earlier is not None and twice.shape == earlier.shape
             and close(twice, earlier) else "not the one of x2")
    fail(SECOND_FORWARD.format(quantity=quantity, which=which))
