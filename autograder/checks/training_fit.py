"""Checks of unit 9's ``fit``, judged on its own work: where it puts what ``train_epoch`` and
``evaluate`` return, and when it steps the scheduler and calls the callback.

``fit`` calls the notebook's ``train_epoch`` and ``evaluate``, whose own cells judge them. So
that a mistake there costs those cells only, fit first runs with stand-ins for both in its
globals (``doubles.Stand``): they return the grader's numbers, chosen for the check (the
training loss plus the optimizer's current rate, so that a scheduler stepped too early shows;
the test numbers of the epochs trained so far, so that an evaluation before training shows;
NaNs when called with other objects than fit was given). The history fit returns, read back
as data, and the rates the callback wrote into it decide. A fit that does not call them (it
repeats their work, or cannot take stand-ins) is judged as before, by a real run against the
reference's loop from the same start; the spies' log only names the likely mistake.
"""
from __future__ import annotations

import numpy as np

from autograder import testimony, verdicts
from autograder.checks._calls import kept_call
from autograder.checks._spies import HISTORY_KEYS, LR, Run, Twin, expect_same_parameters
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, expect

EPOCHS = 3
# The cells of the parts fit runs, before fit's in the notebook: a real run of fit is judged
# against the reference's loop only where they passed.
PARTS = ("train_epoch_steps", "train_epoch_metrics", "evaluate_mode")


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


# ----------------------------------------------------------------------------- stand-ins
class Numbers:
    """The stand-ins' numbers for a run of ``epochs`` epochs (random, the grader's), and the
    history a right fit builds from them."""

    def __init__(self, epochs: int, seed: int) -> None:
        rng = np.random.default_rng(1000 + seed)
        self.epochs = epochs
        self.train = [(float(a), float(b)) for a, b in rng.uniform(0.1, 1, (epochs + 1, 2))]
        self.test = [(float(a), float(b)) for a, b in rng.uniform(2, 3, (epochs + 1, 2))]

    def history(self, halving: bool, tested: bool, shift: int = 0, trained: int = 1) -> dict:
        """The history of a fit that steps a halving scheduler ``shift`` epochs early and
        evaluates after ``trained`` epochs of training (1: after the epoch's own)."""
        def rate(e: int) -> float:
            return LR * 0.5 ** (e + shift) if halving else LR

        history = {"train_loss": [self.train[e][0] + rate(e) for e in range(self.epochs)],
                   "train_acc": [self.train[e][1] for e in range(self.epochs)]}
        for i, key in enumerate(("test_loss", "test_acc")):
            history[key] = [self.test[e + trained][i] for e in range(self.epochs)] if tested else []
        return history


def _stand_in_mistake(history: dict, numbers: Numbers, tested: bool) -> str:
    """What a history that the stand-ins' numbers do not explain likely got wrong."""
    flat = [v for key in HISTORY_KEYS for v in history[key]]
    if not all(v == v for v in flat):
        return ("\n  Likely mistake: train_epoch or evaluate was called with other objects than "
                "fit was given: pass model, train_loader, criterion and optimizer on, and "
                "evaluate(model, X_test, y_test, criterion) with test_data = (X_test, y_test).")
    if tested and _same(history, numbers.history(False, tested, trained=0), "test_loss"):
        return ("\n  Likely mistake: evaluate ran before the epoch's training: evaluate on "
                "test_data after the epoch's training (after train_epoch), so that the history "
                "holds the epoch's result.")
    return ""


def _same(history: dict, expected: dict, key: str) -> bool:
    return close(np.array(history[key], dtype=float), np.array(expected[key], dtype=float))


def _standing_in(fit, run: Run, numbers: Numbers):
    """fit with the stand-ins in its globals while it runs (a failure if it cannot take them)."""
    return call("fit, with stand-ins for train_epoch and evaluate", run.double.standing_in,
                fit, numbers.train, numbers.test)


STOOD_IN = "with stand-ins for train_epoch and evaluate that return the grader's numbers"


def _history_on_its_own(fit, run: Run, epochs: int, test_data=None) -> None:
    """The whole history of fit with the stand-ins: their numbers, where a right fit puts them."""
    numbers = Numbers(epochs, run.seed)
    history, _ = _fit(_standing_in(fit, run, numbers), run, epochs, test_data=test_data)
    try:
        _expect_history(history, numbers.history(False, test_data is not None), f"of fit, {STOOD_IN}")
    except CheckFailure as failure:
        hint = _stand_in_mistake(history, numbers, test_data is not None)
        raise CheckFailure(f"{failure}{hint}") from None


def _stood_in(run: Run) -> bool:
    """Whether fit called the stand-ins (the log: testimony, to choose the message)."""
    return any(c.who in ("train_epoch", "evaluate") for c in run.log)


UNSTOOD = ("\n  (fit called neither train_epoch nor evaluate, so it ran without the grader's "
           "stand-ins; a fit with a loop of its own is judged by a real run against the "
           "reference's once the train_epoch and evaluate cells pass.)")


def _judged(on_its_own, as_written, run: Run, framework: tuple) -> None:
    """``on_its_own()`` (fit with the stand-ins) decides; if it fails, fit passes when
    ``as_written()`` (a real run against the reference) does: a fit that does not call
    train_epoch and evaluate repeats their work. The real run is the reference's only where
    the notebook's train_epoch and evaluate passed their own cells (``PARTS``, their verdicts);
    else the stand-ins' run alone decides. The message is the run's that tells more."""
    try:
        on_its_own()
    except CheckFailure as failure:
        if not all(verdicts.passed(framework[0], cell) for cell in PARTS):
            raise (failure if _stood_in(run) else CheckFailure(f"{failure}{UNSTOOD}")) from None
        try:
            as_written()
        except CheckFailure as other:
            raise (failure if _stood_in(run) else other) from None


