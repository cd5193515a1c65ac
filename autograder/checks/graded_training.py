"""The grader's own timed run of a student's ``train(model, X, y)``, for every unit whose points
come from a trained model (unit 11's digits, unit 14's language model, unit 16's GPTs).

A unit describes its run as a ``Training``: the kernel's names it calls, how the untrained
model is built there, the grader's arrays (``X`` and ``y`` go to ``train``; the others are the
inputs the trained model is measured on), how its outputs are scored, and the CPU budget.
``graded_run(training, channel, cpu, wall)`` then does, from outside the kernel:

1. sends the grader's arrays (data, copied into the kernel) and reads the kernel's CPU time,
   ``cpu()`` (``autograder.pipeline.sandbox.kernel_cpu``: the job's control group), before the
   first call;
2. ``training.build`` (e.g. ``manual_seed(0)``, then ``build_model()``), ``train(model, X, y)``,
   ``model.eval()``;
3. ``training.measure``: the score, recomputed here from the outputs the trained model returns
   for the grader's inputs (an accuracy, a negative log-likelihood), and what the notebook's
   cache records;
4. reads ``cpu()`` after the last answer, so work moved out of ``train()`` into ``eval()`` or
   the forward pass is counted; then writes the run into the notebook's cache
   (``_submission``), so that its cells show the grader's figures and do not train again.
   A run stopped at its limit reads ``cpu()`` too, and says what it had used by then (a run
   stopped on the clock of a busy machine shows it had not used its budget; a stopped run
   whose work hid in children nobody waits for shows their time counted);
5. ``training.rebuilt``, if the unit has one (unit 16): what it fetches of the trained model
   (its weights) after the CPU reading, and the grader's own evaluation on it, done once the
   kernel is released, so its CPU time is the grader's and no budget's; its figures join the
   run's, for a review, never for a point.

What the kernel says about itself (its clock, its cached run) decides nothing. A run that
cannot train or be measured is a ``Run`` with a ``failure``, never a crash; the grader's own
failure (``autograder.blame``) is raised. A cell's verdict reads the ``Run``: ``trained`` and
``within_budget`` here, its thresholds in the unit's module.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from autograder import blame
from autograder.checks._calls import type_name
from autograder.remote.channel import Channel, ChannelError
from autograder.remote.errors import TimeLimitExceeded
from autograder.remote.proxy import Remote, RemoteError, Session
from autograder.sandbox import call
from course.testing.failure import CheckFailure, expect, fail

LIMIT_FACTOR = 3        # past LIMIT_FACTOR times its CPU budget a run is stopped (computing or waiting)
TRAINED_ON = ("X", "y")  # the only arrays in the kernel while train() runs: the rest come after


@dataclass(frozen=True)
class Measured:
    """For ``measure``: the trained model in the kernel, the grader's arrays (``arrays``, labels
    included) and the handles of those sent to the kernel (``held``)."""

    session: Session
    model: Remote
    arrays: dict[str, np.ndarray]
    held: dict[str, Remote]

    def outputs(self, name: str, shape: tuple[int, ...]) -> tuple[Remote, np.ndarray]:
        """``model(<the grader's array name>)`` in the kernel: the kernel's result and its
        values here, which must be an array of ``shape``."""
        return self._model_of(name, self.held[name], shape)

    def output_of(self, what: str, array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """``model(array)`` for an array the grader makes now (``what`` names it; e.g. the
        tokens decoded so far): its values here, an array of ``shape``."""
        return self._model_of(what, self.session.hold(array), shape)[1]

    def _model_of(self, name: str, held: Remote, shape: tuple[int, ...]) -> tuple[Remote, np.ndarray]:
        returned = call(f"model({name})", self.session.send, "held", "call", self.model,
                        [held], {})
        values = self.session.value(returned)
        expect(not isinstance(values, Remote), f"The trained model maps {name} to a "
               f"{type_name(values)}, expected an array of shape {shape}.")
        values = np.asarray(values)
        expect(values.shape == shape, f"The trained model maps {name} to an array of shape "
               f"{values.shape}, expected {shape}.")
        expect(values.dtype.kind in "fiu", f"The trained model maps {name} to an array of "
               f"{values.dtype}, expected numbers.")
        return returned, values


@dataclass(frozen=True)
class Training:
    """One unit's graded run.

    ``names``: the kernel's functions and classes it uses (``train`` among them);
    ``build(kernel)``: the untrained model, from those names (``call`` names what failed);
    ``inputs()``: the grader's arrays by name, drawn once per run;
    ``sent``: those the kernel gets (``X`` and ``y`` for ``train``, the inputs to measure on,
    sent only once ``train`` has returned, so it cannot find them in the kernel's memory; labels
    stay here);
    ``measure(measured)``: the score and the record the notebook's cache gets;
    ``budget``: the CPU seconds of the whole session the cells allow;
    ``history_keys``: what the history ``train`` returns may hold (``train_loss`` required);
    ``keyed_on``: the functions the notebook's cache is keyed on, as its ``graded_run()`` keys it;
    ``faster``: how to train faster, said when the run is stopped;
    ``train``: the name of the training function among ``names``;
    ``cache``: the notebook's dict the run is written into (its ``graded_run()``'s cache);
    ``rebuilt(measured)``: called after the run's CPU time is read (what it asks the kernel is
    charged to no budget), it returns the evaluation to do in the grader once the kernel is
    released: figures added to the run's (``autograder.checks.gpt_rebuild``).
    """

    names: tuple[str, ...]
    build: Callable[[dict[str, Remote]], Remote]
    inputs: Callable[[], dict[str, np.ndarray]]
    sent: tuple[str, ...]
    measure: Callable[[Measured], tuple[float, dict]]
    budget: float
    history_keys: frozenset[str]
    keyed_on: tuple[str, ...]
    faster: str
    train: str = "train"
    cache: str = "_submission"
    rebuilt: Callable[[Measured], Callable[[], dict]] | None = None

    @property
    def limit(self) -> float:
        """The seconds (CPU or on the clock) after which the run is stopped."""
        return LIMIT_FACTOR * self.budget


@dataclass(frozen=True)
class Run:
    """What the grader's run found: ``failure`` if it could not train and measure, and what is
    wrong with the history train() returned (None: nothing)."""

    failure: str | None = None
    history_problem: str | None = None
    seconds: float = math.nan       # the kernel's CPU time over the session
    score: float = math.nan         # ``Training.measure``'s, on the grader's inputs
    figures: dict = field(default_factory=dict)   # the record's numbers, for the messages


def graded_run(training: Training, channel: Channel, cpu: Callable[[], float],
               wall: float = math.inf) -> Run:
    """The kernel's model trained by its ``train()``, from outside: the run. ``cpu()`` reads
    the kernel's CPU seconds so far; the run waits ``wall`` seconds at most (less than its own
    limit when the job's time runs out)."""
    session = Session(channel, training.limit, min(training.limit + 10.0, wall))
    meter = Meter(cpu)
    try:
        run, evaluate = _train(training, session, meter)
    except CheckFailure as failure:
        return Run(failure=str(failure))
    except TimeLimitExceeded:
        return stopped(training, meter.spent())
    except RemoteError as error:       # a name the notebook never defined
        return Run(failure=f"Your notebook cannot be trained by the grader ({error.message}). "
                           "Run every cell above this one; did a cell fail?")
    except ChannelError as error:
        return Run(failure=f"Your kernel did not answer the grader ({error}).")
    except Exception as error:  # noqa: BLE001 - e.g. outputs of objects: a failed run, never a crash
        fault = blame.fault(error, [session])
        if fault is not None:   # the grader's own failure: no verdict at all
            raise fault from error
        return Run(failure=f"The grader could not evaluate your model ({type(error).__name__}: "
                           f"{error}).")
    finally:
        session.release()
    return run if evaluate is None else replace(run, figures={**run.figures, **evaluate()})


