"""Unit 11's graded run, done by the grader: the student's ``build_model()`` trained by their
``train()`` on the training split, timed and evaluated from outside the kernel.

The notebook's two graded cells (``grade-budget``, ``grade-accuracy``) run the same
training in the kernel, where the student sees it; but there the clock, ``expect`` and the
cached run are the student's to replace. Here the training arrays are the grader's own
(sent as data); the time is the CPU time of the kernel's processes, read by the grader from
the job's control group (or, without one, in ``/proc``: ``autograder.pipeline.sandbox.kernel_cpu``)
before the first call and after the last answer, so it covers the whole session: ``build_model()``, ``train()``, ``eval()`` and the
predictions, and work moved out of ``train()`` into ``eval()`` or the forward pass is counted;
and the accuracy comes from the logits the trained model returns for the grader's held-out
images (``autograder.held_out``: 1,000 digits no notebook has, shuffled and perturbed with a
secret seed), so a model that learned or looked up the notebook's own test images gains
nothing. The run is then written into the notebook's cache (``_submission``), with the
model's predictions for the notebook's test images, so the cells that follow show these
figures and do not train again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.checks._calls import type_name
from autograder.held_out import held_out
from autograder import blame
from autograder.remote.channel import Channel, ChannelError
from autograder.remote.errors import TimeLimitExceeded
from autograder.remote.proxy import Remote, RemoteError, Session
from autograder.sandbox import call
from course.datasets import load_mnist
from course.testing.failure import CheckFailure, expect, fail

TIME_BUDGET = 20.0    # CPU seconds: build_model, train, eval and predicting (as the notebook says)
TRAINING_LIMIT = 3 * TIME_BUDGET   # past it the run is stopped (computing or waiting)
HISTORY_KEYS = {"train_loss", "train_acc", "test_loss", "test_acc"}
BUDGET_ACCURACY, FULL_ACCURACY = 0.85, 0.90


@dataclass(frozen=True)
class Run:
    """What the grader's run found: ``failure`` if it could not train and evaluate, and what
    is wrong with the history train() returned (None: nothing)."""

    failure: str | None = None
    history_problem: str | None = None
    seconds: float = math.nan       # the kernel's CPU time over the session
    accuracy: float = math.nan      # on the grader's held-out images


def graded_run(channel: Channel, cpu: Callable[[], float], wall: float = math.inf) -> Run:
    """Train the kernel's ``build_model()`` with its ``train()``, from outside: the run.
    ``cpu()`` reads the kernel's CPU seconds so far (its job's control group); the run waits
    ``wall`` seconds at most (less than its own limit when the job's time runs out)."""
    session = Session(channel, TRAINING_LIMIT, min(TRAINING_LIMIT + 10.0, wall))
    try:
        return _train(session, cpu)
    except CheckFailure as failure:
        return Run(failure=str(failure))
    except TimeLimitExceeded:
        return Run(failure=f"The grader's run was stopped after {TRAINING_LIMIT:g} s (the "
                           f"budget is {TIME_BUDGET:g} s of CPU time): use fewer epochs, a "
                           "narrower first layer or larger mini-batches.")
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


def _train(session: Session, cpu: Callable[[], float]) -> Run:
    X_train, X_test, y_train, y_test = load_mnist()
    X_held, y_held = held_out()
    build_model, train, manual_seed = (session.lookup(name)
                                       for name in ("build_model", "train", "manual_seed"))
    X, y, held, test = (session.hold(data) for data in (X_train, y_train, X_held, X_test))
    start = cpu()
    call("manual_seed(0)", manual_seed, 0)
    model = call("build_model()", build_model)
    history = call("train(model, X_train, y_train)", session.send, "held", "call", train,
                   [model, X, y], {})
    call("model.eval()", getattr(model, "eval", _missing("eval")))
    accuracy = float(np.mean(_logits(session, model, held, "X_held_out", len(y_held))[1] == y_held))
    logits, y_pred = _logits(session, model, test, "X_test", len(y_test))
    problem = _history_problem(session.value(history))
    seconds = cpu() - start
    run = dict(model=model, history=history, seconds=seconds, logits=logits, y_pred=y_pred,
               test_accuracy=float(np.mean(y_pred == y_test)), graded_accuracy=accuracy,
               graded_on=f"the grader's {len(y_held):,} held-out images")
    _remember(session, (build_model, train), run)
    return Run(history_problem=problem, seconds=seconds, accuracy=accuracy)


def _history_problem(history) -> str | None:
    """What is wrong with the history train() returned, read while the kernel still answers
    (its lists may be the kernel's objects); None if it is a dict of per-epoch lists with at
    least one epoch under 'train_loss', as the notebook's visible test asks."""
    if not isinstance(history, dict):
        returned = type_name(history)
    elif not set(history) <= HISTORY_KEYS:
        returned = "a dict with the keys " + ", ".join(repr(key)[:30] for key in list(history)[:6])
    elif not _epochs(history.get("train_loss")):
        returned = "a history without a per-epoch list under 'train_loss'"
    else:
        return None
    return (f"train() returned {returned}; return its history, a dict of per-epoch lists: "
            "'train_loss' with at least one epoch and, if you record them, 'train_acc', "
            "'test_loss', 'test_acc' (what unit 9's fit returns).")


def _epochs(values) -> int:
    """The number of epochs in a per-epoch list (0 for anything without a length)."""
    return len(values) if hasattr(values, "__len__") else 0


def _missing(name: str):
    def missing():
        fail(f"build_model() returned an object without a {name}() method; return the network, "
             "e.g. a Sequential of Linear and ReLU layers.")
    return missing


def _logits(session: Session, model: Remote, images: Remote, name: str,
            n: int) -> tuple[Remote, np.ndarray]:
    """The kernel's logits of the trained ``model`` for the ``n`` images held as ``images``,
    and their predicted classes."""
    logits = call(f"model({name})", session.send, "held", "call", model, [images], {})
    return logits, _predictions(session.value(logits), n)


def _predictions(logits, n: int) -> np.ndarray:
    """The predicted classes of the logits the trained model returned for ``n`` images."""
    expect(not isinstance(logits, Remote), f"The trained network maps {n} images to a "
           f"{type_name(logits)}, expected an array of shape ({n}, 10).")
    logits = np.asarray(logits)
    expect(logits.shape == (n, 10), f"The trained network maps {n} images to an array of "
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
    """``grade-budget``: a history came back, the run kept to the CPU budget, 85% on the
    held-out images."""
    _trained(run)
    expect(run.history_problem is None, run.history_problem)
    expect(run.seconds <= TIME_BUDGET, f"build_model(), train() and the predictions used "
           f"{run.seconds:.1f} s of CPU time in the grader's run, more than the budget of "
           f"{TIME_BUDGET:g} s: use fewer epochs, a narrower first layer or larger mini-batches.")
    expect(run.accuracy >= BUDGET_ACCURACY, f"The accuracy on the grader's held-out images is "
           f"{run.accuracy:.1%}; these 5 points need at least 85%. Check the basics: logits "
           "out, model.train() while training, a learning rate around 1e-3 for Adam, several "
           "epochs.")


def accuracy(run: Run) -> None:
    """``grade-accuracy``: 90% on the held-out images."""
    _trained(run)
    expect(run.accuracy >= FULL_ACCURACY, f"The accuracy on the grader's held-out images is "
           f"{run.accuracy:.1%}; these 8 points need at least 90%. A hidden layer of 100 or "
           "more units with ReLU, Adam and 5 to 10 epochs gets there.")


def _trained(run: Run) -> None:
    if run.failure is not None:
        fail(run.failure)
