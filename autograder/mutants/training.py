"""Unit 9's loop functions with one classic bug each; the correct parts are the source
notebook's own solution (``_solutions``), so each mutant differs from it in one place."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant, Variant
from autograder.mutants._solutions import solution


def _epoch(order: tuple[str, ...] = ("zero_grad", "backward", "step"), train_mode: bool = True,
           reduce: str = "weighted", step_each_batch: bool = True):
    """A train_epoch with the steps of a batch in ``order`` and the losses reduced by ``reduce``."""
    def train_epoch(model, loader, criterion, optimizer):
        if train_mode:
            model.train()
        losses, sizes, correct = [], [], 0
        for xb, yb in loader:
            logits = model(xb)
            losses.append(criterion(logits, yb))
            sizes.append(len(yb))
            correct += int(np.sum(logits.argmax(axis=1) == yb))
            for step in order:
                if step == "zero_grad":
                    optimizer.zero_grad()
                elif step == "backward":
                    model.backward(criterion.backward())
                elif step_each_batch:
                    optimizer.step()
        if not step_each_batch:
            optimizer.step()
        mean = {"weighted": np.dot(losses, sizes) / sum(sizes), "plain": np.mean(losses),
                "last": losses[-1]}[reduce]
        return float(mean), correct / sum(sizes)
    return train_epoch


def evaluate_train_mode(model, X, y, criterion):
    logits = model(X)
    return float(criterion(logits, y)), float(np.mean(logits.argmax(axis=1) == y))


def evaluate_backpropagates(model, X, y, criterion):
    result = solution("evaluate")(model, X, y, criterion)
    model.backward(criterion.backward())
    return result


def evaluate_two_passes(model, X, y, criterion):
    half = len(y) // 2
    losses = [solution("evaluate")(model, X[part], y[part], criterion)
              for part in (slice(None, half), slice(half, None))]
    return tuple(float(np.average(values, weights=[half, len(y) - half]))
                 for values in zip(*losses))


def evaluate_returns_arrays(model, X, y, criterion):
    loss, accuracy = solution("evaluate")(model, X, y, criterion)
    return np.asarray(loss), np.asarray(accuracy)


def evaluate_counts_correct(model, X, y, criterion):
    loss, accuracy = solution("evaluate")(model, X, y, criterion)
    return loss, accuracy * len(y)


def train_epoch(model, loader, criterion, optimizer):
    """What the mutant fits call, looked up in this module's globals when they run, as a
    notebook's fit looks up the notebook's train_epoch (and the grader's stand-ins)."""
    return solution("train_epoch")(model, loader, criterion, optimizer)


def evaluate(model, X, y, criterion):
    return solution("evaluate")(model, X, y, criterion)


def _fit(evaluate_first: bool = False, overwrite: bool = False, scheduler_first: bool = False,
         copy_to_callback: bool = False, callback_first: bool = False):
    """A fit with one of its steps misplaced."""
    def fit(model, train_loader, criterion, optimizer, epochs, test_data=None, scheduler=None,
            callback=None):
        history = {"train_loss": [], "test_loss": [], "train_acc": [], "test_acc": []}
        for _ in range(epochs):
            if scheduler is not None and scheduler_first:
                scheduler.step()
            results = {}
            if test_data is not None and evaluate_first:
                results["test"] = evaluate(model, *test_data, criterion)
            results["train"] = train_epoch(model, train_loader, criterion, optimizer)
            if test_data is not None and not evaluate_first:
                results["test"] = evaluate(model, *test_data, criterion)
            for prefix, (loss, acc) in results.items():
                for key, value in ((f"{prefix}_loss", loss), (f"{prefix}_acc", acc)):
                    history[key] = [value] if overwrite else history[key] + [value]
            if callback is not None and callback_first:
                callback(history)
            if scheduler is not None and not scheduler_first:
                scheduler.step()
            if callback is not None and not callback_first:
                callback(dict(history) if copy_to_callback else history)
        return history
    return fit


MUTANTS = [
    Mutant("train_epoch_no_zero_grad", "train_epoch", _epoch(("backward", "step")),
           "no zero_grad", "gradients accumulate across batches"),
    Mutant("train_epoch_zero_grad_after_backward", "train_epoch",
           _epoch(("backward", "zero_grad", "step")), "after backward",
           "zero_grad between backward and step"),
    Mutant("train_epoch_one_step", "train_epoch", _epoch(step_each_batch=False),
           "one optimizer step per batch", "a single step after the loop"),
    Mutant("train_epoch_no_train_mode", "train_epoch", _epoch(train_mode=False), "model.train()",
           "never switches back to training mode"),
    Mutant("train_epoch_plain_mean", "train_epoch", _epoch(reduce="plain"), "plain mean",
           "mean of the batch losses, ignoring the smaller last batch"),
    Mutant("train_epoch_last_loss", "train_epoch", _epoch(reduce="last"), "last batch",
           "returns the last batch's loss"),
    Mutant("evaluate_train_mode", "evaluate", evaluate_train_mode, "model.eval()",
           "no model.eval()"),
    Mutant("evaluate_backpropagates", "evaluate", evaluate_backpropagates, "leave the gradients",
           "backward pass during evaluation"),
    Mutant("evaluate_counts_correct", "evaluate", evaluate_counts_correct, "the share",
           "accuracy as a count"),
    Mutant("evaluate_returns_arrays", "evaluate", evaluate_returns_arrays, "Python float",
           "returns 0-d arrays"),
    Mutant("fit_evaluates_first", "fit", _fit(evaluate_first=True), "after the epoch's training",
           "evaluation before the epoch"),
    Mutant("fit_overwrites_history", "fit", _fit(overwrite=True), "one value per epoch",
           "history[key] = [value]"),
    Mutant("fit_scheduler_first", "fit", _fit(scheduler_first=True), "before the epoch's training",
           "scheduler stepped at the start of the epoch"),
    Mutant("fit_callback_copy", "fit", _fit(copy_to_callback=True), "not a copy",
           "callback gets a copy of the history"),
    Mutant("fit_callback_before_scheduler", "fit", _fit(callback_first=True),
           "after the scheduler's step", "callback before scheduler.step()"),
]

VARIANTS = [
    Variant("train_epoch_zero_grad_after_step", "train_epoch", _epoch(("backward", "step",
                                                                        "zero_grad")),
            "PyTorch's idiom: optimizer.step(); optimizer.zero_grad() at the end of each batch, "
            "the same weights from the zero gradients an epoch starts with"),
    Variant("evaluate_two_passes", "evaluate", evaluate_two_passes,
            "the logits of X in two halves: the same loss and accuracy; only the spies' count of "
            "forward passes tells, and the kernel's count decides no point (the visible test "
            "asks for one pass)"),
]
