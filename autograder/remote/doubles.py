"""Objects of the grader's own that a check hands to the student's code, built in the
student's kernel: a scalar function ``f()`` that reads an array (for ``numerical_gradient``),
a recorder that subclasses the student's layers to log the calls that reach them (for
``Sequential``), a subclass of the student's container with an ``extra_repr``, a
dataset whose samples carry their index (for ``DataLoader`` and ``random_split``), a
scheduler subclass and schedule functions (for ``LRScheduler`` and ``LambdaLR``), a spied
network (with a mode-dependent ``gate``), loss and optimizer of the notebook's own classes,
a scheduler that halves the rate and a callback that writes it down (for unit 9's loop), the
weights of manual Linear layers (for unit 12's TensorMLP), parameters holding gradients (for
unit 16's ``clip_grad_norm_``), and the record of unit 11's graded
run (``namespace``), written into the notebook's cache so that its cells show the grader's run.

This file is sent, as text, into the kernel with the agent (``channel.install``), which
builds a double when the grader asks (``op_double``); the grader imports it too, so both
sides compute the same values. Like the agent it holds no check, no expected value and
nothing to hide: what the student's code does with a double comes back as data, and is
judged outside. Stdlib and numpy only.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np


def cubic(c: np.ndarray, x: np.ndarray) -> float:
    """sum(c * x**3)"""
    return float((c * x**3).sum())


def coupled(c: np.ndarray, x: np.ndarray) -> float:
    """sin(sum(c * x)) + sum(x**2)"""
    return float(np.sin((c * x).sum()) + (x * x).sum())


FUNCTIONS = {"cubic": cubic, "coupled": coupled}


class ScalarFunction:
    """``f()``: the function ``kind`` (of ``FUNCTIONS``) at what ``x`` holds when called, as
    numerical_gradient(f, x, h) expects: it perturbs x in place and calls f()."""

    def __init__(self, kind: str, c: np.ndarray, x: np.ndarray) -> None:
        self.value, self.c, self.x = FUNCTIONS[kind], c, x

    def __call__(self) -> float:
        return self.value(self.c, self.x)


class Recorder:
    """Subclasses of the student's layer classes (``spy``) that log every forward and backward
    call in order: ``(kind, layer, given)``, the layer as its index in ``leaves`` (-1 for any
    other object) and a float copy of the array it was given (None if it is not one)."""

    def __init__(self) -> None:
        self.leaves: list = []
        self.calls: list[tuple] = []

    def spy(self, cls: type) -> type:
        recorder = self

        def forward(layer, x):
            recorder.log("forward", layer, x)
            return cls.forward(layer, x)

        def backward(layer, grad_output):
            recorder.log("backward", layer, grad_output)
            return cls.backward(layer, grad_output)

        def __call__(layer, *args, **kwargs):
            return layer.forward(*args, **kwargs)
        return type(cls.__name__, (cls,), {
            "forward": forward, "backward": backward, "__call__": __call__,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
        })

    def log(self, kind: str, layer: object, value: object) -> None:
        index = next((i for i, leaf in enumerate(self.leaves) if leaf is layer), -1)
        try:
            given = np.array(value, dtype=float)
        except (TypeError, ValueError):
            given = None
        self.calls.append((kind, index, given))

    def records(self) -> list[tuple]:
        """The calls so far: testimony (``autograder.testimony``), for a failure's message."""
        return list(self.calls)

    def clear(self) -> None:
        self.calls.clear()


def tagged(cls: type, text: str) -> type:
    """``Tagged``, a subclass of the student's container whose extra_repr() returns ``text``."""
    return type("Tagged", (cls,), {"extra_repr": lambda self: text})


class IndexDataset:
    """``n`` samples ``(x_i, i)``: ``x_i`` of ``shape`` with ``x_i.flat[0] == i``."""

    def __init__(self, n: int, shape: tuple[int, ...] = (3,)) -> None:
        offsets = np.linspace(0.0, 0.5, math.prod(shape)).reshape(shape)
        self.x = np.arange(n, dtype=float).reshape((n,) + (1,) * len(shape)) + offsets
        self.y = np.arange(n)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index):
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"this dataset takes one integer index, got {type(index).__name__}: "
                            "a Dataset is read one sample at a time, dataset[i]; stack the "
                            "samples of a batch yourself")
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} out of range for a dataset of {len(self)} samples")
        return self.x[index], self.y[index]


def halving(base: type) -> type:
    """A subclass of the student's LRScheduler whose rate halves every epoch, as in unit 9's
    visible tests."""
    class Halving(base):
        def lr_at(self, base_lr, epoch):
            return base_lr * 0.5**epoch
    return Halving


