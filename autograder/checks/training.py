"""Checks of unit 9's training loop: ``train_epoch`` and ``evaluate``, judged by what they
compute (``fit``'s checks: ``training_fit``).

The student's function drives a network, loss and SGD of the notebook's own classes (passed
to the check with the function) wrapped in spies (``_spies``), over batches of 4, 4 and 2
samples, so that a plain mean of the batch losses differs from the epoch's mean. A point
comes from values only: the weights after the loop and the numbers it returned, against the
reference's run from the same start (``_spies.Twin``). The network holds a dropout-like
gate, so a forward pass in the wrong mode changes both. The spies' log is the kernel's
testimony: it names the likely mistake once the values have failed (``testimony.explain``),
and a loop whose values are right passes however it got there (``optimizer.step();
optimizer.zero_grad()`` at the end of each batch, PyTorch's idiom, included).
"""
from __future__ import annotations

import numpy as np

from autograder import testimony
from autograder.checks._spies import Run, Twin, expect_same_parameters
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close
from course.testing.failure import expect

ZERO_GRAD = ("optimizer.zero_grad", "model.zero_grad")


def _pair(what: str, result: object) -> tuple[float, float]:
    expect(isinstance(result, tuple) and len(result) == 2,
           f"{what} should return a tuple (loss, accuracy), got {result!r:.100}.")
    for name, value in zip(("loss", "accuracy"), result):
        expect(isinstance(value, (float, np.floating)), f"{what} returned the {name} as "
               f"{type(value).__name__} {value!r:.60}; return a Python float, e.g. float(loss), "
               "so that the history holds plain numbers, not arrays.")
    return float(result[0]), float(result[1])


def _train(train_epoch, run: Run) -> tuple[float, float]:
    result = call("train_epoch(model, loader, criterion, optimizer)", train_epoch,
                  run.model, run.loader, run.criterion, run.optimizer)
    return _pair("train_epoch", result)


def _step_mistake(run: Run) -> str | None:
    """What the log says went wrong in the steps of an epoch, if it says anything."""
    log = run.log
    names, batches = [c.name for c in log], len(run.batches)
    if not all(c.training for c in log if c.name == "model.forward"):
        return ("Likely mistake: a forward pass ran in evaluation mode: call model.train() "
                "before the first batch (evaluate() leaves the model in eval mode).")
    steps = names.count("optimizer.step")
    if steps != batches:
        return (f"Likely mistake: the optimizer stepped {steps} times over {batches} batches: "
                "one optimizer step per batch, after that batch's backward pass.")
    if not any(name in ZERO_GRAD for name in names):
        return ("Likely mistake: no zero_grad() in the loop: gradients accumulate from batch to "
                "batch. Call optimizer.zero_grad() before each backward pass.")
    start = 0
    for step in (i for i, name in enumerate(names) if name == "optimizer.step"):
        batch, start = names[start:step], step + 1
        if "model.backward" not in batch:
            return (f"Likely mistake: the calls before a step were {batch}: backpropagate "
                    "(model.backward(criterion.backward())) before optimizer.step().")
        if any(name in ZERO_GRAD for name in batch[batch.index("model.backward"):]):
            return ("Likely mistake: zero_grad() came after backward, before step(): it erased "
                    "the gradients just computed. Call zero_grad() before backward.")
    return None


@check(hears=("log",))
def train_epoch_steps(train_epoch, Sequential=None, Linear=None, ReLU=None,
                      CrossEntropyLoss=None, SGD=None):
    """The weights after one epoch from evaluation mode (as evaluate() leaves the model) are
    the reference loop's: model.train(), then per batch forward, loss, zero_grad, backward,
    step."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD), training=False)
    _train(train_epoch, run)
    twin = Twin(run)
    twin.epoch()
    with testimony.explain(lambda: _step_mistake(run)):
        expect_same_parameters("train_epoch", run, twin, "one epoch of 3 batches from "
                               "evaluation mode: model.train(), then one SGD step per batch")


@check
def train_epoch_metrics(train_epoch, Sequential=None, Linear=None, ReLU=None,
                        CrossEntropyLoss=None, SGD=None):
    """(mean loss, accuracy) over the epoch's samples: batch losses weighted by batch size.
    The learning rate is 0, so every batch meets the starting weights whatever the steps do:
    this check grades the numbers, train_epoch_steps the steps."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD), lr=0.0, training=True)
    loss, accuracy = _train(train_epoch, run)
    twin = Twin(run)
    scores = np.array([twin.scores(xb, yb, True) for xb, yb in run.batches])
    sizes = np.array([len(yb) for _, yb in run.batches])
    mean, share = float(sizes @ scores[:, 0] / run.n), float(sizes @ scores[:, 1] / run.n)
    losses = scores[:, 0]
    mistakes = {
        "the plain mean of the batch losses; the last batch has 2 samples, the others 4: "
        "weight each batch's loss by its size, sum(B_b * L_b) / N.": losses.mean(),
        "the loss of the last batch; return the mean over the epoch.": losses[-1],
        "the sum of the batch losses; divide the size-weighted sum by the number of samples.":
            losses.sum(),
    }
    for message, wrong in mistakes.items():
        expect(close(loss, mean) or not close(loss, wrong),
               f"train_epoch returned the mean loss {loss:.6g}, expected {mean:.6g}.\n"
               f"  Likely mistake: {message}")
    expect_close("the mean loss returned by train_epoch", loss, mean, "sum(B_b * L_b) / N")
    expect(close(accuracy, share) or not close(accuracy, share * run.n),
           f"train_epoch returned the accuracy {accuracy:g}: the number of correct predictions. "
           f"Return the share, between 0 and 1 (expected {share:g}).")
    expect_close("the accuracy returned by train_epoch", accuracy, share,
                 "correct predictions over all samples, from each batch's logits")


@check
def evaluate_mode(evaluate, Sequential=None, Linear=None, ReLU=None,
                  CrossEntropyLoss=None, SGD=None):
    """The loss and accuracy of the network in evaluation mode over all of X, from training
    mode with gradients of 1; the gradients and weights untouched."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD), n=12, training=True, grad=1.0)
    before = run.parameters()
    loss, accuracy = _pair("evaluate", call("evaluate(model, X, y, criterion)", evaluate,
                                            run.model, run.X.copy(), run.y.copy(), run.criterion))
    for k, (grad, data, old) in enumerate(zip(run.double.gradients(), run.parameters(), before)):
        expect(bool((grad == 1.0).all()), f"evaluate changed the gradients of parameter {k} "
               "(they were 1 before): evaluation must leave the gradients alone; it only runs "
               "forward passes, no backward and no zero_grad.")
        expect(close(data, old, 0, 0), f"evaluate changed parameter {k}: it only runs forward "
               "passes, no step.")
    twin = Twin(run)
    trained_loss, _ = twin.scores(run.X, run.y, True)
    expected_loss, share = twin.evaluate(run.X, run.y)
    expect(close(loss, expected_loss) or not close(loss, trained_loss), "evaluate returned the "
           "loss of the network in training mode (dropout and batch norm would be active): "
           "call model.eval() first.")
    expect_close("the loss returned by evaluate", loss, expected_loss,
                 "the mean loss of the eval-mode network over all of X")
    expect(close(accuracy, share) or not close(accuracy, share * len(run.y)),
           f"evaluate returned the accuracy {accuracy:g}: the number of correct predictions. "
           f"Return the share, between 0 and 1 (expected {share:g}).")
    expect_close("the accuracy returned by evaluate", accuracy, share, "argmax(logits) == y")
