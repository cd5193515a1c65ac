"""Unit 14's graded run, done by the grader: the notebook's ``MLPLanguageModel`` trained by the
student's ``train(model, X, y)``, timed and measured from outside the kernel
(``autograder.checks.graded_training``, as unit 11's).

The grader makes the (context, next character) samples itself, with the reference's tokenizer
and windows of 3 (``minitorch_ref.data``), so a mistake in the student's ``context_windows``
costs that cell only; it sends the training split's samples to ``train`` and measures the
trained model's mean negative log-likelihood on the test split's 516 names, which no cell of
the notebook trains on or chooses anything by, and on the validation split's, which only
tells a failed run why: a model that knows the validation names far better than names it
never saw was trained on them.

The model is the notebook's read-only ``MLPLanguageModel`` on the student's ``Embedding``
(``manual_seed(0)`` first, as unit 11 seeds ``build_model()``): a wrong ``Embedding`` trains
a worse model, which the message names as a cause to check.

Measured on the reference (``train`` of the source notebook: Adam at 3e-3, batches of 64,
10 epochs; minitorch_ref at one thread, seeds 0-2): test NLL 2.073, 2.108, 2.110 (validation
2.023, 2.067, 2.050), 2.7 s of CPU time for the training. The threshold leaves 0.1 above the
worst of them: two epochs reach 2.239, the bigram's counts 2.4, a model trained on the
validation split alone 2.345 (its validation NLL 2.026: a gap of 0.32, where the reference's
test NLL lies 0.04-0.06 above its validation NLL).
"""
from __future__ import annotations

import math
from functools import cache
from typing import Callable

import numpy as np
from scipy.special import log_softmax

from autograder.checks import graded_training
from autograder.checks.graded_training import Measured, Run, Training
from autograder.remote.channel import Channel
from autograder.sandbox import call
from course.datasets import load_names
from course.testing.failure import fail
from minitorch_ref.data import CharTokenizer, context_windows

BLOCK_SIZE = 3
TIME_BUDGET = 20.0     # CPU seconds: the model's construction, train(), eval() and the predictions
NLL_THRESHOLD = 2.20   # on the test names (the reference: 2.07-2.11)
MEMORISED_GAP = 0.15   # test NLL this far above the validation NLL: trained on the validation names
HISTORY_KEYS = frozenset({"train_loss", "val_loss"})
FASTER = "use fewer epochs or larger mini-batches"


@cache
def names_tokenizer() -> CharTokenizer:
    """The reference's tokenizer of the training names (27 tokens, the boundary first)."""
    return CharTokenizer(load_names().train)


def vocab_size() -> int:
    return names_tokenizer().vocab_size


@cache
def _samples() -> dict[str, np.ndarray]:
    """The three splits' (context, next token) samples, as the reference makes them."""
    words, arrays = load_names(), {}
    for split, suffix in ((words.train, ""), (words.val, "_val"), (words.test, "_test")):
        arrays["X" + suffix], arrays["y" + suffix] = context_windows(split, names_tokenizer(),
                                                                       BLOCK_SIZE)
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
    """The NLL on the test names (the score) and on the validation names."""
    nll = {}
    for split in ("_test", "_val"):
        targets = run.arrays["y" + split]
        nll[split] = mean_nll(run.outputs("X" + split, (len(targets), vocab_size()))[1], targets)
    names = len(load_names().test)
    return nll["_test"], dict(graded_nll=nll["_test"], val_nll=nll["_val"],
                              graded_on=f"the {names} test names (the grader's run)")


TRAINING = Training(names=("MLPLanguageModel", "train", "manual_seed"), build=_build,
                    inputs=_samples, sent=("X", "y", "X_val", "X_test"), measure=_measure,
                    budget=TIME_BUDGET, history_keys=HISTORY_KEYS, keyed_on=("train",),
                    faster=FASTER)
TRAINING_LIMIT = TRAINING.limit


def graded_run(channel: Channel, cpu: Callable[[], float], wall: float = math.inf) -> Run:
    """Train the notebook's ``MLPLanguageModel`` with its ``train()``, from outside."""
    return graded_training.graded_run(TRAINING, channel, cpu, wall)


def language_model(run: Run) -> None:
    """``grade-language-model``: a history came back, the run kept to the CPU budget, and the
    trained model's NLL on the grader's test names is at most ``NLL_THRESHOLD``."""
    graded_training.within_budget(run, TIME_BUDGET, f"MLPLanguageModel({vocab_size()}), train() "
                                  "and the predictions", FASTER)
    below_threshold(run, NLL_THRESHOLD, "Train longer or with a larger learning rate (Adam at "
                    "3e-3, batches of 64 and 10 epochs reach about 2.1); if the loss barely "
                    "falls, check your Embedding's own cells: the model trains with it.")


def below_threshold(run: Run, threshold: float, longer: str) -> None:
    """The run's NLL on the test names is at most ``threshold``; else the failure says why: the
    validation names known far better (trained on them), or ``longer`` (how to train better)."""
    if run.score <= threshold:
        return
    validation = run.figures.get("val_nll", math.nan)
    if run.score - validation > MEMORISED_GAP:
        cause = (f"Likely mistake: its NLL on the validation names is {validation:.3f}, far "
                 "below the test names': it was trained on the validation split. Train on the "
                 "X and y that train() is given; the validation split only measures.")
    else:
        cause = longer
    fail(f"The trained model's NLL on {run.figures.get('graded_on', 'the test names')} is "
         f"{run.score:.3f}; these points need at most {threshold:.2f}. {cause}")
