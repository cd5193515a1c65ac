"""The container family's checks (Sequential and the Module interface through it): they pass
the reference, catch and name every mutant, grade only Sequential (never the layers in it),
and grade hand-written student classes with clean messages."""
from __future__ import annotations

import time

import pytest

from autograder import audit, registry
from autograder.mutants import catalogue
from autograder.mutants.container import MUTANTS
from test_regularization_checks import STUDENT as MODULES, grade, notebook, student_with

FAMILY = sorted(name for name, c in registry.CHECKS.items()
                if c.run.__module__ == "autograder.checks.container")

# The student's Module, Dropout and BatchNorm1d, plus the layers and the container.
STUDENT = MODULES + '''

class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / np.sqrt(in_features)
        self.weight = Parameter(np.random.uniform(-bound, bound, (in_features, out_features)))
        self.bias = Parameter(np.random.uniform(-bound, bound, out_features)) if bias else None

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


class ReLU(Module):
    def forward(self, x):
        self.mask = x > 0
        return x * self.mask

    def backward(self, grad_output):
        return grad_output * self.mask


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        self.layers = list(layers)

    def named_children(self):
        return [(str(i), layer) for i, layer in enumerate(self.layers)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def backward(self, grad_output):
        for layer in reversed(self.layers):
            grad_output = layer.backward(grad_output)
        return grad_output
'''


def student() -> dict:
    return notebook(STUDENT)


def grade_with(name: str, **replaced: type) -> str | None:
    """Check ``name`` on the correct student's classes, some of them ``replaced``."""
    classes = {**student(), **replaced}
    return grade(name, *(classes[target] for target in registry.CHECKS[name].targets))


def sequential_with(methods: str) -> type:
    return student_with("Sequential", methods, STUDENT)


# --------------------------------------------------------------------------- audit
def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "sequential_forward", "sequential_backward", "sequential_parameters",
        "sequential_named_parameters", "sequential_grads", "sequential_zero_grad",
        "sequential_modes", "sequential_state_dict", "sequential_state_dict_copies",
        "sequential_state_dict_buffers", "sequential_repr",
    }
    assert all(registry.CHECKS[name].targets[0] == "Sequential" for name in FAMILY)


@pytest.mark.parametrize("name", FAMILY)
def test_check_passes_on_the_reference(name):
    assert audit.run(registry.CHECKS[name]) is None


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_and_diagnosed(mutant):
    verdict = audit.audit_mutant(mutant)
    assert verdict.caught_by, f"no check catches {mutant.name} ({mutant.bug})"
    assert verdict.diagnosed is not False, f"{mutant.name}: no message names " \
        f"'{mutant.diagnosis}':\n" + "\n---\n".join(verdict.messages)


LAYER_MUTANTS = [m for m in catalogue() if m.target in ("Linear", "ReLU", "Dropout", "BatchNorm1d")]


@pytest.mark.parametrize("mutant", LAYER_MUTANTS, ids=[m.name for m in LAYER_MUTANTS])
def test_a_buggy_layer_is_not_blamed_on_sequential(mutant):
    """A layer's bug passes the Sequential checks, or fails them naming the layer."""
    for name in FAMILY:
        check = registry.CHECKS[name]
        if mutant.target in check.targets:
            message = audit.run(check, {mutant.target: mutant.cls})
            assert message is None or f"fix {mutant.target} first" in message, name


def test_the_family_runs_fast():
    start = time.perf_counter()
    for name in FAMILY:
        audit.run(registry.CHECKS[name])
    assert time.perf_counter() - start < 1.0


# --------------------------------------------------------------------------- students
@pytest.mark.parametrize("name", FAMILY)
def test_a_correct_student_passes(name):
    assert grade_with(name) is None


def test_a_student_linear_bug_does_not_fail_sequential():
    linear = student_with("Linear", '''
def backward(self, grad_output):
    self.weight.grad += self.x.T @ grad_output / len(self.x)
    self.bias.grad = grad_output.sum(axis=0)
    return -grad_output @ self.weight.data.T
''', STUDENT)
    for name in FAMILY:
        assert grade_with(name, Linear=linear) is None, name