# ----------------------------------------------------------------------------- as written
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


def _history_as_written(fit, framework: tuple) -> None:
    run = Run(framework)
    test_data = (run.X[:6] + 0.5, run.y[:6])
    history, _ = _fit(fit, run, EPOCHS, test_data=test_data)
    with testimony.explain(lambda: _order_mistake(run)):
        _expect_history(history, Twin(run).fit(EPOCHS, test_data), "of fit")
    run = Run(framework, batch_size=5)
    history, _ = _fit(fit, run, 2)
    _expect_history(history, Twin(run).fit(2), "of fit without test_data")


@check(hears=("log",))
def fit_history(fit, Sequential=None, Linear=None, ReLU=None,
                CrossEntropyLoss=None, SGD=None):
    """One entry per epoch: the epoch's training loss and accuracy as train_epoch returns
    them, then the loss and accuracy evaluate returns on test_data after that epoch's
    training; empty test lists without test_data (judged with stand-ins for train_epoch and
    evaluate, so that their mistakes cost their own cells)."""
    framework = (Sequential, Linear, ReLU, CrossEntropyLoss, SGD)
    run = Run(framework)

    def on_its_own() -> None:
        _history_on_its_own(fit, run, EPOCHS, test_data=(run.X[:6] + 0.5, run.y[:6]))
        _history_on_its_own(fit, Run(framework, seed=1), 2)
    _judged(on_its_own, lambda: _history_as_written(fit, framework), run, framework)


def _expect_callback(history: dict, expected: np.ndarray) -> None:
    rates = history.get("lr")
    expect(isinstance(rates, list), "callback(history) should be called after every epoch with "
           "the history dict that fit returns (the same object, updated), not a copy: the test "
           "callback writes the learning rate it sees into history['lr'], and the history fit "
           "returned has no such list.")
    expect(len(rates) == EPOCHS, f"callback(history) should be called once after every epoch; "
           f"it was called {len(rates)} times in {EPOCHS} epochs.")
    expect(close(np.array(rates, dtype=float), expected), f"the callback saw the "
           f"learning rates {rates}, expected {expected.tolist()}: call callback(history) after "
           "the scheduler's step, so that a callback reading the learning rate sees the next "
           f"epoch's (it starts at {LR} and halves after every epoch).")


def _callbacks_on_its_own(fit, run: Run) -> None:
    """With the stand-ins: the last epoch trained at the rate halved twice (the scheduler
    stepped after each epoch's training), the rate halved three times after fit, and the
    rates the callback wrote into the history fit returned. The history's other entries are
    fit_history's to judge."""
    numbers = Numbers(EPOCHS, run.seed)
    _, read = kept_call(f"fit(..., epochs={EPOCHS}, scheduler=..., callback=...), {STOOD_IN}",
                        _standing_in(fit, run, numbers), run.model, run.loader, run.criterion,
                        run.optimizer, EPOCHS, **_hooks(run))
    history = read()
    losses = history.get("train_loss") if isinstance(history, dict) else None
    expect(isinstance(losses, list) and losses, f"fit should return the history dict with "
           f"history['train_loss'], one value per epoch, got {history!r:.200}")
    last = numbers.history(True, False)["train_loss"][-1]
    early = numbers.history(True, False, shift=1)["train_loss"][-1]
    expect(not close(losses[-1], early) or close(losses[-1], last), "the last epoch trained at "
           "the rate of the epoch after it: the scheduler stepped before the epoch's training. "
           "Step it once per epoch, after that epoch's train_epoch.")
    expect_close("history['train_loss'][-1]", losses[-1], last, f"the last epoch, {STOOD_IN} "
                 "(the training loss plus the rate it trained at)")
    expect_close(f"the learning rate after fit(..., epochs={EPOCHS})", call(
        "the optimizer's rate", run.double.rate), LR * 0.5**EPOCHS, "the scheduler halves it "
        "once per epoch")
    _expect_callback(history, LR * 0.5 ** np.arange(1, EPOCHS + 1))


def _hooks(run: Run) -> dict:
    return {"scheduler": call("a scheduler", run.double.scheduler),
            "callback": call("a callback", run.double.callback)}


def _callbacks_as_written(fit, framework: tuple) -> None:
    run = Run(framework)
    test_data = (run.X[:6], run.y[:6])
    history, _ = _fit(fit, run, EPOCHS, test_data=test_data, **_hooks(run))
    twin = Twin(run)
    expected = twin.fit(EPOCHS, test_data, scheduler=True, callback=True)
    with testimony.explain(lambda: _order_mistake(run)):
        _expect_history(history, expected, "of fit with a scheduler")
        expect_same_parameters("fit", run, twin, f"{EPOCHS} epochs, the rate halved after each")
    _expect_callback(history, np.array(expected["lr"]))


@check(hears=("log",))
def fit_callbacks(fit, Sequential=None, Linear=None, ReLU=None,
                  CrossEntropyLoss=None, SGD=None):
    """With a scheduler that halves the learning rate and a callback that writes the rate it
    sees into the history: the scheduler stepped once per epoch after its training, then
    callback(history), with the dict fit returns (judged with stand-ins for train_epoch and
    evaluate, so that their mistakes cost their own cells)."""
    framework = (Sequential, Linear, ReLU, CrossEntropyLoss, SGD)
    run = Run(framework)

    _judged(lambda: _callbacks_on_its_own(fit, run),
            lambda: _callbacks_as_written(fit, framework), run, framework)
