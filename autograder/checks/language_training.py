"""Unit 14's graded run, done by the grader: the notebook's ``MLPLanguageModel`` trained by the
student's ``train(model, X, y)``, timed and measured from outside the kernel
(``autograder.checks.graded_training``, as unit 11's).

The grader makes the (context, next character) samples itself, with the reference's tokenizer
and windows of 3 (``minitorch_ref.data``), so a mistake in the student's ``context_windows``
costs that cell only; it sends the training split's samples to ``train`` and measures the
trained model's mean negative log-likelihood on the names it keeps to itself
(``autograder.held_out.held_out_names``: none of them is in the course's dataset, so no
kernel can read them), their contexts in an order drawn with a secret seed per run, so that
a model cannot read each next character off the context after it. It also measures the
validation split's names, which decide no point: a model that knows them far better than the
held-out names was trained on them (the failed run's message says so), one that knows the
held-out names far better than them was trained on those.

The model is the notebook's read-only ``MLPLanguageModel`` on the student's ``Embedding``
(``manual_seed(0)`` first, as unit 11 seeds ``build_model()``): a wrong ``Embedding`` trains
a worse model, which the message names as a cause to check. A held-out NLL below
``NLL_IMPLAUSIBLE`` (far below what training on the course's names reaches) or far below the
validation NLL passes and is flagged for an instructor's review (``carried``): a model
trained on the held-out names themselves, which are public (the ``names`` package).

Measured on the reference (``train`` of the source notebook: Adam at 3e-3, batches of 64,
10 epochs; minitorch_ref at one thread, seeds 0-2): held-out NLL 2.038, 2.047, 2.041
(validation 2.073, 2.075, 2.064), 4.2-4.4 s of CPU time for the training. The threshold leaves
0.1 above the worst of them: two epochs reach 2.182, the bigram's counts 2.345, a model trained
on the validation split alone 2.323 (its validation NLL 2.027: a gap of 0.30, where the
reference's held-out NLL lies 0.02-0.04 below its validation NLL). Flagged: 25 epochs level
off at 2.060; the held-out names added to the training samples reach 1.912 in 10 epochs (0.16
below their validation NLL), 1.803 in 25; trained on them alone, 2.021 (0.33 below).
"""
from __future__ import annotations

import math
import secrets
from functools import cache
from typing import Callable

import numpy as np
from scipy.special import log_softmax

from autograder import held_out
from autograder.checks import graded_training
from autograder.checks.graded_training import Measured, Run, Training
from autograder.remote.channel import Channel
from autograder.sandbox import call
from course.datasets import load_names
from course.testing.failure import fail
from minitorch_ref.data import CharTokenizer, context_windows

BLOCK_SIZE = 3
TIME_BUDGET = 20.0     # CPU seconds: the model's construction, train(), eval() and the predictions
NLL_THRESHOLD = 2.15   # on the held-out names (the reference: 2.04-2.05)
NLL_IMPLAUSIBLE = 1.95  # below: flagged for review (25 epochs reach 2.06, with the held-out names 1.91)
MEMORISED_GAP = 0.15   # held-out NLL this far from the validation NLL: trained on one of them
HISTORY_KEYS = frozenset({"train_loss", "val_loss"})
FASTER = "use fewer epochs or larger mini-batches"


@cache
def names_tokenizer() -> CharTokenizer:
    """The reference's tokenizer of the training names (27 tokens, the boundary first)."""
    return CharTokenizer(load_names().train)


def vocab_size() -> int:
    return names_tokenizer().vocab_size


@cache
def _splits() -> dict[str, np.ndarray]:
    """The (context, next token) samples of the training and validation names and of the
    held-out names (in their order), as the reference makes them."""
    words, arrays = load_names(), {}
    for split, suffix in ((words.train, ""), (words.val, "_val"),
                          (held_out.held_out_names(), "_held_out")):
        arrays["X" + suffix], arrays["y" + suffix] = context_windows(split, names_tokenizer(),
                                                                       BLOCK_SIZE)
    return arrays


def samples(seed: int | None = None) -> dict[str, np.ndarray]:
    """The run's samples: the held-out contexts shuffled with ``seed`` (a fresh secret one if
    None), so that their order gives no context's next character away."""
    arrays = dict(_splits())
    order = np.random.default_rng(secrets.randbits(128) if seed is None else seed).permutation(
        len(arrays["y_held_out"]))
    arrays["X_held_out"], arrays["y_held_out"] = arrays["X_held_out"][order], arrays["y_held_out"][order]
    return arrays


