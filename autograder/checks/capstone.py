"""Unit 11's graded run, done by the grader: the student's ``build_model()`` trained by their
``train()`` on the training split, timed and evaluated from outside the kernel.

The notebook's two graded cells (``grade-budget``, ``grade-accuracy``) run the same
training in the kernel, where the student sees it; but there the clock, ``expect`` and the
cached run are the student's to replace. Here the training arrays are the grader's own
(sent as data); the time is the CPU time of the kernel's processes, read by the grader from
the job's control group (without one, in ``/proc``: ``autograder.pipeline.sandbox.kernel_cpu``)
before the first call and after the last answer, so it covers the whole session: ``build_model()``, ``train()``, ``eval()`` and the
predictions, and work moved out of ``train()`` into ``eval()`` or the forward pass is counted;
and the accuracy comes from the logits the trained model returns for the grader's held-out
images (``autograder.held_out``: 1,000 digits no notebook has, shuffled and perturbed with a
secret seed), so a model that learned or looked up the notebook's own test images gains
nothing. The run is then written into the notebook's cache (``_submission``), with the
model's predictions for the notebook's test images, so the cells that follow show these
figures and do not train again. The run itself is ``autograder.checks.graded_training``'s,
which unit 14 uses too; this module says what unit 11's run is and judges its two cells.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from autograder.checks import graded_training
from autograder.checks.graded_training import Measured, Run, Training, trained
from autograder.held_out import held_out
from autograder.remote.channel import Channel
from autograder.sandbox import call
from course.datasets import load_mnist
from course.testing.failure import expect

TIME_BUDGET = 20.0    # CPU seconds: build_model, train, eval and predicting (as the notebook says)
HISTORY_KEYS = frozenset({"train_loss", "train_acc", "test_loss", "test_acc"})
BUDGET_ACCURACY, FULL_ACCURACY = 0.85, 0.90
FASTER = "use fewer epochs, a narrower first layer or larger mini-batches"


def _inputs() -> dict[str, np.ndarray]:
    X_train, X_test, y_train, y_test = load_mnist()
    X_held, y_held = held_out()
    return {"X": X_train, "y": y_train, "X_held_out": X_held, "y_held_out": y_held,
            "X_test": X_test, "y_test": y_test}


def _build(kernel: dict) -> object:
    call("manual_seed(0)", kernel["manual_seed"], 0)
    return call("build_model()", kernel["build_model"])


def _measure(run: Measured) -> tuple[float, dict]:
    """The accuracy on the held-out images; the record of the notebook's cache, with the
    model's predictions for the notebook's own test images."""
    y_held, y_test = run.arrays["y_held_out"], run.arrays["y_test"]
    accuracy = float(np.mean(run.outputs("X_held_out", (len(y_held), 10))[1].argmax(axis=1)
                             == y_held))
    logits, test = run.outputs("X_test", (len(y_test), 10))
    y_pred = test.argmax(axis=1)
    return accuracy, dict(logits=logits, y_pred=y_pred, test_accuracy=float(np.mean(y_pred == y_test)),
                          graded_accuracy=accuracy,
                          graded_on=f"the grader's {len(y_held):,} held-out images")


TRAINING = Training(names=("build_model", "train", "manual_seed"), build=_build, inputs=_inputs,
                    sent=("X", "y", "X_held_out", "X_test"), measure=_measure,
                    budget=TIME_BUDGET, history_keys=HISTORY_KEYS,
                    keyed_on=("build_model", "train"), faster=FASTER)
TRAINING_LIMIT = TRAINING.limit   # past it the run is stopped (computing or waiting)


def graded_run(channel: Channel, cpu: Callable[[], float], wall: float = math.inf) -> Run:
    """Train the kernel's ``build_model()`` with its ``train()``, from outside: the run
    (``graded_training.graded_run`` of ``TRAINING``)."""
    return graded_training.graded_run(TRAINING, channel, cpu, wall)


def budget(run: Run) -> None:
    """``grade-budget``: a history came back, the run kept to the CPU budget, 85% on the
    held-out images."""
    graded_training.within_budget(run, TIME_BUDGET, "build_model(), train() and the predictions",
                                  FASTER)
    expect(run.score >= BUDGET_ACCURACY, f"The accuracy on the grader's held-out images is "
           f"{run.score:.1%}; these 5 points need at least 85%. Check the basics: logits "
           "out, model.train() while training, a learning rate around 1e-3 for Adam, several "
           "epochs.")


def accuracy(run: Run) -> None:
    """``grade-accuracy``: 90% on the held-out images."""
    trained(run)
    expect(run.score >= FULL_ACCURACY, f"The accuracy on the grader's held-out images is "
           f"{run.score:.1%}; these 8 points need at least 90%. A hidden layer of 100 or "
           "more units with ReLU, Adam and 5 to 10 epochs gets there.")
