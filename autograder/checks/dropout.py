"""Checks of the student's Dropout: training and eval behaviour, gradients.

Dropout is random and the student's masks come from their own generator, so its
checks are statistical and structural (every output is 0 or x / (1 - p), about a
fraction p are zeroed, backward reuses forward's mask) rather than a comparison
with the reference's mask.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import (
    set_mode, student_backward, student_forward, twice_after_seed,
)
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import construct
from course.testing.compare import expect_close
from course.testing.diagnose import Signature, close, not_finite, when
from course.testing.failure import expect, fail
import minitorch_ref


# ---------------------------------------------------------------------------- Dropout
DROP_PS = (0.2, 0.5, 0.75)


DROP_SHAPE = (200, 250)


# |fraction zeroed - p| allowed: the binomial std is below 0.0023 for 50,000 entries.
ZERO_TOLERANCE = 0.02


def _dropout(Dropout: type, p: float, seed: int):
    minitorch_ref.manual_seed(seed)  # reproducible audits; a student's own generator is not seeded
    layer = construct(Dropout, p)
    check_instance("Dropout", layer)
    return layer


def _normal(seed: int, shape: tuple[int, ...] = DROP_SHAPE) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(shape)


def _expect_zero_fraction(what: str, zeroed: float, p: float) -> None:
    if abs(zeroed - p) <= ZERO_TOLERANCE:
        return
    message = (f"{what}.forward in training zeroed {zeroed:.1%} of the entries of a "
               f"{DROP_SHAPE} input; expected about p = {p:.0%}.")
    if zeroed == 0:
        message += ("\n  Likely mistake: nothing is dropped: is a new module in training mode "
                    "(self.training = True) and does forward apply the mask when training?")
    elif abs(zeroed - (1 - p)) <= ZERO_TOLERANCE:
        message += ("\n  Likely mistake: p is used as the probability of keeping an entry; it is "
                    "the probability of zeroing one: keep the entries where rand >= p.")
    fail(message)


def _scale_hint(ratio: np.ndarray, p: float) -> str:
    hints = (
        (1.0, "the kept values are not scaled by 1/(1-p): inverted dropout divides them by "
              "(1 - p) in training, so that the expected output equals the input and eval "
              "needs no change."),
        (1 / p, "the kept values are divided by p instead of by (1 - p): p is the probability "
                "of dropping, so 1 - p is the fraction kept."),
        (p, "the kept values are multiplied by p instead of divided by (1 - p)."),
        (1 - p, "the kept values are multiplied by (1 - p) instead of divided by it."),
    )
    for factor, hint in hints:
        if close(ratio, np.full(ratio.shape, factor)):
            return f"\n  Likely mistake: {hint}"
    return ""


def _expect_scale(what: str, x: np.ndarray, y: np.ndarray, kept: np.ndarray, p: float) -> None:
    ratio = y[kept] / x[kept]
    scale = 1 / (1 - p)
    if close(ratio, np.full(ratio.shape, scale)):
        return
    low, high = float(ratio.min()), float(ratio.max())
    got = f"{low:.4g}" if close(low, high) else f"between {low:.4g} and {high:.4g}"
    fail(f"{what}.forward in training: every entry that is not zeroed should be x / (1 - p) "
         f"= {scale:.4g} * x; got y / x = {got}.{_scale_hint(ratio, p)}")


def _expect_fresh_masks(what: str, layer, x: np.ndarray, kept: np.ndarray) -> None:
    expect(not bool((kept == kept[:1]).all()),
           f"{what}.forward in training gave every row of the batch the same mask. Draw one "
           "random number per entry: a mask of shape x.shape.")
    expect(not bool((kept == kept[:, :1]).all()),
           f"{what}.forward in training kept or dropped whole rows. Draw one random number "
           "per entry: a mask of shape x.shape.")
    again = student_forward(what, layer, x) != 0
    expect(not bool((again == kept).all()),
           f"Two training forward passes of {what} zeroed exactly the same entries. Likely "
           "mistake: the mask is drawn once and reused; draw a new mask on every forward call.")


@check
def dropout_train_forward(Dropout):
    """In training every output is 0 or x / (1 - p), about a fraction p is zeroed, and each
    entry and each call gets its own random draw (p = 0.2, 0.5, 0.75); float32 stays float32."""
    for seed, p in enumerate(DROP_PS):
        what = f"Dropout({p})"
        layer = _dropout(Dropout, p, seed)
        x, _ = _normal(seed)
        y = student_forward(what, layer, x)
        kept = y != 0
        _expect_zero_fraction(what, 1 - float(kept.mean()), p)
        _expect_scale(what, x, y, kept, p)
        _expect_fresh_masks(what, layer, x, kept)
    y = student_forward("Dropout(0.5)", _dropout(Dropout, 0.5, 3), np.ones((4, 5), np.float32))
    expect(y.dtype == np.float32, f"Dropout(0.5).forward turned a float32 input into {y.dtype}: "
           "build the mask in the input's dtype, keep.astype(x.dtype) / (1 - self.p).")


def _dropout_backward_signatures(grad_output: np.ndarray, kept: np.ndarray,
                                 p: float) -> tuple[Signature, ...]:
    def fresh_mask(got, expected):
        dropped = got == 0
        return not bool((dropped == ~kept).all()) \
            and abs(float(dropped.mean()) - p) <= ZERO_TOLERANCE
    return (
        when("fresh_mask", fresh_mask,
             "backward zeroes other entries than forward did: it draws a new mask. Save the "
             "mask (with its 1/(1-p) scale) in forward and multiply grad_output by that same "
             "mask in backward."),
        when("unmasked", lambda got, e: close(got, grad_output),
             "backward returns grad_output unchanged: multiply it by forward's mask and scale."),
        when("unscaled", lambda got, e: close(got, grad_output * kept),
             "backward applies the mask but not the scale: dL/dx = grad_output * mask / (1 - p)."),
    )


@check
def dropout_backward(Dropout):
    """In training dL/dx = grad_output * mask / (1 - p), with the mask of the last forward:
    whatever forward did to each entry (y / x), backward does to its gradient. A forward that
    drops with the wrong rate or scale is the forward cell's mistake: backward is then judged
    against the student's own forward, as long as that drops some entries and keeps others."""
    for seed, p in enumerate(DROP_PS):
        what = f"Dropout({p})"
        layer = _dropout(Dropout, p, seed)
        x, grad_output = _normal(seed + 10)
        y = student_forward(what, layer, x)
        kept = y != 0
        got = student_backward(what, layer, grad_output)
        if kept.any() and not kept.all() and close(got, grad_output * (y / x)):
            continue
        expect_close(f"{what}.backward: grad_input (dL/dx)", got, grad_output * kept / (1 - p),
                     "training mode: 0 where forward's output is 0, else grad_output / (1 - p)",
                     _dropout_backward_signatures(grad_output, kept, p))