def stopped(training: Training, seconds: float | None) -> Run:
    """A run stopped at its limit: ``seconds`` of the kernel's CPU time by then (None: stopped
    before the run's start), said in the failure (a run stopped on the clock of a busy machine
    shows there that it had not used its budget), and kept in ``Run.seconds``."""
    used = "" if seconds is None else f"; it had used {seconds:.1f} s of CPU time by then"
    return Run(failure=f"The grader's run was stopped after {training.limit:g} s (the budget is "
                       f"{training.budget:g} s of CPU time{used}): {training.faster}.",
               seconds=math.nan if seconds is None else seconds)


class Meter:
    """The kernel's CPU seconds, ``cpu()``, counted from the run's start (``start()``, before
    the first call): ``spent()`` is read after the last answer, or when the run is stopped."""

    def __init__(self, cpu: Callable[[], float]) -> None:
        self.cpu, self.started = cpu, None

    def start(self) -> None:
        self.started = self.cpu()

    def spent(self) -> float | None:
        """The CPU seconds since ``start()``; None if the run never started."""
        return None if self.started is None else self.cpu() - self.started


def _train(training: Training, session: Session,
           meter: Meter) -> tuple[Run, Callable[[], dict] | None]:
    kernel = {name: session.lookup(name) for name in training.names}
    arrays = training.inputs()
    held = {name: session.hold(arrays[name]) for name in TRAINED_ON}
    meter.start()
    model = training.build(kernel)
    history = call(f"{training.train}(model, X_train, y_train)", session.send, "held", "call",
                   kernel[training.train], [model, held["X"], held["y"]], {})
    call("model.eval()", getattr(model, "eval", _missing))
    held |= {name: session.hold(arrays[name]) for name in training.sent if name not in held}
    score, record = training.measure(Measured(session, model, arrays, held))
    problem = history_problem(session.value(history), training.history_keys, training.train)
    seconds = meter.spent()
    _remember(session, training.cache, tuple(kernel[name] for name in training.keyed_on),
              dict(model=model, history=history, seconds=seconds, **record))
    evaluate = None if training.rebuilt is None else training.rebuilt(
        Measured(session, model, arrays, held))
    figures = {k: v for k, v in record.items() if isinstance(v, (int, float, str))}
    return Run(history_problem=problem, seconds=seconds, score=score, figures=figures), evaluate


