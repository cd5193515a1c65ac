"""Checks of unit 16's generation: ``next_token_distribution(model, idx, temperature, top_k)``
judged as a distribution, and ``generate`` judged on the generator's own numbers.

Both run on a GPT built from the student's class, whose logits the grader reads from the
model itself (its ``forward`` on the cropped context), so a wrong forward pass, the GPT
cell's to judge, costs nothing here: what is judged is the crop to the block size, the last
position, temperature and top-k. A draw is a function of the generator's numbers: the grader
sends a seeded generator and recomputes each step's token from the same uniform numbers, on the
student's own probabilities (the reference's stand in only where the distribution's own cell
failed and the student's are no distribution: an excuse resting on that verdict).
"""
from __future__ import annotations

import numpy as np

from autograder.checks.gpt import HEADS, WIDTH
from autograder.checks.sampling import inverse_cdf
from autograder.sandbox import call, construct
from autograder import verdicts
from autograder.registry import check
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import CheckFailure, expect
from minitorch_ref import sampling

VOCAB, BLOCK = 6, 4
GENERATE_BLOCK = 8      # generate's sequences: up to 7 tokens


def _model(GPT, seed: int, block_size: int = BLOCK):
    """A student's GPT with sharp logits (a small model at GPT-2's initial values gives nearly
    uniform ones, under which temperature and top-k hardly show)."""
    model = construct(GPT, VOCAB, block_size, n_layer=1, n_head=HEADS, n_embd=WIDTH)
    table = np.random.default_rng(seed).standard_normal((VOCAB, WIDTH))
    model.wte.weight.data = table
    return model


def _last_logits(model, idx: np.ndarray) -> np.ndarray:
    """The model's own logits of the last position of ``idx`` (at most block_size tokens)."""
    return as_array("GPT.forward", call("GPT.forward", model.forward, idx))[:, -1]


def _signatures(model, idx: np.ndarray, temperature: float, top_k) -> tuple:
    signatures = ()
    if idx.shape[1] > BLOCK:
        first = sampling.next_token_probabilities(_last_logits(model, idx[:, :BLOCK]),
                                                  temperature, top_k)
        signatures += (when("front_crop", lambda g, e: close(g, first),
                            "the context was cropped to its first block_size tokens: keep the "
                            "last ones, idx[:, -block_size:], which end where the next token "
                            "comes."),)
    mean = sampling.next_token_probabilities(_last_logits(model, idx[:, -BLOCK:]), 1.0, None)
    signatures += (when("defaults", lambda g, e: (temperature, top_k) != (1.0, None) and close(g, mean),
                        f"the probabilities ignore temperature={temperature} and top_k={top_k}: "
                        "divide the logits by the temperature and mask all but the top_k largest."),)
    if top_k is not None:
        logits = _last_logits(model, idx[:, -BLOCK:])
        kth = np.sort(logits, axis=-1)[:, -top_k:][:, :1]
        zeroed = np.where(logits >= kth, logits, 0.0)
        signatures += (when("masked_with_zero", lambda g, e: close(
            g, sampling.next_token_probabilities(zeroed, temperature, None)),
            "the logits outside the top k were set to 0, which still gives them probability: "
            "set them to -np.inf."),)
    return signatures


CASES = ((3, 3, 1.0, None), (2, 4, 0.5, None), (2, 7, 1.0, None), (3, 9, 2.0, 2), (2, 2, 0.7, 3))


@check
def gpt_next_token_distribution(next_token_distribution, GPT):
    """next_token_distribution(model, idx, temperature, top_k) of (B, T) tokens, T shorter and
    longer than block_size: softmax(z / temperature) over the top_k largest logits z of the
    last position of idx[:, -block_size:], from the model's own forward, shape (B, V)."""
    rng = np.random.default_rng(161)
    for seed, (batch, length, temperature, top_k) in enumerate(CASES):
        model = _model(GPT, seed)
        idx = rng.integers(0, VOCAB, size=(batch, length))
        what = (f"next_token_distribution(model, idx of shape {idx.shape}, temperature="
                f"{temperature}, top_k={top_k}) with block_size={BLOCK}")
        try:
            got = call(what, next_token_distribution, model, idx.copy(), temperature, top_k)
        except CheckFailure as failure:
            hint = ("\n  idx is longer than block_size: crop the context to its last block_size "
                    "tokens, idx[:, -model.block_size:], before calling the model."
                    if length > BLOCK else "")
            raise CheckFailure(str(failure) + hint) from None
        expected = sampling.next_token_probabilities(_last_logits(model, idx[:, -BLOCK:]),
                                                     temperature, top_k)
        expect_close(what, got, expected, "the model's own logits of the last position",
                     _signatures(model, idx, temperature, top_k))


