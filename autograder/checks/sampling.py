"""Checks of unit 14's sampler: the next-token distribution (temperature, top-k), judged as a
distribution, and the draw from it, judged on the generator's own uniform numbers.

A draw is random, so one draw proves little; but with a seeded generator it is a function of
the generator's numbers: token ``first i with cumsum(p)[i] > u * sum(p)`` for each row's
``u``. The grader sends a copy of its generator and recomputes every token from the same
numbers, on the student's own probabilities, so a wrong distribution costs only its cell.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import CheckFailure, expect
from minitorch_ref import sampling

V = 6
# (logits shape, scale, temperature, top_k)
CASES = (((4, V), 3.0, 1.0, None), ((4, V), 3.0, 0.5, None), ((2, 3, V), 2.0, 2.0, None),
         ((5, V), 2.0, 1.0, 2), ((3, V), 2.0, 0.7, 4), ((2, V), 1.0, 1.0, V),
         ((3, V), 1000.0, 1.0, None))


def _masked(logits: np.ndarray, keep) -> np.ndarray:
    """logits with every entry outside ``keep(row_sorted)`` at -inf."""
    order = np.sort(logits, axis=-1)
    return np.where(keep(logits, order), logits, -np.inf)


def _probability_signatures(logits: np.ndarray, temperature: float, top_k) -> tuple:
    def softmax(z):
        return special.softmax(z, axis=-1)
    signatures = (
        when("no_temperature", lambda g, e: temperature != 1 and close(g, softmax(logits)),
             f"the temperature is ignored: these are softmax(logits), not softmax(logits / "
             f"temperature) (temperature={temperature})."),
        when("times_temperature", lambda g, e: temperature != 1
             and close(g, sampling.next_token_probabilities(logits * temperature ** 2,
                                                            temperature, top_k)),
             "the logits were multiplied by the temperature: divide them, softmax(logits / "
             "temperature), so that a temperature below 1 sharpens the distribution."),
    )
    if top_k is not None and top_k < V:
        kth = np.sort(logits, axis=-1)[..., V - top_k]
        smallest = _masked(logits, lambda z, o: z <= o[..., top_k - 1:top_k])
        zeroed = np.where(logits >= kth[..., None], logits, 0.0)
        signatures += (
            when("smallest", lambda g, e: close(g, softmax(smallest / temperature)),
                 f"the {top_k} smallest logits were kept: top-k keeps the k largest."),
            when("masked_with_zero", lambda g, e: close(g, softmax(zeroed / temperature)),
                 "the logits outside the top k were set to 0, which still gives them "
                 "probability: set them to -inf (np.inf), whose exp is 0."),
            when("off_by_one", lambda g, e: any(close(g, sampling.next_token_probabilities(
                logits, temperature, k)) for k in (top_k - 1, top_k + 1) if 0 < k <= V),
                 f"the number of tokens kept is off by one: keep exactly the top_k={top_k} "
                 "largest logits of each row."),
        )
    return signatures


@check
def next_token_probabilities_values(next_token_probabilities):
    """next_token_probabilities(logits, temperature, top_k): softmax(logits / temperature)
    over the top_k largest logits of each row (the others 0), for (..., V) logits,
    temperatures 0.5 to 2, top_k 2 to V and None, and logits of +-1000."""
    rng = np.random.default_rng(41)
    for shape, scale, temperature, top_k in CASES:
        logits = scale * rng.standard_normal(shape)
        got = call(f"next_token_probabilities(logits {shape}, temperature={temperature}, "
                   f"top_k={top_k})", next_token_probabilities, logits.copy(),
                   temperature=temperature, top_k=top_k)
        expected = sampling.next_token_probabilities(logits, temperature, top_k)
        expect_close(f"next_token_probabilities(temperature={temperature}, top_k={top_k})", got,
                     expected, f"logits of shape {shape}, scale {scale:g}",
                     _probability_signatures(logits, temperature, top_k))


def inverse_cdf(probs: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """For each row, the first token whose cumulative probability exceeds its ``u`` (scaled by
    the row's total, as numpy's ``Generator.choice`` does)."""
    cumulative = np.cumsum(probs, axis=-1)
    tokens = (cumulative <= uniform[..., None] * cumulative[..., -1:]).sum(axis=-1)
    return np.minimum(tokens, probs.shape[-1] - 1)


def _own_probabilities(next_token_probabilities, logits, temperature, top_k) -> np.ndarray:
    """The student's distribution when it is one (rows of non-negative numbers summing to 1),
    else the reference's: the draw is judged on its own, whatever the distribution's cell."""
    expected = sampling.next_token_probabilities(logits, temperature, top_k)
    try:
        own = as_array("next_token_probabilities", call(
            "next_token_probabilities", next_token_probabilities, logits.copy(),
            temperature=temperature, top_k=top_k))
    except CheckFailure:
        return expected
    valid = own.shape == logits.shape and bool(np.isfinite(own).all()) and bool(
        (own >= 0).all()) and close(own.sum(axis=-1), np.ones(logits.shape[:-1]))
    return own if valid else expected


@check
def sample_draws(sample, next_token_probabilities):
    """sample(logits, temperature, top_k, rng): one token per row of (..., V) logits, drawn
    by inverse CDF from next_token_probabilities with one rng.random() per row, so a
    generator with the same seed gives the same tokens (judged on the student's own
    next_token_probabilities)."""
    rng = np.random.default_rng(42)
    for shape, temperature, top_k in (((200, V), 1.0, None), ((100, V), 0.6, 3),
                                      ((4, 25, V), 1.5, None)):
        logits = 2.0 * rng.standard_normal(shape)
        seed = int(rng.integers(1 << 30))
        got = as_array("sample", call(f"sample(logits {shape}, temperature={temperature}, "
                                      f"top_k={top_k}, rng=np.random.default_rng({seed}))",
                                      sample, logits.copy(), temperature, top_k,
                                      np.random.default_rng(seed)))
        expect(got.dtype.kind in "iu", f"sample returned {got.dtype} values; tokens are "
               "integers.")
        uniform = np.random.default_rng(seed).random(shape[:-1])
        probs = _own_probabilities(next_token_probabilities, logits, temperature, top_k)
        expected = inverse_cdf(probs, uniform)
        plain = inverse_cdf(_own_probabilities(next_token_probabilities, logits, 1.0, None),
                            uniform)
        signatures = (
            when("from_logits", lambda g, e: close(g, inverse_cdf(logits, uniform)),
                 "the tokens were drawn from the cumulative sum of the logits: logits are "
                 "not probabilities (they can be negative). Draw from "
                 "next_token_probabilities(logits, temperature, top_k)."),
            when("argmax", lambda g, e: close(g, probs.argmax(axis=-1)),
                 "every row gave its most likely token: that is the argmax, not a draw. "
                 "Take one rng.random() per row and invert the cumulative probabilities."),
            when("defaults", lambda g, e: (temperature, top_k) != (1.0, None) and close(g, plain),
                 f"the tokens come from the distribution at temperature 1 without top-k: pass "
                 f"temperature={temperature} and top_k={top_k} on to next_token_probabilities."),
        )
        expect_close(f"sample(temperature={temperature}, top_k={top_k}) tokens", got, expected,
                     f"{int(np.prod(shape[:-1]))} rows, rng=np.random.default_rng({seed}); "
                     "expected the first token whose cumulative probability exceeds "
                     "rng.random(), row by row", signatures)