def _build(kernel: dict) -> object:
    call("manual_seed(0)", kernel["manual_seed"], 0)
    return call(f"MLPLanguageModel({vocab_size()})", kernel["MLPLanguageModel"], vocab_size())


def mean_nll(logits: np.ndarray, targets: np.ndarray) -> float:
    """The mean negative log-likelihood of ``targets`` (N,) under ``logits`` (N, V)."""
    with np.errstate(all="ignore"):
        return float(-log_softmax(logits.astype(np.float64), axis=1)[np.arange(len(targets)),
                                                                      targets].mean())


def _measure(run: Measured) -> tuple[float, dict]:
    """The NLL on the held-out names (the score) and on the validation names."""
    nll = {}
    for split in ("_held_out", "_val"):
        targets = run.arrays["y" + split]
        nll[split] = mean_nll(run.outputs("X" + split, (len(targets), vocab_size()))[1], targets)
    names = len(held_out.held_out_names())
    return nll["_held_out"], dict(graded_nll=nll["_held_out"], val_nll=nll["_val"],
                                  graded_on=f"the grader's {names:,} held-out names")


TRAINING = Training(names=("MLPLanguageModel", "train", "manual_seed"), build=_build,
                    inputs=samples, sent=("X", "y", "X_val", "X_held_out"), measure=_measure,
                    budget=TIME_BUDGET, history_keys=HISTORY_KEYS, keyed_on=("train",),
                    faster=FASTER)
TRAINING_LIMIT = TRAINING.limit


def graded_run(channel: Channel, cpu: Callable[[], float], wall: float = math.inf) -> Run:
    """Train the notebook's ``MLPLanguageModel`` with its ``train()``, from outside."""
    return graded_training.graded_run(TRAINING, channel, cpu, wall)


def carried(run: Run, floor: float = NLL_IMPLAUSIBLE) -> str | None:
    """Why a run looks trained on the held-out names themselves (they are public): an NLL on
    them below ``floor`` (the unit's: ``NLL_IMPLAUSIBLE`` here), or ``MEMORISED_GAP`` below the
    validation names'; None if neither."""
    validation = run.figures.get("val_nll", math.nan)
    if run.score < floor:
        found = f"below {floor:.2f}, lower than the notebook's model reaches"
    elif validation - run.score > MEMORISED_GAP:
        found = f"far below the validation names' {validation:.3f}"
    else:
        return None
    return (f"the NLL on the held-out names, {run.score:.3f}, is {found}: check whether train() "
            "or the model carries the held-out names (the `names` package's lists).")


def language_model(run: Run) -> str | None:
    """``grade-language-model``: a history came back, the run kept to the CPU budget, and the
    trained model's NLL on the grader's held-out names is at most ``NLL_THRESHOLD``; a reason
    for review (the points stand) if it is implausibly low."""
    graded_training.within_budget(run, TIME_BUDGET, f"MLPLanguageModel({vocab_size()}), train() "
                                  "and the predictions", FASTER)
    below_threshold(run, NLL_THRESHOLD, "Train longer or with a larger learning rate (Adam at "
                    "3e-3, batches of 64 and 10 epochs reach about 2.05); if the loss barely "
                    "falls, check your Embedding's own cells: the model trains with it.")
    return carried(run)


def below_threshold(run: Run, threshold: float, longer: str) -> None:
    """The run's NLL on the held-out names is at most ``threshold``; else the failure says why:
    the validation names known far better (trained on them), or ``longer`` (how to train better)."""
    if run.score <= threshold:
        return
    validation = run.figures.get("val_nll", math.nan)
    if run.score - validation > MEMORISED_GAP:
        cause = (f"Likely mistake: its NLL on the validation names is {validation:.3f}, far "
                 "below the held-out names': it was trained on the validation split. Train on "
                 "the X and y that train() is given; the validation split only measures.")
    else:
        cause = longer
    fail(f"The trained model's NLL on {run.figures.get('graded_on', 'the held-out names')} is "
         f"{run.score:.3f}; these points need at most {threshold:.2f}. {cause}")
