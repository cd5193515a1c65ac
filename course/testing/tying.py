"""A tied table's gradient with one of its two uses missing (unit 16's GPT), named in the same
words by the notebook's visible test and by the grader."""
from __future__ import annotations

import numpy as np

from course.testing.diagnose import ATOL, RTOL, Signature, close, when


def tied_gradient_signatures(head: np.ndarray, lookup: np.ndarray, before: object = 0.0,
                             rtol: float = RTOL, atol: float = ATOL) -> tuple[Signature, Signature]:
    """The signatures of ``wte.weight.grad`` holding one part only.

    Args:
        head: the head's part ``G^T X``, shape ``(V, C)``.
        lookup: the lookup's part, ``dL/dX0`` added into the rows of the tokens read, ``(V, C)``.
        before: what ``.grad`` held before the backward pass (kept by a right one).
        rtol, atol: the tolerance (looser against finite differences).
    """
    def holds(part: np.ndarray):
        return lambda got, _: close(got, part, rtol, atol) or close(got, before + part, rtol, atol)
    return (when("head_only", holds(head),
                 "wte.weight.grad holds only the head's G^T X: the lookup's gradient was written "
                 "over. The table is used twice; add both parts into .grad with +=."),
            when("lookup_only", holds(lookup),
                 "wte.weight.grad holds only the lookup's gradient (wte.backward): the tied "
                 "head's G^T X (V, C) was written over or never added; add it with +=."))
