"""What the autograder tests share: students' notebooks, run as cells, and the checks graded on
them (``from students import ...``: pytest puts this folder on ``sys.path``)."""
from __future__ import annotations

import itertools
import linecache
import time

import pytest

from autograder import audit, check, registry
from course.testing.failure import CheckFailure

# --------------------------------------------------------------------------- notebooks
_CELLS = itertools.count(1)


def notebook(source: str, **names) -> dict:
    """Run ``source`` as a notebook cell would (its own globals, holding ``names``, and its
    lines in linecache, as IPython keeps them); return its namespace."""
    filename = f"<ipython-input-{next(_CELLS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", **names}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def solution_source(unit: str, cell_id: str) -> str:
    """The code of a source notebook's solution cell, markers removed: a correct student's."""
    from autograder.notebooks.sync import reference_code
    from autograder.notebooks.units import Unit, read
    return reference_code(next(c.source for c in read(Unit(unit).source).cells
                               if c.get("id") == cell_id))


def notebook_class(source: str, name: str, **names) -> type:
    """Class (or function) ``name`` of the notebook cell ``source``."""
    return notebook(source, **names)[name]


def student_with(name: str, methods: str, source: str) -> type:
    """The class ``name`` of the correct student's notebook ``source``, with some methods
    replaced by ``methods`` (written unindented)."""
    body = "\n".join("    " + line for line in methods.strip("\n").splitlines())
    return notebook_class(source + f"\n\nclass {name}({name}):\n{body}\n", name)


# Methods (for student_with) that never return, and that are not written yet.
ENDLESS_FORWARD = '''
def forward(self, x):
    while True:
        pass
'''

STUB_BACKWARD = '''
def backward(self, grad_output):
    raise NotImplementedError
'''


def reference_subclass(name: str) -> type:
    """A student's class ``name`` that only subclasses the reference's: it must score zero."""
    return type(name, (audit.reference(name),), {})


# --------------------------------------------------------------------------- grading
def grade(name: str, *classes, **named) -> str | None:
    """The failure message of check ``name`` on ``classes``, or None if it passes."""
    try:
        getattr(check, name)(*classes, **named)
    except CheckFailure as failure:
        return str(failure)
    return None


def grade_student(name: str, namespace: dict, **replaced) -> str | None:
    """Grade check ``name`` on the classes it takes, by name, from a student's ``namespace``
    (some of them ``replaced``)."""
    classes = {**namespace, **replaced}
    return grade(name, **{target: classes[target] for target in registry.CHECKS[name].targets})


def failure(name: str, *classes, **named) -> str:
    """The message of check ``name``, which must fail on ``classes`` with a message written
    for the student (no traceback, no 'could not be graded')."""
    message = grade(name, *classes, **named)
    assert message is not None, f"{name} passes"
    assert "could not be graded" not in message and "Traceback" not in message, message
    return message


def assert_says(message: str | None, *phrases: str) -> None:
    """``message`` (a check failed) says each of ``phrases``."""
    assert message is not None, "the check passes"
    for phrase in phrases:
        assert phrase in message, message


def assert_shows_no_check_code(message: str | None) -> None:
    """``message`` (a check failed) shows no traceback, code or name of the grader's."""
    assert message, "the check passes"
    assert "Traceback" not in message and "def " not in message, message
    assert "autograder" not in message and "minitorch_ref" not in message, message


# --------------------------------------------------------------------------- families
def family(*modules: str) -> list[str]:
    """The names of the checks that ``autograder.checks.<module>`` defines, sorted."""
    modules = tuple(f"autograder.checks.{module}" for module in modules)
    return sorted(name for name, c in registry.CHECKS.items() if c.run.__module__ in modules)


def assert_mutants_cover(mutants: list, targets, at_least: int) -> None:
    """There are ``at_least`` mutants, of the classes ``targets`` and no others, and each has a
    diagnosis (test_mutation_audit asserts that a failure message names it)."""
    assert len(mutants) >= at_least
    assert {m.target for m in mutants} == set(targets)
    assert all(m.diagnosis is not None for m in mutants)


