"""Checks of unit 15's ``ScaledDotProductAttention``: the forward pass (values, weights that
sum to one, masked keys exactly zero, a fully masked query reading nothing) and the backward
pass (the three gradients, none reaching a masked key).

Each runs the student's module beside ``minitorch_ref.nn.ScaledDotProductAttention`` on the same
inputs; a wrong output is matched against the classic mistakes, recomputed here
(``autograder.checks._attention_mistakes``), and a wrong gradient is also compared with finite
differences of the student's own forward, which tells a forward bug from a backward bug.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograder.checks._attention_mistakes import backward_signatures, forward_signatures
from autograder.checks._fd import fd_verdict
from autograder.registry import check
from autograder.sandbox import call, construct
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, expect
from minitorch_ref import nn


@dataclass(frozen=True)
class Case:
    """Shapes of query, key and value, the mask, and the scale."""

    query: tuple[int, ...]
    source: int                 # S, the number of keys
    value_features: int
    is_causal: bool = False
    mask: str | None = None     # "column": the last key masked for all; "row": the last query reads nothing
    scale: float | None = None
    spread: float = 1.0
    seed: int = 0

    def inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        rng = np.random.default_rng(self.seed)
        *lead, length, features = self.query
        q = self.spread * rng.standard_normal(self.query)
        k = self.spread * rng.standard_normal((*lead, self.source, features))
        v = rng.standard_normal((*lead, self.source, self.value_features))
        return q, k, v, self.attn_mask()

    def attn_mask(self) -> np.ndarray | None:
        if self.mask is None:
            return None
        mask = np.tri(self.query[-2], self.source, dtype=bool) | (np.arange(self.source) == 0)
        if self.mask == "column":
            mask[:, -1] = False
        else:
            mask[-1] = False
        return mask

    def __str__(self) -> str:
        parts = [f"query {self.query}, key/value length {self.source}"]
        parts += ["is_causal=True"] * self.is_causal + [f"scale={self.scale}"] * (self.scale is not None)
        if self.mask:
            parts.append("attn_mask with the last key masked for every query" if self.mask == "column"
                         else "attn_mask under which the last query may read no key")
        return ", ".join(parts)


CASES = (Case((2, 3, 4), 5, 3), Case((2, 2, 5, 4), 5, 4, is_causal=True, seed=1),
         Case((1, 2, 4, 8), 4, 8, mask="row", seed=2), Case((3, 4, 2), 4, 2, mask="column", seed=3),
         Case((1, 6, 3), 6, 2, is_causal=True, scale=0.5, seed=4),
         Case((2, 2, 3, 4), 3, 4, spread=30.0, seed=5),
         Case((2, 2, 4, 3), 5, 2, mask="column", scale=0.3, seed=6))


def _modules(ScaledDotProductAttention, case: Case):
    student = construct(ScaledDotProductAttention, is_causal=case.is_causal, scale=case.scale)
    return student, nn.ScaledDotProductAttention(is_causal=case.is_causal, scale=case.scale)


def _forward(what: str, module, q, k, v, mask):
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return call(f"{what}.forward", module.forward, *args)


@check
def attention_forward(ScaledDotProductAttention):
    """forward(query, key, value, attn_mask) of shapes (..., L, E), (..., S, E), (..., S, Ev):
    softmax(scale Q K^T + mask) V with scale 1/sqrt(E) unless given, the causal mask or a boolean
    attn_mask applied before the softmax, a query with no key allowed giving zeros (not NaN), and
    the weights (..., L, S) in attn_weights: each row sums to one, masked keys exactly zero."""
    what = "ScaledDotProductAttention"
    for case in CASES:
        student, reference = _modules(ScaledDotProductAttention, case)
        q, k, v, mask = case.inputs()
        got = as_array(f"{what}.forward output", _forward(what, student, q, k, v, mask))
        expected = reference.forward(q, k, v, mask)
        expect_close(f"{what}.forward output", got, expected, str(case),
                     forward_signatures(case, q, k, v, mask))
        weights = as_array(f"{what}.attn_weights", getattr(student, "attn_weights", None))
        expect_close(f"{what}.attn_weights", weights, reference.attn_weights, str(case))
        allowed = _allowed(case)
        if allowed is not None:
            expect(bool((weights[..., ~allowed] == 0).all()), f"{what}.attn_weights: a masked key "
                   f"got a weight that is not exactly 0 ({case}). Set masked scores to -inf before "
                   "the softmax.")
        readers = np.ones(q.shape[-2], dtype=bool) if allowed is None else allowed.any(axis=-1)
        expect_close(f"{what}.attn_weights row sums of the queries that may read a key",
                     weights.sum(axis=-1)[..., readers], np.ones(weights.shape[:-2] + (readers.sum(),)),
                     str(case))


def _allowed(case: Case) -> np.ndarray | None:
    """``(L, S)``: which keys each query may read, or None when all."""
    if case.is_causal:
        return np.tri(case.query[-2], case.source, dtype=bool)
    return case.attn_mask()


@check
def attention_backward(ScaledDotProductAttention):
    """backward(grad_output) after a forward returns (dL/dquery, dL/dkey, dL/dvalue), each of
    its input's shape: V gets P^T G, the scores P * (dL/dP - rowsum(P * dL/dP)), Q and K the scale
    times their products; a key no query may read gets exactly zero gradient, and so does a
    query that may read no key. Where the student's forward is wrong (its own cell), backward
    is given the right attn_weights and saved = (query, key, value, scale) first."""
    what = "ScaledDotProductAttention"
    for case in CASES:
        student, reference = _modules(ScaledDotProductAttention, case)
        q, k, v, mask = case.inputs()
        out = as_array(f"{what}.forward output", _forward(what, student, q, k, v, mask))
        handed = not close(out, reference.forward(q, k, v, mask))
        if handed:    # the forward cell's mistake: judge the backward on the right weights
            student.attn_weights = reference.attn_weights.copy()
            student.saved = (q.copy(), k.copy(), v.copy(), reference.saved[-1])
        grad_output = np.random.default_rng(case.seed + 50).standard_normal(
            q.shape[:-1] + v.shape[-1:])
        got = call(f"{what}.backward", student.backward, grad_output.copy())
        expect(isinstance(got, (tuple, list)) and len(got) == 3, f"{what}.backward should return "
               f"the triple (grad_query, grad_key, grad_value), got {type(got).__name__}.")
        expected = reference.backward(grad_output.copy())
        inputs = (q, k, v)
        for index, name in enumerate(("query", "key", "value")):
            grad = as_array(f"{what}.backward: dL/d{name}", got[index])
            try:
                expect_close(f"{what}.backward: dL/d{name}", grad, expected[index], str(case),
                             backward_signatures(case, name, q, k, v, mask, grad_output))
            except CheckFailure as failure:
                note = HANDED if handed else _verdict(student, inputs, index, mask, grad_output,
                                                      grad)
                raise CheckFailure(str(failure) + note) from None
            _expect_masked_zero(what, case, name, grad)


HANDED = ("\n  Your forward is wrong on this input (its own cell), so your backward was given the "
          "right weights in attn_weights and saved = (query, key, value, scale), as the given lines "
          "of forward store them: the mistake is in backward.")


def _expect_masked_zero(what: str, case: Case, name: str, grad: np.ndarray) -> None:
    allowed = _allowed(case)
    if allowed is None or name == "query" and allowed.any(axis=-1).all():
        return
    if name == "query":
        silent = grad[..., ~allowed.any(axis=-1), :]
    else:
        silent = grad[..., ~allowed.any(axis=0), :]
    expect(bool((silent == 0).all()), f"{what}.backward: dL/d{name} is not exactly zero where "
           f"attention was masked ({case}): nothing was read there, so no gradient may reach it.")


def _verdict(student, inputs, index: int, mask, grad_output, got) -> str:
    probes = [a.copy() for a in inputs]

    def loss() -> float:
        args = probes if mask is None else [*probes, mask]
        return float((asarray(student.forward(*args), dtype=float) * grad_output).sum())
    return fd_verdict(loss, probes[index], got, "Your backward",
                      ", so the bug is in ScaledDotProductAttention.forward.",
                      ": ScaledDotProductAttention.backward itself is wrong.")