def _missing():
    fail("The model has no eval() method; build it from the framework's Module, which has one.")


def history_problem(history, keys: frozenset[str], train: str = "train") -> str | None:
    """What is wrong with the history ``train()`` (the training function's name) returned, read while the kernel still answers
    (its lists may be the kernel's objects); None if it is a dict of per-epoch lists with at
    least one epoch under 'train_loss' and no key beyond ``keys``."""
    if not isinstance(history, dict):
        returned = type_name(history)
    elif not set(history) <= keys:
        returned = "a dict with the keys " + ", ".join(repr(key)[:30] for key in list(history)[:6])
    elif not _epochs(history.get("train_loss")):
        returned = "a history without a per-epoch list under 'train_loss'"
    else:
        return None
    others = ", ".join(repr(key) for key in sorted(keys - {"train_loss"}))
    return (f"{train}() returned {returned}; return its history, a dict of per-epoch lists: "
            f"'train_loss' with at least one epoch and, if you record them, {others}.")


def _epochs(values) -> int:
    """The number of epochs in a per-epoch list (0 for anything without a length)."""
    return len(values) if hasattr(values, "__len__") else 0


def _remember(session: Session, name: str, functions: tuple[Remote, ...], run: dict) -> None:
    """The run written into the notebook's cache ``name`` (``_submission``, as its
    ``graded_run()`` would write it), so its cells show the grader's figures; a cache the
    student's code replaced is left alone: the cells then train again in the kernel, and score
    nothing either way."""
    try:
        cache = session.send("held", "lookup", name)
        session.send("setitem", cache, "run", session.send("double", "namespace", run))
        session.send("setitem", cache, "functions", functions)
    except RemoteError:
        pass


def trained(run: Run) -> None:
    """The run trained and was measured: else its failure."""
    if run.failure is not None:
        fail(run.failure)


def within_budget(run: Run, budget: float, spent: str, faster: str) -> None:
    """A history came back and the session kept to ``budget`` CPU seconds; ``spent`` names
    what the session ran ("build_model(), train() and the predictions")."""
    trained(run)
    expect(run.history_problem is None, run.history_problem)
    expect(run.seconds <= budget, f"{spent} used {run.seconds:.1f} s of CPU time in the "
           f"grader's run, more than the budget of {budget:g} s: {faster}.")
