"""Checks of unit 9's training loop: ``train_epoch``, ``evaluate`` and ``fit``, judged by what
they compute.

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
from autograder.checks._calls import kept_call
from autograder.checks._spies import (
    HISTORY_KEYS, LR, Run, Twin, expect_same_parameters,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close
from course.testing.failure import expect

ZERO_GRAD = ("optimizer.zero_grad", "model.zero_grad")
EPOCHS = 3


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


def _fit(fit, run: Run, epochs: int, **kwargs) -> tuple[dict, object]:
    """The history fit returns (one value per epoch in each of its lists), and that very
    object (a handle, graded from outside)."""
    returned, read = kept_call(f"fit(model, train_loader, criterion, optimizer, epochs={epochs}, "
                               "...)", fit, run.model, run.loader, run.criterion, run.optimizer,
                               epochs, **kwargs)
    history = read()
    expect(isinstance(history, dict) and set(HISTORY_KEYS) <= set(history), "fit should return "
           f"a dict with all four keys train_loss, test_loss, train_acc, test_acc, got "
           f"{history!r:.200}")
    tested = kwargs.get("test_data") is not None
    for key in HISTORY_KEYS:
        values, expected = history[key], epochs if tested or key.startswith("train") else 0
        expect(isinstance(values, list) and len(values) == expected, f"history['{key}'] holds "
               f"{values!r:.80} after {epochs} epochs{'' if tested else ' without test_data'}: "
               f"{'append one value per epoch' if expected else 'it stays empty'}.")
    return history, returned


def _order_mistake(run: Run) -> str | None:
    """What the log says went wrong in the order of an epoch's parts, if it says anything."""
    batches, losses = len(run.batches), run.losses()
    if not all(c.training for c, trained in losses if trained):
        return ("Likely mistake: a training batch after an evaluation ran in evaluation mode: "
                "train_epoch must call model.train().")
    pattern = ["train" if trained else "test" for _, trained in losses]
    if pattern != (["train"] * batches + ["test"]) * EPOCHS:
        return (f"Likely mistake: the losses were computed in the order {pattern}; expected per "
                f"epoch {batches} training batches, then one evaluation on test_data after the "
                "epoch's training.")
    steps = [c.who for c in run.log if c.method == "step" and c.who != "callback"]
    if "scheduler" in steps and steps != (["optimizer"] * batches + ["scheduler"]) * EPOCHS:
        return (f"Likely mistake: the optimizer and scheduler steps came in the order {steps}; "
                "the scheduler steps once per epoch, after that epoch's optimizer steps.")
    return None


def _expect_history(history: dict, expected: dict, where: str) -> None:
    for key in HISTORY_KEYS:
        for epoch, value in enumerate(expected[key]):
            expect_close(f"history['{key}'][{epoch}]", history[key][epoch], value,
                         f"epoch {epoch + 1} {where}")


@check(hears=("log",))
def fit_history(fit, Sequential=None, Linear=None, ReLU=None,
                CrossEntropyLoss=None, SGD=None):
    """One entry per epoch: the epoch's size-weighted training loss and accuracy, then the
    loss and accuracy on test_data evaluated after that epoch, as the reference's fit from
    the same start; empty test lists without test_data."""
    framework = (Sequential, Linear, ReLU, CrossEntropyLoss, SGD)
    run = Run(framework)
    test_data = (run.X[:6] + 0.5, run.y[:6])
    history, _ = _fit(fit, run, EPOCHS, test_data=test_data)
    with testimony.explain(lambda: _order_mistake(run)):
        _expect_history(history, Twin(run).fit(EPOCHS, test_data), "of fit")
    run = Run(framework, batch_size=5)
    history, _ = _fit(fit, run, 2)
    _expect_history(history, Twin(run).fit(2), "of fit without test_data")


@check(hears=("log",))
def fit_callbacks(fit, Sequential=None, Linear=None, ReLU=None,
                  CrossEntropyLoss=None, SGD=None):
    """With a scheduler that halves the learning rate and a callback that writes the rate it
    sees into the history: the history and weights of the reference's fit, the scheduler
    stepped once per epoch after its optimizer steps, then callback(history), with the dict
    fit returns."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD))
    scheduler = call("a scheduler", run.double.scheduler)
    callback = call("a callback", run.double.callback)
    test_data = (run.X[:6], run.y[:6])
    history, _ = _fit(fit, run, EPOCHS, test_data=test_data, scheduler=scheduler,
                      callback=callback)
    twin = Twin(run)
    expected = twin.fit(EPOCHS, test_data, scheduler=True, callback=True)
    with testimony.explain(lambda: _order_mistake(run)):
        _expect_history(history, expected, "of fit with a scheduler")
        expect_same_parameters("fit", run, twin, f"{EPOCHS} epochs, the rate halved after each")
    rates = history.get("lr")
    expect(isinstance(rates, list), "callback(history) should be called after every epoch with "
           "the history dict that fit returns (the same object, updated), not a copy: the test "
           "callback writes the learning rate it sees into history['lr'], and the history fit "
           "returned has no such list.")
    expect(len(rates) == EPOCHS, f"callback(history) should be called once after every epoch; "
           f"it was called {len(rates)} times in {EPOCHS} epochs.")
    expect(close(np.array(rates, dtype=float), expected["lr"]), f"the callback saw the "
           f"learning rates {rates}, expected {expected['lr']}: call callback(history) after the "
           "scheduler's step, so that a callback reading the learning rate sees the next "
           f"epoch's (it starts at {LR} and halves after every epoch).")
