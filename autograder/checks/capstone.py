"""Unit 11's graded run, done by the grader: the student's ``build_model()`` trained by their
``train()`` on the training split, timed and evaluated from outside the kernel.

The notebook's two graded cells (``grade-budget``, ``grade-accuracy``) run the same
training in the kernel, where the student sees it; but there the clock, ``expect`` and the
cached run are the student's to replace. Here the training arrays are the grader's own
(sent as data), the time is the grader's clock around the one request that runs
``train()``, and the test accuracy comes from the logits the trained model returns for the
grader's test images. The run is then written into the notebook's cache (``_submission``),
so the cells that follow show these figures and do not train again.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from autograder.checks._calls import type_name
from autograder.remote import blame
from autograder.remote.channel import Channel, ChannelError
from autograder.remote.proxy import Remote, RemoteError, Session
from autograder.sandbox import TimeLimitExceeded, call
from course.datasets import load_mnist
from course.testing.failure import CheckFailure, expect, fail

TIME_BUDGET = 20.0           # seconds for train(model, X_train, y_train), as the notebook says
TRAINING_LIMIT = 3 * TIME_BUDGET   # past it the run is stopped (computing or waiting)
HISTORY_KEYS = {"train_loss", "train_acc", "test_loss", "test_acc"}
BUDGET_ACCURACY, FULL_ACCURACY = 0.85, 0.90


@dataclass(frozen=True)
class Run:
    """What the grader's run found: ``failure`` if it could not train and evaluate, and what
    is wrong with the history train() returned (None: nothing)."""

    failure: str | None = None
    history_problem: str | None = None
    seconds: float = math.nan
    accuracy: float = math.nan


def graded_run(channel: Channel) -> Run:
    """Train the kernel's ``build_model()`` with its ``train()``, from outside: the run."""
    session = Session(channel, TRAINING_LIMIT, TRAINING_LIMIT + 10.0)
    try:
        return _train(session)
    except CheckFailure as failure:
        return Run(failure=str(failure))
    except TimeLimitExceeded:
        return Run(failure=f"train() was stopped after {TRAINING_LIMIT:g} s (the budget is "
                           f"{TIME_BUDGET:g} s): use fewer epochs, a narrower first layer or "
                           "larger mini-batches.")
    except RemoteError as error:       # a name the notebook never defined
        return Run(failure=f"Your notebook cannot be trained by the grader ({error.message}). "
                           "Run every cell above this one; did a cell fail?")
    except ChannelError as error:
        return Run(failure=f"Your kernel did not answer the grader ({error}).")
    except Exception as error:  # noqa: BLE001 - e.g. logits of objects: a failed run, never a crash
        fault = blame.fault(error, [session])
        if fault is not None:   # the grader's own failure: no verdict at all
            raise fault from error
        return Run(failure=f"The grader could not evaluate your network ({type(error).__name__}: "
                           f"{error}).")
    finally:
        session.release()


def _train(session: Session) -> Run:
    X_train, X_test, y_train, y_test = load_mnist()
    build_model, train, manual_seed = (session.lookup(name)
                                       for name in ("build_model", "train", "manual_seed"))
    X, y = session.hold(X_train), session.hold(y_train)
    call("manual_seed(0)", manual_seed, 0)
    model = call("build_model()", build_model)
    start = time.monotonic()
    history = call("train(model, X_train, y_train)", session.send, "held", "call", train,
                   [model, X, y], {})
    seconds = time.monotonic() - start
    call("model.eval()", getattr(model, "eval", _missing("eval")))
    logits = call("model(X_test)", session.send, "held", "call", model, [session.hold(X_test)], {})
    y_pred = _predictions(session.value(logits), len(X_test))
    accuracy = float(np.mean(y_pred == y_test))
    run = dict(model=model, history=history, seconds=seconds, logits=logits, y_pred=y_pred,
               test_accuracy=accuracy)
    _remember(session, (build_model, train), run)
    return Run(history_problem=_history_problem(session.value(history)), seconds=seconds,
               accuracy=accuracy)


def _history_problem(history) -> str | None:
    """What is wrong with the history train() returned, read while the kernel still answers
    (its lists may be the kernel's objects); None if it is a dict of per-epoch lists."""
    fine = isinstance(history, dict) and set(history) <= HISTORY_KEYS and any(
        len(values) for values in history.values() if hasattr(values, "__len__"))
    return None if fine else (
        f"train() returned {type_name(history)}; return its history, a dict of per-epoch "
        f"lists under keys among {sorted(HISTORY_KEYS)}, with at least one epoch in it.")


def _missing(name: str):
    def missing():
        fail(f"build_model() returned an object without a {name}() method; return the network, "
             "e.g. a Sequential of Linear and ReLU layers.")
    return missing


def _predictions(logits, n: int) -> np.ndarray:
    """The predicted classes of the logits the trained model returned for ``n`` test images."""
    expect(not isinstance(logits, Remote), f"The trained network maps the test images to a "
           f"{type_name(logits)}, expected an array of shape ({n}, 10).")
    logits = np.asarray(logits)
    expect(logits.shape == (n, 10), f"The trained network maps the test images to an array of "
           f"shape {logits.shape}, expected ({n}, 10).")
    return logits.argmax(axis=1)


def _remember(session: Session, functions: tuple[Remote, Remote], run: dict) -> None:
    """The run written into the notebook's ``_submission`` cache (as ``graded_run()`` would
    write it), so its cells show the grader's figures; a cache the student's code replaced
    is left alone: the cells then train again in the kernel, and score nothing either way."""
    try:
        cache = session.send("held", "lookup", "_submission")
        session.send("setitem", cache, "run", session.send("double", "namespace", run))
        session.send("setitem", cache, "functions", functions)
    except RemoteError:
        pass


def budget(run: Run) -> None:
    """``grade-budget``: a history came back, train() kept to the budget, 85% on the test set."""
    _trained(run)
    expect(run.history_problem is None, run.history_problem)
    expect(run.seconds <= TIME_BUDGET, f"train() took {run.seconds:.1f} s in the grader's run, "
           f"more than the budget of {TIME_BUDGET:g} s: use fewer epochs, a narrower first layer "
           "or larger mini-batches.")
    expect(run.accuracy >= BUDGET_ACCURACY, f"The test accuracy is {run.accuracy:.1%}; these 5 "
           "points need at least 85%. Check the basics: logits out, model.train() while "
           "training, a learning rate around 1e-3 for Adam, several epochs.")


def accuracy(run: Run) -> None:
    """``grade-accuracy``: 90% on the test set."""
    _trained(run)
    expect(run.accuracy >= FULL_ACCURACY, f"The test accuracy is {run.accuracy:.1%}; these 10 "
           "points need at least 90%. A hidden layer of 100 or more units with ReLU, Adam and "
           "5 to 10 epochs gets there.")


def _trained(run: Run) -> None:
    if run.failure is not None:
        fail(run.failure)