def still(base: type) -> type:
    """A subclass of a student's schedule whose step() does nothing: built, it holds its
    settings, so that its lr_at can be called without the student's step() running."""
    class Still(base):
        def step(self):
            pass
    return Still


SCHEDULES = {"0.95 ** epoch": lambda e: 0.95**e, "1 / (1 + epoch)": lambda e: 1 / (1 + e),
             "min(1, (epoch + 1) / 5)": lambda e: min(1.0, (e + 1) / 5)}


class Lambda:
    """A schedule function for LambdaLR (one of ``SCHEDULES``) that prints as its formula."""

    def __init__(self, text: str) -> None:
        self.text, self.f = text, SCHEDULES[text]

    def __call__(self, epoch: int) -> float:
        return self.f(epoch)

    def __repr__(self) -> str:
        return f"lambda epoch: {self.text}"


def _data(value):
    """What a training log keeps of an argument or result: arrays (copied) and numbers."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return value if isinstance(value, (int, float, np.generic)) else None


KEPT = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])   # the gate's units kept in training mode


def gate(base: type) -> type:
    """``Gate``, a subclass of a ReLU class (the notebook's, or the reference's) that is a
    dropout with a fixed mask: in training mode it zeroes the units where ``KEPT`` is 0 and
    scales the others by 1 / (share kept); in evaluation mode it passes everything through.
    Unit 9's network holds one, so the mode of every forward pass shows in what a loop
    computes."""
    class Gate(base):
        def forward(self, x):
            self.factor = KEPT / KEPT.mean() if self.training else np.ones_like(KEPT)
            return x * self.factor

        def backward(self, grad_output):
            return grad_output * self.factor
    return Gate


def halve(optimizer) -> None:
    """A scheduler's step: every parameter group's learning rate halved."""
    for group in optimizer.param_groups:
        group["lr"] = group["lr"] * 0.5


def log_rate(history: dict, optimizer) -> None:
    """A callback's work: the learning rate it sees appended to ``history['lr']``."""
    history.setdefault("lr", []).append(float(optimizer.param_groups[0]["lr"]))


class Spy:
    """Forwards everything to ``target``; logs its calls to ``methods`` (``__call__`` as
    forward) in ``run``."""

    def __init__(self, who: str, target: object, methods: tuple[str, ...], run: "Training"):
        object.__setattr__(self, "_spied", (who, target, methods, run))

    def _logged(self, method: str, function):
        who, _, _, run = self._spied

        def logged(*args):
            result = function(*args)
            run.record(who, method, args, result)
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


class Training:
    """What unit 9's training loop is handed, built from the notebook's own classes: a network
    Linear, ReLU, ``gate``, Linear of ``widths`` holding the grader's ``weights``, its
    CrossEntropyLoss and SGD(lr), each spied on, and the batches of (X, y). The log holds
    data only: ``(who, method, args, result, training)``, the network's mode at the call."""

    def __init__(self, Sequential, Linear, ReLU, CrossEntropyLoss, SGD, widths: tuple,
                 weights: list, lr: float, X: np.ndarray, y: np.ndarray, batch_size: int):
        self.net = Sequential(Linear(widths[0], widths[1]), ReLU(), gate(ReLU)(),
                              Linear(widths[1], widths[2]))
        for param, w in zip(self.net.parameters(), weights):
            param.data[...] = w
        self.log: list[tuple] = []
        self.sgd = SGD(self.net.parameters(), lr=lr)
        self.model = Spy("model", self.net, ("forward", "backward", "train", "eval", "zero_grad"),
                         self)
        self.criterion = Spy("criterion", CrossEntropyLoss(), ("forward", "backward"), self)
        self.optimizer = Spy("optimizer", self.sgd, ("step", "zero_grad"), self)
        self.loader = [(X[i:i + batch_size], y[i:i + batch_size])
                       for i in range(0, len(y), batch_size)]

    def record(self, who: str, method: str, args: tuple = (), result=None) -> None:
        self.log.append((who, method, tuple(_data(a) for a in args), _data(result),
                         bool(self.net.training)))

    def records(self) -> list[tuple]:
        """The calls so far: testimony (``autograder.testimony``), for a failure's message."""
        return list(self.log)

    def output(self, X: np.ndarray, training: bool) -> np.ndarray:
        """The network's output on X in training or evaluation mode, not logged."""
        self.net.train(training)
        return np.array(self.net.forward(X), dtype=float)

    def prepare(self, training: bool, grad: float) -> None:
        """The network in training or evaluation mode, every gradient filled with ``grad``."""
        self.net.train(training)
        for param in self.net.parameters():
            param.grad[...] = grad

    def parameters(self) -> list[np.ndarray]:
        return [np.array(p.data, dtype=float) for p in self.net.parameters()]

    def gradients(self) -> list[np.ndarray]:
        return [np.array(p.grad, dtype=float) for p in self.net.parameters()]

    def scheduler(self) -> object:
        """A scheduler whose step() halves the learning rate, logged."""
        run = self

        class Scheduler:
            def step(self) -> None:
                halve(run.sgd)
                run.record("scheduler", "step")
        return Scheduler()

    def callback(self):
        """A callback(history) that writes the learning rate it sees into the history, logged."""
        def callback(history) -> None:
            log_rate(history, self.sgd)
            self.record("callback", "step")
        return callback

    def rate(self) -> float:
        """The learning rate of the optimizer's first group now."""
        return float(self.sgd.param_groups[0]["lr"])

    def standing_in(self, fit, train: list, test: list):
        """``fit`` with stand-ins for the notebook's ``train_epoch`` and ``evaluate`` (``Stand``)
        in its globals while it runs, so that it is judged on its own work; ``fit`` must be a
        function of the notebook (AttributeError otherwise)."""
        space = fit.__globals__
        stand = Stand(self, train, test)

        def run(model, loader, criterion, optimizer, epochs, test_data=None, **kwargs):
            stand.given = (model, loader, criterion, optimizer, test_data)
            saved = {name: space.get(name, MISSING) for name in STAND_INS}
            space.update(train_epoch=stand.train_epoch, evaluate=stand.evaluate)
            try:
                return fit(model, loader, criterion, optimizer, epochs, test_data, **kwargs)
            finally:
                for name, value in saved.items():
                    space.pop(name) if value is MISSING else space.__setitem__(name, value)
        return run


