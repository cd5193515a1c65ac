"""Reference objects that log every call a student's training loop makes.

The loop under test drives a ``minitorch_ref`` network, loss and optimizer wrapped
in spies; the log (who, method, arguments, result, the model's mode) is what the
training checks read: the order of the steps, their number, the losses to average.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import minitorch_ref
from minitorch_ref import nn, optim

CLASSES = 3
FEATURES = 2
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


class Spy:
    """Forwards everything to ``target``; logs calls to ``methods`` (``__call__`` as forward)."""

    def __init__(self, who: str, target: object, methods: tuple[str, ...], run: "Run") -> None:
        object.__setattr__(self, "_spied", (who, target, methods, run))

    def _logged(self, method: str, function):
        who, _, _, run = self._spied

        def logged(*args):
            result = function(*args)
            run.log.append(Call(who, method, args, result, bool(run.net.training)))
            return result
        return logged

    def __getattr__(self, name: str):
        _, target, methods, _ = self._spied
        value = getattr(target, name)
        return self._logged(name, value) if name in methods else value

    def __setattr__(self, name: str, value) -> None:
        setattr(self._spied[1], name, value)

    def __call__(self, *args):
        return self._logged("forward", self._spied[1].forward)(*args)


@dataclass
class Run:
    """A small classification problem, a network, its loss and optimizer, all spied on."""

    n: int = 10
    batch_size: int = 4
    seed: int = 0
    dropout: float = 0.0
    log: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        self.X = rng.standard_normal((self.n, FEATURES))
        self.y = rng.integers(0, CLASSES, self.n)
        self.net = self.network()
        self.model = Spy("model", self.net, ("forward", "backward", "train", "eval", "zero_grad"),
                         self)
        self.criterion = Spy("criterion", nn.CrossEntropyLoss(), ("forward", "backward"), self)
        self.optimizer = Spy("optimizer", optim.SGD(self.net.parameters(), lr=LR),
                             ("step", "zero_grad"), self)
        self.loader = [(self.X[i:i + self.batch_size], self.y[i:i + self.batch_size])
                       for i in range(0, self.n, self.batch_size)]

    def network(self) -> nn.Sequential:
        """The network of this run, freshly built from the seed (a twin has the same weights)."""
        minitorch_ref.manual_seed(self.seed)
        layers = [nn.Linear(FEATURES, 6), nn.ReLU()]
        layers += [nn.Dropout(self.dropout)] if self.dropout else []
        return nn.Sequential(*layers, nn.Linear(6, CLASSES))

    def names(self) -> list[str]:
        return [c.name for c in self.log]

    def losses(self) -> list[tuple[Call, bool]]:
        """Every loss computed, and whether it was backpropagated (a training batch)."""
        found = []
        for i, c in enumerate(self.log):
            if c.name == "criterion.forward":
                after = [d.method for d in self.log[i + 1:] if d.who == "criterion"]
                found.append((c, bool(after) and after[0] == "backward"))
        return found

    def parameters(self) -> list[np.ndarray]:
        return [p.data.copy() for p in self.net.parameters()]


def weighted_mean(calls: list[Call]) -> tuple[float, float]:
    """The mean loss weighted by batch size and the accuracy, over the logged loss calls."""
    sizes = np.array([len(c.args[1]) for c in calls])
    losses = np.array([float(c.result) for c in calls])
    correct = sum(int(np.sum(c.args[0].argmax(axis=1) == c.args[1])) for c in calls)
    return float(np.sum(sizes * losses) / sizes.sum()), correct / sizes.sum()