def family_tests(checks: list[str], source: str, seconds: float) -> tuple:
    """The tests every family of layer checks has, for its test module to bind as
    ``test_the_family_runs_fast, test_a_correct_student_passes = family_tests(...)``: the
    ``checks`` run on the reference within ``seconds`` of computing (this process's CPU time:
    on a busy machine the clock on the wall would time the other processes too), and each
    passes the correct student's notebook ``source``."""

    def test_the_family_runs_fast():
        start = time.process_time()
        for name in checks:
            audit.run(registry.CHECKS[name])
        assert time.process_time() - start < seconds

    @pytest.mark.parametrize("name", checks)
    def test_a_correct_student_passes(name):
        assert grade_student(name, notebook(source)) is None

    return test_the_family_runs_fast, test_a_correct_student_passes


# --------------------------------------------------------------------------- students' notebooks
# A student's layers, written the way the course teaches them. LINEAR is the first notebook's
# standalone Linear; MODULES the notebook of Dropout and BatchNorm1d on a Module base class, to
# which the container tests add LINEAR_CLASS (as a Module), ReLU and Sequential.
PARAMETER = '''
import numpy as np


class Parameter:
    def __init__(self, data):
        data = np.asarray(data)
        self.data = data if data.dtype.kind == "f" else data.astype(float)
        self.grad = np.zeros_like(self.data)
'''

LINEAR_CLASS = '''

class Linear:
    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float64):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        rng = np.random.default_rng() if rng is None else rng
        bound = 1 / np.sqrt(in_features)
        weight = rng.uniform(-bound, bound, (in_features, out_features))
        self.weight = Parameter(weight.astype(dtype))
        self.bias = None
        if bias:
            self.bias = Parameter(rng.uniform(-bound, bound, out_features).astype(dtype))

    def forward(self, x):
        self.x = x
        y = x @ self.weight.data
        return y + self.bias.data if self.bias is not None else y

    def backward(self, grad_output):
        self.weight.grad += self.x.T @ grad_output
        if self.bias is not None:
            self.bias.grad += grad_output.sum(axis=0)
        return grad_output @ self.weight.data.T

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}"
'''

LINEAR = PARAMETER + LINEAR_CLASS

GENERATOR = '''

_generator = np.random.default_rng()


def manual_seed(seed):
    global _generator
    _generator = np.random.default_rng(seed)


def default_rng():
    return _generator
'''

MODULES = PARAMETER + GENERATOR + '''

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

    def load_state_dict(self, state, strict=True):
        for name, p in self.named_parameters():
            if strict or name in state:
                p.data[...] = state[name]
        self.load_buffers(state, "", strict)

    def load_buffers(self, state, prefix, strict):
        for name in self.buffer_names:
            if strict or prefix + name in state:
                getattr(self, name)[...] = state[prefix + name]
        for child_name, child in self.named_children():
            child.load_buffers(state, f"{prefix}{child_name}.", strict)

    def extra_repr(self):
        return ""

    def __repr__(self):
        children = self.named_children()
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        extra = [f"  {self.extra_repr()}"] if self.extra_repr() else []
        lines = [f"  ({name}): " + repr(c).replace("\\n", "\\n  ") for name, c in children]
        return type(self).__name__ + "(\\n" + "\\n".join(extra + lines) + "\\n)"


class Dropout(Module):
    def __init__(self, p=0.5, rng=None):
        super().__init__()
        self.p, self.rng = p, rng

    def forward(self, x):
        if not self.training or self.p == 0:
            self.mask = np.ones_like(x)
            return x
        rng = default_rng() if self.rng is None else self.rng
        self.mask = (rng.random(x.shape) >= self.p).astype(x.dtype) / (1 - self.p)
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
        self.buffer_names = ["running_mean", "running_var", "num_batches_tracked"]
        self.num_batches_tracked = np.array(0)

    def forward(self, x):
        self.used_batch_stats = self.training
        if self.training:
            n, mean = len(x), x.mean(axis=0)
            var = ((x - mean) ** 2).mean(axis=0)
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        self.inv_std = 1 / np.sqrt(var + self.eps)
        self.x_hat = (x - mean) * self.inv_std
        return self.weight.data * self.x_hat + self.bias.data

    def backward(self, grad_output):
        self.weight.grad += (grad_output * self.x_hat).sum(axis=0)
        self.bias.grad += grad_output.sum(axis=0)
        g = grad_output * self.weight.data
        if not self.used_batch_stats:
            return g * self.inv_std
        n = len(g)
        return (n * g - g.sum(axis=0) - self.x_hat * (g * self.x_hat).sum(axis=0)) * self.inv_std / n

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"
'''