def _own_probabilities(next_token_distribution, model, idx, temperature, top_k) -> np.ndarray:
    """The student's distribution for the draws. Where the distribution's own cell failed, the
    reference's on the model's logits stands in for one that is no distribution (``idx`` stays
    within the model's block: cropping is that cell's to judge)."""
    own = lambda: as_array("next_token_distribution", call(
        "next_token_distribution", next_token_distribution, model, idx.copy(), temperature, top_k))
    if not verdicts.failed(next_token_distribution, gpt_next_token_distribution.__name__):
        return own()
    expected = sampling.next_token_probabilities(_last_logits(model, idx), temperature, top_k)
    try:
        probs = own()
    except CheckFailure:
        return expected
    valid = probs.shape == expected.shape and bool(np.isfinite(probs).all()) and bool(
        (probs >= 0).all()) and close(probs.sum(axis=-1), np.ones(len(idx)))
    return probs if valid else expected


def _expected_draws(next_token_distribution, model, idx, steps, temperature, top_k, seed):
    """The sequence generate should return: each step's token recomputed from one
    ``rng.random(B)`` of a generator seeded as the student's."""
    uniform = np.random.default_rng(seed)
    for _ in range(steps):
        probs = _own_probabilities(next_token_distribution, model, idx, temperature, top_k)
        idx = np.concatenate([idx, inverse_cdf(probs, uniform.random(len(idx)))[:, None]], axis=1)
    return idx


@check
def gpt_generate(generate, next_token_distribution, GPT):
    """generate(model, idx, max_new_tokens, temperature, top_k, rng) returns idx followed by
    max_new_tokens tokens, each drawn by inverse CDF from next_token_distribution with one
    rng.random(B) per step; idx itself unchanged. The sequences stay within the block size:
    the crop is judged with next_token_distribution, which generate calls."""
    for seed, (batch, length, steps, temperature, top_k) in enumerate(
            ((3, 2, 5, 1.0, None), (2, 3, 4, 0.8, 3))):
        model = _model(GPT, seed, GENERATE_BLOCK)
        idx = np.random.default_rng(seed).integers(0, VOCAB, size=(batch, length))
        given = idx.copy()
        what = (f"generate(model, idx of shape {idx.shape}, {steps}, temperature={temperature}, "
                f"top_k={top_k}, rng=np.random.default_rng({seed}))")
        got = as_array(what, call(what, generate, model, given, steps, temperature, top_k,
                                  np.random.default_rng(seed)))
        expect(got.shape == (batch, length + steps), f"{what} should have shape "
               f"{(batch, length + steps)}, got {got.shape}.")
        expect(got.dtype.kind in "iu", f"generate returned {got.dtype} values; tokens are integers.")
        expect(close(given, idx), "generate changed the idx it was given: build a new array "
               "with np.concatenate.")
        expected = _expected_draws(next_token_distribution, model, idx, steps, temperature,
                                   top_k, seed)
        greedy = _expected_greedy(model, idx, steps)
        expect_close(what, got, expected, "each token from one rng.random(B) per step, by the "
                     "inverse CDF of your next_token_distribution",
                     (when("argmax", lambda g, e: close(g, greedy),
                           "every step took the most likely token: that is greedy decoding, not "
                           "a draw. Take one rng.random(B) per step and invert the cumulative "
                           "probabilities."),))


def _expected_greedy(model, idx, steps):
    for _ in range(steps):
        idx = np.concatenate([idx, _last_logits(model, idx).argmax(axis=-1)[:, None]], axis=1)
    return idx
