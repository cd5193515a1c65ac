"""The classic mistakes of attention, recomputed from the check's inputs: what a student's
output or gradient equals when the scale, the mask, the softmax's axis or the softmax's
backward is wrong. Each becomes a signature, so the failure says "Likely mistake: ..."."""
from __future__ import annotations

import math

import numpy as np

from course.testing.diagnose import Signature, close, when


def _allowed(case, mask) -> np.ndarray | None:
    if case.is_causal:
        return np.tri(case.query[-2], case.source, dtype=bool)
    return mask


def _softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        exp = np.exp(scores - scores.max(axis=axis, keepdims=True))
        return exp / exp.sum(axis=axis, keepdims=True)


def weights(q, k, allowed, scale: float, axis: int = -1, after: bool = False) -> np.ndarray:
    """The attention weights with a given scale and softmax axis; ``after``: the mask applied
    by zeroing the weights after the softmax."""
    scores = scale * (q @ np.swapaxes(k, -1, -2))
    if allowed is None:
        return _softmax(scores, axis)
    if after:
        return _softmax(scores, axis) * allowed
    return _softmax(np.where(allowed, scores, -np.inf), axis)


def _scales(case, q) -> dict[str, float]:
    """The scale the case asks for, and the wrong ones a student may use."""
    features = q.shape[-1]
    right = case.scale if case.scale is not None else 1 / math.sqrt(features)
    wrong = {"no_scale": 1.0}
    if case.scale is None:
        wrong["by_d"] = 1 / features
        if q.ndim == 4:    # (B, H, T, D): the model's width is H * D
            wrong["by_c"] = 1 / math.sqrt(q.shape[1] * features)
    return {"right": right, **wrong}


SCALE_MESSAGES = {
    "no_scale": "the scores were not scaled: multiply Q K^T by 1/sqrt(E), E the query's last "
                "dimension (or by the scale given).",
    "by_d": "the scores were divided by D (1/D) instead of sqrt(D): the scale is 1/sqrt(E).",
    "by_c": "the scores were scaled by 1/sqrt(C), the model's width H * D, instead of each "
            "head's 1/sqrt(D): use the query's last dimension.",
}


def forward_signatures(case, q, k, v, mask) -> tuple[Signature, ...]:
    allowed = _allowed(case, mask)
    scales = _scales(case, q)
    right = scales.pop("right")
    outputs = {name: weights(q, k, allowed, s) @ v for name, s in scales.items()}
    found = [when(name, lambda g, e, o=o: close(g, o), SCALE_MESSAGES[name])
             for name, o in outputs.items()]
    found.append(when("wrong_axis", lambda g, e: close(g, _nan_free(
        weights(q, k, allowed, right, axis=-2)) @ v),
        "the softmax was taken over the wrong axis (the queries, axis -2): each query's "
        "weights over the keys, the last axis, must sum to one."))
    if allowed is not None:
        after = weights(q, k, allowed, right, after=True) @ v
        found.append(when("mask_after", lambda g, e: close(g, after),
                          "the mask was applied after the softmax (weights zeroed, so the rows no "
                          "longer sum to one): set masked scores to -inf before the softmax."))
        empty = ~allowed.any(axis=-1)
        if empty.any():
            found.append(when("nan_row", lambda g, e: bool(np.isnan(g[..., empty, :]).all())
                              and not np.isnan(g[..., ~empty, :]).any(),
                              "a fully masked query (every key masked) gave NaN: its row maximum "
                              "is -inf and -inf - (-inf) is NaN. Give such a row zero weights "
                              "(subtract 0 where the maximum is not finite, divide by 1 where "
                              "the sum is 0)."))
    return tuple(found)


def _nan_free(a: np.ndarray) -> np.ndarray:
    return np.nan_to_num(a, nan=0.0)


def gradients(q, k, v, allowed, scale: float, g, rowsum: bool = True,
              grad_scale: bool = True) -> dict[str, np.ndarray]:
    """dL/dquery, dL/dkey, dL/dvalue with the softmax backward's rowsum term or without, and
    with the scale in the query and key gradients or without."""
    p = _nan_free(weights(q, k, allowed, scale))
    grad_p = g @ np.swapaxes(v, -1, -2)
    grad_scores = p * (grad_p - (p * grad_p).sum(axis=-1, keepdims=True) if rowsum else grad_p)
    factor = scale if grad_scale else 1.0
    return {"query": factor * grad_scores @ k,
            "key": factor * np.swapaxes(grad_scores, -1, -2) @ q,
            "value": np.swapaxes(p, -1, -2) @ g}


def backward_signatures(case, name: str, q, k, v, mask, g) -> tuple[Signature, ...]:
    allowed = _allowed(case, mask)
    scale = _scales(case, q)["right"]
    found = []
    if name != "value":
        no_rowsum = gradients(q, k, v, allowed, scale, g, rowsum=False)[name]
        no_scale = gradients(q, k, v, allowed, scale, g, grad_scale=False)[name]
        found += [when("no_rowsum", lambda got, e: close(got, no_rowsum),
                       f"dL/d{name} misses the softmax backward's rowsum term: dL/dA = P * (dL/dP "
                       "- rowsum(P * dL/dP)), not P * dL/dP."),
                  when("no_scale", lambda got, e: close(got, no_scale),
                       f"dL/d{name} misses the scale: the scores are s Q K^T, so dL/dQ and dL/dK "
                       "are s times the products.")]
    if allowed is not None:
        leaked = gradients(q, k, v, None, scale, g)[name]
        found.append(when("unmasked", lambda got, e: close(got, leaked),
                          f"dL/d{name} is the gradient of attention without the mask: the "
                          "backward must use the masked weights the forward computed."))
    return tuple(found)
