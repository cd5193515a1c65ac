"""The regularization family's checks (Dropout, BatchNorm1d): they pass the reference, catch
and name every mutant, and grade hand-written student classes with clean messages."""
from __future__ import annotations

import itertools
import linecache
import time

import pytest

from autograder import audit, check, registry
from autograder.failure import CheckFailure
from autograder.mutants.regularization import MUTANTS

FAMILY = sorted(name for name, c in registry.CHECKS.items()
                if c.run.__module__ == "autograder.checks.regularization")

# A student's notebook: standalone classes, written the way the course teaches them (the
# container tests add Linear, ReLU and Sequential to it).
STUDENT = '''
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)


class Module:
    def __init__(self):
        self.training = True
        self.buffer_names = []

    def __call__(self, x):
        return self.forward(x)

    def named_children(self):
        return [(name, value) for name, value in vars(self).items() if isinstance(value, Module)]

    def named_parameters(self):
        named = [(name, v) for name, v in vars(self).items() if isinstance(v, Parameter)]
        for child_name, child in self.named_children():
            named += [(f"{child_name}.{name}", p) for name, p in child.named_parameters()]
        return named

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def grads(self):
        return [p.grad for p in self.parameters()]

    def zero_grad(self):
        for p in self.parameters():
            p.grad[...] = 0

    def train(self, mode=True):
        self.training = mode
        for _, child in self.named_children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def named_buffers(self):
        named = [(name, getattr(self, name)) for name in self.buffer_names]
        for child_name, child in self.named_children():
            named += [(f"{child_name}.{name}", b) for name, b in child.named_buffers()]
        return named

    def state_dict(self):
        state = {name: p.data.copy() for name, p in self.named_parameters()}
        state.update((name, np.array(b)) for name, b in self.named_buffers())
        return state

    def load_state_dict(self, state):
        for name, p in self.named_parameters():
            p.data[...] = state[name]
        self.load_buffers(state, "")

    def load_buffers(self, state, prefix):
        for name in self.buffer_names:
            setattr(self, name, np.array(state[prefix + name], dtype=float))
        for child_name, child in self.named_children():
            child.load_buffers(state, f"{prefix}{child_name}.")

    def extra_repr(self):
        return ""

    def __repr__(self):
        children = self.named_children()
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        lines = [f"  ({name}): " + repr(c).replace("\\n", "\\n  ") for name, c in children]
        return type(self).__name__ + "(\\n" + "\\n".join(lines) + "\\n)"


class Dropout(Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            self.mask = np.ones_like(x)
            return x
        self.mask = (np.random.rand(*x.shape) >= self.p) / (1 - self.p)
        return x * self.mask

    def backward(self, grad_output):
        return grad_output * self.mask

    def extra_repr(self):
        return f"p={self.p}"


class BatchNorm1d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = Parameter(np.ones(num_features))
        self.bias = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.buffer_names = ["running_mean", "running_var"]
        self.batches = 0

    def forward(self, x):
        self.batch_stats = self.training
        if self.training:
            n, mean = len(x), x.mean(axis=0)
            var = ((x - mean) ** 2).mean(axis=0)
            self.batches += 1
            m = 1 / self.batches if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        self.std = np.sqrt(var + self.eps)
        self.x_hat = (x - mean) / self.std
        return self.weight.data * self.x_hat + self.bias.data

    def backward(self, grad_output):
        self.weight.grad += (grad_output * self.x_hat).sum(axis=0)
        self.bias.grad += grad_output.sum(axis=0)
        g = grad_output * self.weight.data
        if not self.batch_stats:
            return g / self.std
        n = len(g)
        return (n * g - g.sum(axis=0) - self.x_hat * (g * self.x_hat).sum(axis=0)) / (n * self.std)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"
'''

_CELLS = itertools.count(1)


def notebook(source: str) -> dict:
    """Run ``source`` as a notebook cell would (its lines in linecache, as IPython keeps
    them); return its namespace."""
    filename = f"<ipython-input-{next(_CELLS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def grade(name: str, *classes: type) -> str | None:
    """The failure message of check ``name`` on ``classes``, or None if it passes."""
    try:
        getattr(check, name)(*classes)
    except CheckFailure as failure:
        return str(failure)
    return None


def student_with(name: str, methods: str, source: str = STUDENT) -> type:
    """The correct student's class ``name`` with some methods replaced by ``methods``."""
    body = "\n".join("    " + line for line in methods.strip("\n").splitlines())
    return notebook(source + f"\n\nclass {name}({name}):\n{body}\n")[name]


# --------------------------------------------------------------------------- audit
def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "dropout_train_forward", "dropout_backward", "dropout_eval", "dropout_p_zero",
        "batchnorm_forward_train", "batchnorm_backward_input", "batchnorm_backward_params",
        "batchnorm_running_stats", "batchnorm_eval",
    }


@pytest.mark.parametrize("name", FAMILY)
def test_check_passes_on_the_reference(name):
    assert audit.run(registry.CHECKS[name]) is None


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_and_diagnosed(mutant):
    verdict = audit.audit_mutant(mutant)
    assert verdict.caught_by, f"no check catches {mutant.name} ({mutant.bug})"
    assert verdict.diagnosed, f"{mutant.name}: no message names '{mutant.diagnosis}':\n" + \
        "\n---\n".join(verdict.messages)


