"""The objects a student's training loop is handed, and what the checks read of them.

The loop under test drives a network (Linear, ReLU, Linear), a CrossEntropyLoss and an
SGD of the notebook's own classes, wrapped in spies (``doubles.Training``, built in the
student's kernel when graded from outside), with the weights of a ``minitorch_ref`` twin
built from the seed. The log (who, method, arguments, result, the model's mode) is what
the training checks read: the order of the steps, their number, the losses to average.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minitorch_ref
from autograder.checks._calls import attribute
from autograder.remote.doubles import Training
from autograder.remote.proxy import Remote
from autograder.sandbox import call
from course.testing.compare import expect_close
from minitorch_ref import nn, optim

CLASSES = 3
FEATURES = 2
HIDDEN = 6
LR = 0.5


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
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


# What a check uses for the classes a hidden cell did not pass.
REFERENCE = (nn.Sequential, nn.Linear, nn.ReLU, nn.CrossEntropyLoss, optim.SGD)


class Run:
    """A small classification problem and the spied objects a loop is handed, built from
    ``framework`` (the notebook's Sequential, Linear, ReLU, CrossEntropyLoss and SGD, or the
    reference's for those not given): in the student's kernel when they live there."""

    def __init__(self, framework: tuple, n: int = 10, batch_size: int = 4, seed: int = 0):
        framework = tuple(given or default for given, default in zip(framework, REFERENCE))
        self.n, self.batch_size, self.seed = n, batch_size, seed
        rng = np.random.default_rng(seed)
        self.X = rng.standard_normal((n, FEATURES))
        self.y = rng.integers(0, CLASSES, n)
        weights = [p.data.copy() for p in network(seed).parameters()]
        arguments = (*framework, (FEATURES, HIDDEN, CLASSES), weights, LR, self.X, self.y,
                     batch_size)
        if isinstance(framework[0], Remote):
            self.double = call("building the network from the notebook's classes",
                               framework[0]._session.send, "double", "training", *arguments)
        else:
            self.double = call("building the network from the notebook's classes", Training,
                               *arguments)
        expect_close("the network built from the notebook's Sequential, Linear and ReLU",
                     self.double.output(self.X), network(seed).eval()(self.X),
                     "the same weights as the reference network: did a cell change those "
                     "classes? Run the notebook from the top.")
        self.model, self.criterion, self.optimizer = (
            attribute("the spied objects", self.double, name)
            for name in ("model", "criterion", "optimizer"))
        self.loader = attribute("the batches", self.double, "loader")

    @property
    def log(self) -> list[Call]:
        return [Call(who, method, tuple(args), result, bool(training))
                for who, method, args, result, training in self.double.records()]

    def names(self) -> list[str]:
        return [c.name for c in self.log]

    def batches(self) -> int:
        return -(-self.n // self.batch_size)

    def losses(self) -> list[tuple[Call, bool]]:
        """Every loss computed, and whether it was backpropagated (a training batch)."""
        log, found = self.log, []
        for i, c in enumerate(log):
            if c.name == "criterion.forward":
                after = [d.method for d in log[i + 1:] if d.who == "criterion"]
                found.append((c, bool(after) and after[0] == "backward"))
        return found

    def parameters(self) -> list[np.ndarray]:
        return self.double.parameters()


def weighted_mean(calls: list[Call]) -> tuple[float, float]:
    """The mean loss weighted by batch size and the accuracy, over the logged loss calls."""
    sizes = np.array([len(c.args[1]) for c in calls])
    losses = np.array([float(c.result) for c in calls])
    correct = sum(int(np.sum(c.args[0].argmax(axis=1) == c.args[1])) for c in calls)
    return float(np.sum(sizes * losses) / sizes.sum()), correct / sizes.sum()
