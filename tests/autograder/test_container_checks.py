"""The container family's checks (Sequential and the Module interface through it): the family
has its checks (test_mutation_audit runs them on the reference and every mutant), grades only
Sequential (never the layers in it), and grades hand-written student classes with clean
messages."""
from __future__ import annotations

import pytest

from autograder import audit, registry
from autograder.mutants import catalogue
from students import (ENDLESS_FORWARD, LINEAR_CLASS, MODULES, assert_shows_no_check_code, family,
                      family_tests, grade_student, notebook, reference_subclass, student_with)

FAMILY = family("container", "container_state")

# The student's Module, Dropout and BatchNorm1d, their Linear made a Module (its
# super().__init__() then reaches Module's), ReLU and the container.
STUDENT = MODULES + LINEAR_CLASS + '''

class Linear(Linear, Module):
    pass


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


# The unit's read-only layers the mode and buffer checks take: one with a training mode, one
# with buffers, as this student's Dropout and BatchNorm1d are.
GaussianNoise, Standardize = Dropout, BatchNorm1d
'''


def grade_with(name: str, **replaced: type) -> str | None:
    """Check ``name`` on the correct student's classes, some of them ``replaced``."""
    return grade_student(name, notebook(STUDENT), **replaced)


def sequential_with(methods: str) -> type:
    return student_with("Sequential", methods, STUDENT)


# --------------------------------------------------------------------------- the family
def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "sequential_forward", "sequential_backward", "sequential_parameters",
        "sequential_named_parameters", "sequential_grads", "sequential_zero_grad",
        "sequential_modes", "sequential_state_dict", "sequential_state_dict_copies",
        "sequential_state_dict_buffers", "sequential_repr",
    }
    assert all(registry.CHECKS[name].targets[0] == "Sequential" for name in FAMILY)


LAYER_MUTANTS = [m for m in catalogue() if m.target in ("Linear", "ReLU", "Dropout", "BatchNorm1d")]


@pytest.mark.parametrize("mutant", LAYER_MUTANTS, ids=[m.name for m in LAYER_MUTANTS])
def test_a_buggy_layer_is_not_blamed_on_sequential(mutant):
    """A layer's bug passes the Sequential checks, or fails them naming the layer."""
    for name in FAMILY:
        check = registry.CHECKS[name]
        if mutant.target in check.targets:
            message = audit.run(check, {mutant.target: mutant.cls})
            assert message is None or f"fix {mutant.cls.__name__} first" in message, name


test_the_family_runs_fast, test_a_correct_student_passes = family_tests(FAMILY, STUDENT,
                                                                       seconds=1.0)


# --------------------------------------------------------------------------- students
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
    assert "your Linear.backward(): self.weight.grad += self.x.T @ grad_output" in message
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


def test_an_endless_forward_is_stopped(timed_out):
    sequential = sequential_with(ENDLESS_FORWARD)
    assert timed_out in grade_with("sequential_forward", Sequential=sequential)


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
    sequential = reference_subclass("Sequential")
    assert "scores zero" in grade_with("sequential_forward", Sequential=sequential)


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
    if name in ("sequential_forward", "sequential_backward", "sequential_named_parameters",
                "sequential_repr"):
        assert message is not None
    if message is not None:
        assert_shows_no_check_code(message)