ACTIVE_IN_EVAL = ("Dropout is still active in eval mode: when self.training is False (after "
                  "eval()), forward returns x unchanged and backward returns grad_output.")


@check
def dropout_eval(Dropout):
    """After eval(), forward and backward are the identity; train() turns dropout back on."""
    for seed, p in enumerate((0.5, 0.9)):
        what = f"Dropout({p})"
        layer = _dropout(Dropout, p, seed)
        set_mode(what, layer, False)
        x, grad_output = _normal(seed + 20, (50, 40))
        active = (
            when("active", lambda g, e: bool((g == 0).any()), ACTIVE_IN_EVAL),
            when("test_time_scale", lambda g, e, p=p: close(g, (1 - p) * e),
                 "in eval mode the values are multiplied by (1 - p): that is the old, "
                 "non-inverted dropout. With inverted dropout (divide by 1 - p in training) "
                 "eval is the identity."),
        )
        expect_close(f"{what}.forward output in eval mode", student_forward(what, layer, x), x,
                     "it should equal the input", active)
        expect_close(f"{what}.backward in eval mode (dL/dx)",
                     student_backward(what, layer, grad_output), grad_output,
                     "it should equal grad_output", active)
        set_mode(what, layer, True)
        expect(bool((student_forward(what, layer, x) == 0).any()),
               f"After eval() and then train(), {what}.forward zeroes nothing: train() must "
               "switch dropout back on (self.training = True).")


@check
def dropout_p_zero(Dropout):
    """Dropout(0.0) in training is the identity, forward and backward (no division by zero)."""
    layer = _dropout(Dropout, 0.0, 0)
    x, grad_output = _normal(30, (20, 7))
    signatures = (not_finite("with p = 0 the result has inf or NaN: divide by (1 - p), not by p."),)
    what = "Dropout(0.0)"
    expect_close(f"{what}.forward output in training", student_forward(what, layer, x), x,
                 "with p = 0 nothing is dropped", signatures)
    expect_close(f"{what}.backward (dL/dx)", student_backward(what, layer, grad_output),
                 grad_output, "with p = 0 it is grad_output", signatures)


GENERATOR_SEEDS = (7, 8)


def _masks(Dropout: type, seed: int, x: np.ndarray) -> np.ndarray:
    """Which entries a Dropout(0.5) built with ``default_rng(seed)`` keeps on ``x``."""
    layer = construct(Dropout, 0.5, rng=np.random.default_rng(seed))
    set_mode("Dropout", layer, True)
    return student_forward("Dropout(0.5, rng=default_rng(seed))", layer, x) != 0


def _default_masks(Dropout: type, x: np.ndarray) -> np.ndarray:
    """Which entries a Dropout(0.5) built without an rng keeps on ``x``."""
    layer = construct(Dropout, 0.5)
    set_mode("Dropout", layer, True)
    return student_forward("Dropout(0.5) after manual_seed(3)", layer, x) != 0


@check
def dropout_uses_its_generator(Dropout, manual_seed):
    """The masks come from ``rng``: equally seeded generators give equal masks, others differ;
    without one, from default_rng(), so that manual_seed makes them reproducible."""
    x = np.ones((20, 30))
    first, again = (_masks(Dropout, GENERATOR_SEEDS[0], x) for _ in range(2))
    other = _masks(Dropout, GENERATOR_SEEDS[1], x)
    expect(bool(np.array_equal(first, again)) and not np.array_equal(first, other),
           "Two Dropout(0.5, rng=np.random.default_rng(7)) layers dropped different entries of "
           "the same input, or generators with other seeds dropped the same ones.\n"
           "  Likely mistake: the mask does not come from the layer's generator: draw it with "
           "self.rng (default_rng() when rng is None), not np.random, so that a seeded model "
           "gives the same masks every run.")
    first, again = twice_after_seed(manual_seed, lambda: _default_masks(Dropout, x))
    expect(bool(np.array_equal(first, again)), "After manual_seed(3), two Dropout(0.5) layers "
           "without an rng dropped different entries.\n  Likely mistake: without an rng, draw "
           "the mask from default_rng(), looked up at every call, so that manual_seed works.")
