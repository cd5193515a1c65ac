"""Checks of unit 14's sampler: the next-token distribution (temperature, top-k), judged as a
distribution, and the draw from it, judged on the generator's own uniform numbers.

A draw is random, so one draw proves little; but with a seeded generator it is a function of
the generator's numbers: token ``first i with cumsum(p)[i] > u * sum(p)`` for each row's
``u``. The grader sends a copy of its generator and recomputes every token from the same
numbers, on the student's own probabilities, so a wrong distribution costs only its cell:
the distribution cell grades next_token_probabilities on the draw cell's logits too and keeps
what it returned there (``autograder.verdicts``), which is what the draw cell computes with,
never a second call.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from autograder import verdicts
from autograder.checks._calls import kept_answer
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
# The draw cell's (logits shape, temperature, top_k); the logits and seeds come from DRAW_SEED.
DRAWS = (((200, V), 1.0, None), ((100, V), 0.6, 3), ((4, 25, V), 1.5, None))
DRAW_SEED = 42


def draw_cases() -> list[tuple[np.ndarray, float, int | None, int]]:
    """The draw cell's logits, temperature, top_k and its generator's seed, case by case."""
    rng = np.random.default_rng(DRAW_SEED)
    cases = []
    for shape, temperature, top_k in DRAWS:
        logits = 2.0 * rng.standard_normal(shape)
        cases.append((logits, temperature, top_k, int(rng.integers(1 << 30))))
    return cases


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
    temperatures 0.5 to 2, top_k 2 to V and None, and logits of +-1000; also on the draw
    cell's logits, whose answers it keeps for that cell."""
    rng = np.random.default_rng(41)
    inputs = [(scale * rng.standard_normal(shape), temperature, top_k, None)
              for shape, scale, temperature, top_k in CASES]
    inputs += [(logits, temperature, top_k, i)
               for i, (logits, temperature, top_k, _) in enumerate(draw_cases())]
    answers = [kept_answer(next_token_probabilities_values.__name__, drawn,
                           f"next_token_probabilities(logits {logits.shape}, temperature="
                           f"{temperature}, top_k={top_k})", next_token_probabilities,
                           logits.copy(), temperature=temperature, top_k=top_k)
               for logits, temperature, top_k, drawn in inputs]
    for (logits, temperature, top_k, drawn), got in zip(inputs, answers):
        if isinstance(got, CheckFailure):
            raise got
        where = f"logits of shape {logits.shape}" + ("" if drawn is None else ", a draw's")
        expect_close(f"next_token_probabilities(temperature={temperature}, top_k={top_k})", got,
                     sampling.next_token_probabilities(logits, temperature, top_k), where,
                     _probability_signatures(logits, temperature, top_k))


def inverse_cdf(probs: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """For each row, the first token whose cumulative probability exceeds its ``u`` (scaled by
    the row's total, as numpy's ``Generator.choice`` does)."""
    cumulative = np.cumsum(probs, axis=-1)
    tokens = (cumulative <= uniform[..., None] * cumulative[..., -1:]).sum(axis=-1)
    return np.minimum(tokens, probs.shape[-1] - 1)


def _own_probabilities(next_token_probabilities, drawn: int, logits: np.ndarray,
                       temperature: float, top_k) -> np.ndarray:
    """The distribution the student's next_token_probabilities returned to its own cell for
    the draw case ``drawn`` when it is one (rows of non-negative numbers summing to 1), else
    the reference's: the draw is judged on its own, whatever the distribution's cell."""
    expected = sampling.next_token_probabilities(logits, temperature, top_k)
    own = verdicts.kept(next_token_probabilities, next_token_probabilities_values.__name__, drawn)
    valid = own is not None and own.shape == logits.shape and bool(np.isfinite(own).all()) \
        and bool((own >= 0).all()) and close(own.sum(axis=-1), np.ones(logits.shape[:-1]))
    return own if valid else expected


@check
def sample_draws(sample, next_token_probabilities):
    """sample(logits, temperature, top_k, rng): one token per row of (..., V) logits, drawn
    by inverse CDF from next_token_probabilities with one rng.random() per row, so a
    generator with the same seed gives the same tokens (judged on what the student's own
    next_token_probabilities returned to its cell for these logits)."""
    for drawn, (logits, temperature, top_k, seed) in enumerate(draw_cases()):
        shape = logits.shape
        got = as_array("sample", call(f"sample(logits {shape}, temperature={temperature}, "
                                      f"top_k={top_k}, rng=np.random.default_rng({seed}))",
                                      sample, logits.copy(), temperature, top_k,
                                      np.random.default_rng(seed)))
        expect(got.dtype.kind in "iu", f"sample returned {got.dtype} values; tokens are "
               "integers.")
        uniform = np.random.default_rng(seed).random(shape[:-1])
        probs = _own_probabilities(next_token_probabilities, drawn, logits, temperature, top_k)
        expected = inverse_cdf(probs, uniform)
        plain = inverse_cdf(sampling.next_token_probabilities(logits, 1.0, None), uniform)
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
