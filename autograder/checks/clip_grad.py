"""Check of unit 16's ``clip_grad_norm_``: every gradient scaled by one factor, so that their
total 2-norm is at most ``max_norm``, as PyTorch's ``torch.nn.utils.clip_grad_norm_``.

The gradients are the grader's: it draws them, hands them to the student's function on
parameters built in the student's kernel (``doubles.gradients``), reads back what each
``.grad`` holds afterwards and compares it, and the returned norm, with ``minitorch_ref``'s
``clip_grad_norm_`` on copies of the same arrays.
"""
from __future__ import annotations

import numpy as np

from autograder.remote.doubles import gradients
from autograder.remote.proxy import Remote
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close, when
from course.testing.failure import expect
from minitorch_ref.nn.utils import clip_grad_norm_ as reference_clip

SHAPES = ((5, 4), (4,), (3, 2, 2), (6,))
# (what the case is, the scale of the drawn gradients, max_norm, the parameter without a grad)
CASES = (("a total norm above max_norm", 1.0, 1.0, None),
         ("a parameter whose grad is None (skip it, as PyTorch does)", 1.0, 2.5, 1),
         ("a total norm below max_norm", 0.05, 1.0, None))


def _drawn(rng: np.random.Generator, scale: float, missing: int | None) -> list:
    return [None if i == missing else scale * rng.standard_normal(shape)
            for i, shape in enumerate(SHAPES)]


def _built(beside: object, grads: list) -> list:
    """Parameters holding ``grads``, where the student's function runs."""
    if isinstance(beside, Remote):
        return beside._session.send("double", "gradients", grads)
    return gradients([None if g is None else g.copy() for g in grads])


def _joined(grads: list) -> np.ndarray:
    return np.concatenate([g.reshape(-1) for g in grads if g is not None])


def _signatures(grads: list, max_norm: float) -> tuple:
    """What the classic mistakes make of ``grads``: each clipped alone, or always scaled."""
    kept = [g for g in grads if g is not None]
    alone = _joined([g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-6)) for g in kept])
    scaled = _joined(kept) * max_norm / (np.linalg.norm(_joined(kept)) + 1e-6)
    return (when("per_parameter", lambda g, e: close(g, alone) and not close(g, e),
                 "each gradient was clipped on its own, to norm max_norm: the norm is that of all "
                 "the gradients together, one long vector, and one factor scales every one of "
                 "them, so the step keeps its direction."),
            when("always_scaled", lambda g, e: close(g, scaled) and not close(g, e),
                 "the gradients were scaled up to norm max_norm although their total norm is "
                 "below max_norm: the factor is min(1, max_norm / (total + 1e-6)), so small "
                 "gradients are left alone."))


@check
def gpt_clip_grad_norm(clip_grad_norm_):
    """clip_grad_norm_(parameters, max_norm) on gradients the grader draws: every .grad
    scaled by min(1, max_norm / (total + 1e-6)), total the 2-norm of all of them together,
    parameters whose grad is None skipped; returns the total norm before clipping."""
    rng = np.random.default_rng(51)
    for case, scale, max_norm, missing in CASES:
        grads = _drawn(rng, scale, missing)
        parameters = _built(clip_grad_norm_, grads)
        what, where = f"clip_grad_norm_(parameters, {max_norm})", f"on {case}"
        total = call(f"{what} {where}", clip_grad_norm_, parameters, max_norm)
        expected = gradients([None if g is None else g.copy() for g in grads])
        expected_total = reference_clip(expected, max_norm)
        after = [call(f"reading parameter {i}'s .grad", getattr, p, "grad")
                 for i, p in enumerate(parameters)]
        if missing is not None:
            expect(after[missing] is None, f"{what} {where}: parameter {missing} had no grad (None) and "
                   f"got {type(after[missing]).__name__}; leave a missing gradient as it is.")
        expect_close(f"the gradients after {what}, joined", _joined(after),
                     _joined([p.grad for p in expected]), where, _signatures(grads, max_norm))
        expect_close(f"the norm {what} returned", total, expected_total, where,
                     (when("after", lambda g, e: close(g, min(float(e), max_norm)),
                           "the returned norm is the one after clipping; return the total norm "
                           "of the gradients before it (PyTorch's, to watch for exploding "
                           "gradients)."),))
