"""Checks of unit 9's training loop: ``train_epoch``, ``evaluate`` and ``fit``.

The student's function drives a network, loss and SGD of the notebook's own classes
(passed to the check with the function) wrapped in spies (``_spies``), over a list of
batches of 4, 4 and 2 samples, so that a plain mean of the batch losses differs from
the epoch's mean. The checks read the log:
the mode at every forward pass, one zero_grad before each backward, one step per
batch, nothing but forward passes in evaluation, and the returned numbers are
recomputed from the losses the loop itself was given.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import kept_call
from autograder.checks._spies import LR, Run, network, weighted_mean
from course.testing.compare import expect_close
from course.testing.diagnose import close
from course.testing.failure import expect, fail
from autograder.registry import check
from autograder.sandbox import call
from minitorch_ref import nn, optim, training

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
    """The student's epoch from eval mode with stale gradients of 1, as a previous epoch
    followed by an evaluation would leave them."""
    run.double.prepare(False, 1.0)
    result = call("train_epoch(model, loader, criterion, optimizer)", train_epoch,
                  run.model, run.loader, run.criterion, run.optimizer)
    return _pair("train_epoch", result)


def _expect_batch_steps(run: Run) -> None:
    """Per batch: forward in training mode, zero_grad, both backwards, then one step."""
    names, batches = run.names(), run.batches()
    expect(all(c.training for c in run.log if c.name == "model.forward"),
           "a forward pass ran in evaluation mode: call model.train() before the first batch "
           "(evaluate() leaves the model in eval mode).")
    steps = names.count("optimizer.step")
    expect(steps == batches, f"the optimizer stepped {steps} times over {batches} batches: one "
           "optimizer step per batch, after that batch's backward pass.")
    start = 0
    for step in (i for i, name in enumerate(names) if name == "optimizer.step"):
        batch = names[start:step]
        expect("model.backward" in batch, f"the calls before a step were {batch}: backpropagate "
               "(model.backward(criterion.backward())) before optimizer.step().")
        backward = batch.index("model.backward")
        zeroed = [i for i, name in enumerate(batch) if name in ZERO_GRAD]
        expect(zeroed, "no zero_grad() in the loop: gradients accumulate from batch to batch. "
               "Call optimizer.zero_grad() before each backward pass.")
        expect(min(zeroed) < backward, "zero_grad() came after backward, before step(): it "
               "erased the gradients just computed. Call zero_grad() before backward.")
        start = step + 1


def _expect_trained_like_reference(run: Run) -> None:
    twin = network(run.seed)
    loader = [(run.X[i:i + run.batch_size], run.y[i:i + run.batch_size])
              for i in range(0, run.n, run.batch_size)]
    training.train_epoch(twin, nn.CrossEntropyLoss(), optim.SGD(twin.parameters(), lr=LR), loader)
    expected = [p.data for p in twin.parameters()]
    for k, (got, expected) in enumerate(zip(run.parameters(), expected)):
        expect_close(f"parameter {k} after train_epoch", got, expected,
                     "one SGD step per batch of the usual loop")


@check
def train_epoch_steps(train_epoch, Sequential=None, Linear=None, ReLU=None,
                      CrossEntropyLoss=None, SGD=None):
    """model.train(), then per batch forward, loss, zero_grad, backward, step; the parameters
    end where the reference loop puts them."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD))
    _train(train_epoch, run)
    _expect_batch_steps(run)
    _expect_trained_like_reference(run)