def test_a_linear_that_raises_is_named_as_the_culprit():
    linear = student_with("Linear", '''
def forward(self, x):
    return x @ self.weights
''', STUDENT)
    message = grade_with("sequential_forward", Linear=linear)
    assert "layer 0 (Linear).forward (called on its own) raised AttributeError" in message
    assert "fix Linear first" in message


def test_backward_in_forward_order_is_named():
    sequential = sequential_with('''
def backward(self, grad_output):
    for layer in self.layers:
        grad_output = layer.backward(grad_output)
    return grad_output
''')
    message = grade_with("sequential_backward", Sequential=sequential)
    assert "Sequential.backward raised ValueError" in message
    assert "your backward(): self.weight.grad += self.x.T @ grad_output" in message  # in Linear
    assert "runs in forward order" in message


def test_backward_that_returns_none():
    sequential = sequential_with('''
def backward(self, grad_output):
    for layer in reversed(self.layers):
        grad_output = layer.backward(grad_output)
''')
    message = grade_with("sequential_backward", Sequential=sequential)
    assert "is None. Did you forget a `return`" in message


def test_forward_that_skips_a_layer_names_it():
    sequential = sequential_with('''
def forward(self, x):
    for layer in self.layers[:-2]:
        x = layer(x)
    return self.layers[-1](x)
''')
    message = grade_with("sequential_forward", Sequential=sequential)
    assert "never called layer 3 (ReLU)" in message


def test_an_endless_forward_is_stopped(monkeypatch):
    monkeypatch.setattr(registry, "SECONDS_PER_CHECK", 0.3)
    sequential = sequential_with('''
def forward(self, x):
    while True:
        pass
''')
    assert "did not finish within 0.3 s" in grade_with("sequential_forward", Sequential=sequential)


def test_a_model_that_copies_its_layers():
    sequential = sequential_with('''
def __init__(self, *layers):
    import copy
    super().__init__(*[copy.deepcopy(layer) for layer in layers])
''')
    message = grade_with("sequential_parameters", Sequential=sequential)
    assert "not the layers' own Parameters" in message


def test_train_that_is_not_propagated():
    sequential = sequential_with('''
def train(self, mode=True):
    self.training = mode
    return self
''')
    message = grade_with("sequential_modes", Sequential=sequential)
    assert "its child 0 (Sequential) has training=True" in message
    assert "propagated to every child" in message


def test_a_state_dict_of_references():
    sequential = sequential_with('''
def state_dict(self):
    return {name: p.data for name, p in self.named_parameters()}
''')
    assert grade_with("sequential_state_dict", Sequential=sequential) is None
    assert "no copies" in grade_with("sequential_state_dict_copies", Sequential=sequential)


def test_a_state_dict_that_is_a_list():
    sequential = sequential_with('''
def state_dict(self):
    return [p.data.copy() for p in self.parameters()]
''')
    message = grade_with("sequential_state_dict", Sequential=sequential)
    assert "should return a dict from names to arrays, got list" in message


def test_reusing_the_reference_scores_zero():
    from minitorch_ref import nn

    class Sequential(nn.Sequential):
        pass

    assert "scores zero" in grade_with("sequential_forward", Sequential=Sequential)


@pytest.mark.parametrize("name", FAMILY)
def test_messages_show_no_check_code(name):
    broken = sequential_with('''
def __init__(self, *layers):
    super().__init__(*layers[::-1])

def backward(self, grad_output):
    return grad_output

def __repr__(self):
    return "model"
''')
    message = grade_with(name, Sequential=broken)
    if name in ("sequential_forward", "sequential_backward", "sequential_parameters",
                "sequential_repr"):
        assert message is not None
    if message is not None:
        assert "Traceback" not in message and "def " not in message
        assert "autograder" not in message and "minitorch_ref" not in message