def test_mutants_cover_both_classes():
    assert len(MUTANTS) >= 12
    assert {m.target for m in MUTANTS} == {"Dropout", "BatchNorm1d"}


def test_the_family_runs_fast():
    start = time.perf_counter()
    for name in FAMILY:
        audit.run(registry.CHECKS[name])
    assert time.perf_counter() - start < 1.0


# --------------------------------------------------------------------------- students
@pytest.mark.parametrize("name", FAMILY)
def test_a_correct_student_passes(name):
    target, = registry.CHECKS[name].targets
    assert grade(name, notebook(STUDENT)[target]) is None


def test_a_binomial_dropout_passes_too():
    dropout = student_with("Dropout", '''
def forward(self, x):
    keep = 1 - self.p if self.training else 1.0
    self.mask = np.random.binomial(1, keep, size=x.shape) / keep
    return x * self.mask
''')
    for name in ("dropout_train_forward", "dropout_backward", "dropout_eval", "dropout_p_zero"):
        assert grade(name, dropout) is None, name


def test_backward_that_raises_names_the_students_line():
    dropout = student_with("Dropout", '''
def backward(self, grad_output):
    return grad_output * self.maks
''')
    message = grade("dropout_backward", dropout)
    assert "Dropout(0.2).backward raised AttributeError" in message
    assert "your backward(): return grad_output * self.maks" in message


def test_forward_that_returns_none():
    batchnorm = student_with("BatchNorm1d", '''
def forward(self, x):
    self.y = super().forward(x)
''')
    assert "is None. Did you forget a `return`" in grade("batchnorm_forward_train", batchnorm)


def test_forward_with_the_wrong_shape():
    dropout = student_with("Dropout", '''
def forward(self, x):
    return x[np.random.rand(*x.shape) >= self.p] / (1 - self.p)
''')
    message = grade("dropout_train_forward", dropout)
    assert "Dropout(0.2).forward output has shape" in message and "expected (200, 250)" in message


def test_an_endless_forward_is_stopped(monkeypatch):
    monkeypatch.setattr(registry, "SECONDS_PER_CHECK", 0.3)
    batchnorm = student_with("BatchNorm1d", '''
def forward(self, x):
    while True:
        pass
''')
    assert "did not finish within 0.3 s" in grade("batchnorm_running_stats", batchnorm)


def test_a_stub_is_reported_as_not_implemented():
    batchnorm = student_with("BatchNorm1d", '''
def backward(self, grad_output):
    raise NotImplementedError
''')
    assert "BatchNorm1d.backward is not implemented yet" in grade("batchnorm_backward_input",
                                                                  batchnorm)


def test_running_stats_under_other_names_are_asked_for_by_name():
    batchnorm = notebook('''
import numpy as np

class BatchNorm1d:
    def __init__(self, num_features, momentum=0.1):
        self.moving_mean, self.moving_var = np.zeros(num_features), np.ones(num_features)
    def forward(self, x):
        self.moving_mean = 0.9 * self.moving_mean + 0.1 * x.mean(axis=0)
        return (x - x.mean(axis=0)) / x.std(axis=0)
''')["BatchNorm1d"]
    message = grade("batchnorm_running_stats", batchnorm)
    assert "no attribute running_mean" in message and "PyTorch's names" in message


def test_a_class_without_eval_fails_with_a_clean_message():
    dropout = notebook('''
import numpy as np

class Dropout:
    def __init__(self, p):
        self.p = p
    def forward(self, x):
        return x
    def backward(self, grad_output):
        return grad_output
''')["Dropout"]
    assert "Dropout(0.5).eval() raised AttributeError" in grade("dropout_eval", dropout)
    assert "zeroed 0.0%" in grade("dropout_train_forward", dropout)


def test_np_var_with_ddof_is_named():
    batchnorm = student_with("BatchNorm1d", '''
def forward(self, x):
    if not self.training:
        return super().forward(x)
    self.batch_stats = True
    mean, var = x.mean(axis=0), x.var(axis=0, ddof=1)
    self.std = np.sqrt(var + self.eps)
    self.x_hat = (x - mean) / self.std
    return self.weight.data * self.x_hat + self.bias.data
''')
    assert "unbiased variance (divided by N - 1)" in grade("batchnorm_forward_train", batchnorm)


def test_dropout_that_changes_its_input_in_place():
    dropout = student_with("Dropout", '''
def forward(self, x):
    self.mask = (np.random.rand(*x.shape) >= self.p) / (1 - self.p)
    x *= self.mask
    return x
''')
    assert "modified its input array in place" in grade("dropout_train_forward", dropout)


def test_reusing_the_reference_scores_zero():
    from minitorch_ref import nn

    class BatchNorm1d(nn.BatchNorm1d):
        pass

    assert "scores zero" in grade("batchnorm_eval", BatchNorm1d)


@pytest.mark.parametrize("name", FAMILY)
def test_messages_show_no_check_code(name):
    broken = notebook(STUDENT + '''
class Broken(BatchNorm1d):
    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.get("num_features", args[0] if args and args[0] >= 1 else 3))
    def forward(self, x):
        return x[::-1]
    def backward(self, grad_output):
        return grad_output[::-1]
''')["Broken"]
    message = grade(name, broken)
    assert message and "Traceback" not in message and "def " not in message
    assert "autograder" not in message and "minitorch_ref" not in message