@check
def train_epoch_metrics(train_epoch, Sequential=None, Linear=None, ReLU=None,
                        CrossEntropyLoss=None, SGD=None):
    """(mean loss, accuracy) over the epoch's samples: batch losses weighted by batch size."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD), n=10, batch_size=4)
    loss, accuracy = _train(train_epoch, run)
    calls = [c for c, _ in run.losses()]
    mean, share = weighted_mean(calls)
    losses = np.array([float(c.result) for c in calls])
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
    counts = [int(np.sum(c.args[0].argmax(axis=1) == c.args[1])) for c in calls]
    expect(close(accuracy, share) or not close(accuracy, sum(counts)),
           f"train_epoch returned the accuracy {accuracy:g}: the number of correct predictions. "
           f"Return the share, between 0 and 1 (expected {share:g}).")
    expect_close("the accuracy returned by train_epoch", accuracy, share,
                 "correct predictions over all samples, from each batch's logits")


@check
def evaluate_mode(evaluate, Sequential=None, Linear=None, ReLU=None,
                  CrossEntropyLoss=None, SGD=None):
    """Eval mode for the forward pass; no backward, step or zero_grad; gradients and weights
    untouched; the loss and accuracy of the eval-mode network."""
    run = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD), n=12)
    run.double.prepare(True, 1.0)
    before = run.parameters()
    loss, accuracy = _pair("evaluate", call("evaluate(model, X, y, criterion)", evaluate,
                                            run.model, run.X.copy(), run.y.copy(), run.criterion))
    names = run.names()
    passes = names.count("model.forward")
    expect(passes == 1, f"evaluate made {passes} forward passes (the calls: {names}); compute "
           "the logits of all of X in one forward pass, model(X).")
    expect(all(not c.training for c in run.log if c.name == "model.forward"),
           "evaluate ran the model in training mode (dropout and batch norm would be active): "
           "call model.eval() first.")
    touched = {"criterion.backward", "model.backward", "model.zero_grad"} & set(names)
    expect(not touched, f"evaluate called {sorted(touched)}: evaluation must leave the "
           "gradients alone; it only runs forward passes.")
    for k, (grad, data, old) in enumerate(zip(run.double.gradients(), run.parameters(), before)):
        expect(bool((grad == 1.0).all()), f"evaluate changed the gradients of parameter {k}.")
        expect(close(data, old, 0, 0), f"evaluate changed parameter {k}.")
    logits = network(run.seed).eval()(run.X)
    expect_close("the loss returned by evaluate", loss, nn.CrossEntropyLoss()(logits, run.y),
                 "the mean loss of the eval-mode network over all of X")
    share = float(np.mean(logits.argmax(axis=1) == run.y))
    expect(close(accuracy, share) or not close(accuracy, share * len(run.y)),
           f"evaluate returned the accuracy {accuracy:g}: the number of correct predictions. "
           f"Return the share, between 0 and 1 (expected {share:g}).")
    expect_close("the accuracy returned by evaluate", accuracy, share, "argmax(logits) == y")


def _fit(fit, run: Run, epochs: int, **kwargs) -> tuple[dict, object]:
    """The history fit returns, and that very object (a handle, graded from outside)."""
    returned, read = kept_call(f"fit(model, train_loader, criterion, optimizer, epochs={epochs}, "
                               "...)", fit, run.model, run.loader, run.criterion, run.optimizer,
                               epochs, **kwargs)
    history = read()
    keys = {"train_loss", "test_loss", "train_acc", "test_acc"}
    expect(isinstance(history, dict) and set(history) == keys, "fit should return a dict with "
           f"all four keys train_loss, test_loss, train_acc, test_acc, got {history!r:.200}")
    return history, returned


@check
def fit_history(fit, Sequential=None, Linear=None, ReLU=None,
                CrossEntropyLoss=None, SGD=None):
    """One entry per epoch: the epoch's size-weighted training loss and accuracy, then the
    loss and accuracy on test_data evaluated after that epoch; empty test lists without it."""
    framework = (Sequential, Linear, ReLU, CrossEntropyLoss, SGD)
    run, epochs = Run(framework), 3
    X_test, y_test = run.X[:6] + 0.5, run.y[:6]
    history, _ = _fit(fit, run, epochs, test_data=(X_test, y_test))
    for key, values in history.items():
        expect(isinstance(values, list) and len(values) == epochs, f"history['{key}'] holds "
               f"{values!r:.80} after {epochs} epochs: append one value per epoch.")
    losses = run.losses()
    pattern = ["train" if trained else "test" for _, trained in losses]
    batches = run.batches()
    expect(pattern == (["train"] * batches + ["test"]) * epochs, f"the losses were computed in "
           f"the order {pattern}; expected per epoch {batches} training batches, then one "
           "evaluation on test_data after the epoch's training.")
    for epoch in range(epochs):
        calls = [c for c, _ in losses[(batches + 1) * epoch:(batches + 1) * (epoch + 1)]]
        loss, accuracy = weighted_mean(calls[:-1])
        where = f"epoch {epoch + 1}"
        expect_close(f"history['train_loss'][{epoch}]", history["train_loss"][epoch], loss, where)
        expect_close(f"history['train_acc'][{epoch}]", history["train_acc"][epoch], accuracy, where)
        test_loss, test_accuracy = weighted_mean(calls[-1:])
        expect_close(f"history['test_loss'][{epoch}]", history["test_loss"][epoch], test_loss,
                     where)
        expect_close(f"history['test_acc'][{epoch}]", history["test_acc"][epoch], test_accuracy,
                     where)
    history, _ = _fit(fit, Run(framework, batch_size=5), 2)
    expect(history["test_loss"] == [] and history["test_acc"] == [] and
           len(history["train_loss"]) == 2, f"without test_data fit should return empty test "
           f"lists and 2 training values, got {history!r:.200}")


@check
def fit_callbacks(fit, Sequential=None, Linear=None, ReLU=None,
                  CrossEntropyLoss=None, SGD=None):
    """The scheduler steps once per epoch after its optimizer steps; callback(history) is
    called after every epoch with the dict fit returns; training batches run in train mode."""
    run, epochs = Run((Sequential, Linear, ReLU, CrossEntropyLoss, SGD)), 3
    scheduler = call("a scheduler", run.double.scheduler)
    callback = call("a callback", run.double.callback)
    _, returned = _fit(fit, run, epochs, test_data=(run.X[:6], run.y[:6]), scheduler=scheduler,
                       callback=callback)
    order = [c.who for c in run.log if c.method == "step"]
    batches = run.batches()
    steps = [who for who in order if who != "callback"]
    expect(steps == (["optimizer"] * batches + ["scheduler"]) * epochs, f"the optimizer and "
           f"scheduler steps came in the order {steps}; the scheduler steps once per epoch, "
           "after that epoch's optimizer steps.")
    expect(order == (["optimizer"] * batches + ["scheduler", "callback"]) * epochs,
           f"the steps and callbacks came in the order {order}: call callback(history) after "
           "the scheduler's step, so that a callback reading the learning rate sees the next "
           "epoch's (steps 3 and 4 in this order).")
    seen = run.double.histories(returned)
    expect([n for _, n in seen] == list(range(1, epochs + 1)), "callback(history) should be "
           f"called once after every epoch; it saw histories of lengths {[n for _, n in seen]}.")
    expect(all(same for same, _ in seen), "callback should receive the history dict that "
           "fit returns (the same object, updated), not a copy.")
    expect(all(c.training for c, trained in run.losses() if trained), "a training batch after "
           "an evaluation ran in evaluation mode: train_epoch must call model.train().")