MISSING = object()
STAND_INS = ("train_epoch", "evaluate")


class Stand:
    """The stand-ins: ``train_epoch(model, loader, criterion, optimizer)`` returns ``train[k]``
    at its k-th call, its loss plus the optimizer's current rate; ``evaluate(model, X, y,
    criterion)`` returns ``test[k]`` after k calls of train_epoch. Called with other objects
    than those fit was given, each returns NaNs. The numbers are the grader's, chosen for the
    check: fit is judged by where it puts them."""

    def __init__(self, training: Training, train: list, test: list) -> None:
        self.training, self.train, self.test, self.epochs = training, train, test, 0
        self.given: tuple = ()

    def train_epoch(self, model, loader, criterion, optimizer):
        model_, loader_, criterion_, optimizer_, _ = self.given
        right = model is model_ and loader is loader_ and criterion is criterion_ \
            and optimizer is optimizer_
        loss, accuracy = self.train[min(self.epochs, len(self.train) - 1)]
        self.epochs += 1
        self.training.record("train_epoch", "call")
        rate = float(self.training.sgd.param_groups[0]["lr"])
        return (loss + rate, accuracy) if right else (math.nan, math.nan)

    def evaluate(self, model, X, y, criterion):
        model_, _, criterion_, _, test_data = self.given
        right = model is model_ and criterion is criterion_ and test_data is not None \
            and X is test_data[0] and y is test_data[1]
        self.training.record("evaluate", "call")
        loss, accuracy = self.test[min(self.epochs, len(self.test) - 1)]
        return (loss, accuracy) if right else (math.nan, math.nan)


class Weight:
    """An array in ``.data``, as a manual layer's Parameter holds it (not the agent's ``Held``,
    a handle the grader keeps)."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data


class LinearWeights:
    """A manual Linear layer as the student's TensorMLP reads it: ``weight.data`` and
    ``bias.data`` (arrays of the grader's), printed as the layer is."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray) -> None:
        self.weight, self.bias = Weight(weight), Weight(bias)
        self.in_features, self.out_features = weight.shape

    def __repr__(self) -> str:
        return (f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
                "bias=True)")


class Gradient:
    """A parameter as ``clip_grad_norm_`` reads it: ``data`` and its ``grad`` (None for a
    parameter no loss reached, as PyTorch leaves it)."""

    def __init__(self, data: np.ndarray, grad: np.ndarray | None) -> None:
        self.data, self.grad = data, grad


def gradients(grads: list) -> list[Gradient]:
    """One ``Gradient`` per array of ``grads`` (or None), its ``data`` zeros of that shape."""
    return [Gradient(np.zeros(1) if grad is None else np.zeros_like(grad), grad) for grad in grads]


def namespace(fields: dict) -> SimpleNamespace:
    """An object whose attributes are ``fields``, as the notebook's ``graded_run()`` returns."""
    return SimpleNamespace(**fields)


DOUBLES = {"function": ScalarFunction, "recorder": Recorder, "tagged": tagged,
           "index_dataset": IndexDataset, "halving": halving, "still": still, "lambda": Lambda,
           "training": Training, "linear": LinearWeights, "gradients": gradients,
           "namespace": namespace}
