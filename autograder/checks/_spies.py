"""The objects a student's training loop is handed, and the reference run it is judged by.

The loop under test drives a network (Linear, ReLU, a gate, Linear), a CrossEntropyLoss and
an SGD of the notebook's own classes, wrapped in spies (``doubles.Training``, built in the
student's kernel when graded from outside), with the weights of a ``minitorch_ref`` twin
built from the seed. The gate (``doubles.gate``) is a dropout with a fixed mask, so a forward
pass in the wrong mode changes what the loop computes. The checks judge what the loop
computed (the weights after it, the numbers it returned, its history) against the reference's
run from the same start (``Twin``); the spies' log (``Run.log``) is the kernel's testimony,
read only to say what went wrong once the values have failed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minitorch_ref
from autograder import testimony
from autograder.checks._calls import attribute
from autograder.remote.doubles import Training, gate, halve, log_rate
from autograder.remote.proxy import Remote
from autograder.sandbox import call
from course.testing.compare import expect_close
from minitorch_ref import nn, optim
from minitorch_ref import training as loops

CLASSES = 3
FEATURES = 2
HIDDEN = 6
LR = 0.5
HISTORY_KEYS = ("train_loss", "train_acc", "test_loss", "test_acc")


@dataclass
class Call:
    """One logged call: ``model.forward(x)`` gives ``Call("model", "forward", (x,), logits)``."""

    who: str
    method: str
    args: tuple
    result: object
    training: bool

    @property
    def name(self) -> str:
        return f"{self.who}.{self.method}"


def network(seed: int) -> nn.Sequential:
    """The reference network of a run, freshly built from the seed (a twin has its weights)."""
    minitorch_ref.manual_seed(seed)
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), gate(nn.ReLU)(),
                         nn.Linear(HIDDEN, CLASSES))


# What a check uses for the classes a hidden cell did not pass.
REFERENCE = (nn.Sequential, nn.Linear, nn.ReLU, nn.CrossEntropyLoss, optim.SGD)


class Run:
    """A small classification problem and the spied objects a loop is handed, built from
    ``framework`` (the notebook's Sequential, Linear, ReLU, CrossEntropyLoss and SGD, or the
    reference's for those not given): in the student's kernel when they live there. The
    network starts in training mode or not, every gradient filled with ``grad``."""

    def __init__(self, framework: tuple, n: int = 10, batch_size: int = 4, seed: int = 0,
                 lr: float = LR, training: bool = True, grad: float = 0.0):
        framework = tuple(given or default for given, default in zip(framework, REFERENCE))
        self.n, self.batch_size, self.seed, self.lr = n, batch_size, seed, lr
        self.training, self.grad = training, grad
        rng = np.random.default_rng(seed)
        self.X = rng.standard_normal((n, FEATURES))
        self.y = rng.integers(0, CLASSES, n)
        weights = [p.data.copy() for p in network(seed).parameters()]
        arguments = (*framework, (FEATURES, HIDDEN, CLASSES), weights, lr, self.X, self.y,
                     batch_size)
        if isinstance(framework[0], Remote):
            self.double = call("building the network from the notebook's classes",
                               framework[0]._session.send, "double", "training", *arguments)
        else:
            self.double = call("building the network from the notebook's classes", Training,
                               *arguments)
        self._expect_reference_network()
        call("preparing the network", self.double.prepare, training, grad)
        self.model, self.criterion, self.optimizer = (
            attribute("the spied objects", self.double, name)
            for name in ("model", "criterion", "optimizer"))
        self.loader = attribute("the batches", self.double, "loader")

    def _expect_reference_network(self) -> None:
        for mode, shown in ((False, "evaluation"), (True, "training")):
            expect_close(f"the network built from the notebook's classes, in {shown} mode",
                         call("the network's output", self.double.output, self.X, mode),
                         network(self.seed).train(mode)(self.X),
                         "the same weights as the reference network: did a cell change "
                         "Sequential, Linear, ReLU or Module.train? Run the notebook from the top.")

    @property
    def batches(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The batches the loop is handed (the double's ``loader``), built here too."""
        return [(self.X[i:i + self.batch_size], self.y[i:i + self.batch_size])
                for i in range(0, self.n, self.batch_size)]

    @property
    def log(self) -> list[Call]:
        """The spies' log: testimony, for a failure's message."""
        return [Call(who, method, tuple(args), result, bool(training))
                for who, method, args, result, training in testimony.log_of(self.double)]

    def losses(self) -> list[tuple[Call, bool]]:
        """Every loss the log shows, and whether it was backpropagated (a training batch)."""
        log, found = self.log, []
        for i, c in enumerate(log):
            if c.name == "criterion.forward":
                after = [d.method for d in log[i + 1:] if d.who == "criterion"]
                found.append((c, bool(after) and after[0] == "backward"))
        return found

    def parameters(self) -> list[np.ndarray]:
        return self.double.parameters()


class Twin:
    """The reference network, loss and SGD, from the start of ``run``: what its loop should
    compute, with the reference's own ``train_epoch`` and ``evaluate``."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.model = network(run.seed).train(run.training)
        for param in self.model.parameters():
            param.grad[...] = run.grad
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = optim.SGD(self.model.parameters(), lr=run.lr)

    def epoch(self) -> tuple[float, float]:
        return loops.train_epoch(self.model, self.criterion, self.optimizer, self.run.batches)

    def scores(self, X: np.ndarray, y: np.ndarray, training: bool) -> tuple[float, float]:
        """The loss and accuracy on (X, y) of the network as it is now, in that mode."""
        logits = self.model.train(training)(X)
        return float(self.criterion(logits, y)), float(np.mean(logits.argmax(axis=1) == y))

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """``evaluate``: the scores in evaluation mode, which it leaves the network in."""
        return self.scores(X, y, False)

    def fit(self, epochs: int, test_data: tuple | None = None, scheduler: bool = False,
            callback: bool = False) -> dict[str, list[float]]:
        """The history of the reference's ``fit`` (with the halving scheduler and the callback
        writing the rate down, ``doubles.Training``, when asked)."""
        history: dict[str, list[float]] = {key: [] for key in HISTORY_KEYS}
        for _ in range(epochs):
            results = {"train": self.epoch()}
            if test_data is not None:
                results["test"] = self.evaluate(*test_data)
            for prefix, (loss, accuracy) in results.items():
                history[f"{prefix}_loss"].append(loss)
                history[f"{prefix}_acc"].append(accuracy)
            if scheduler:
                halve(self.optimizer)
            if callback:
                log_rate(history, self.optimizer)
        return history

    def parameters(self) -> list[np.ndarray]:
        return [p.data for p in self.model.parameters()]


def expect_same_parameters(what: str, run: Run, twin: Twin, where: str) -> None:
    """The network's parameters after the loop are the reference's (``what`` the loop)."""
    for k, (got, expected) in enumerate(zip(run.parameters(), twin.parameters())):
        expect_close(f"parameter {k} after {what}", got, expected, where)
