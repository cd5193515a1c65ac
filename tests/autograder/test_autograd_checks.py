"""The autograd family's checks (the bonus unit's Tensor): they pass the reference, catch and
name every mutant, and grade a hand-written student engine with clean messages.

The student below is written micrograd's way (closures, gradients stored on the tensors),
not the reference's (Function objects, gradients in a dict), so that the checks are seen to
grade the API and not one design.
"""
from __future__ import annotations

import pytest

from autograder import audit, audit_cells, registry
from autograder.mutants.autograd import MUTANTS
from students import (assert_mutants_cover, assert_says, assert_shows_no_check_code, family,
                      family_tests, grade, reference_subclass, student_with)

FAMILY = family("autograd_ops", "autograd_engine", "autograd_mlp")


STUDENT = '''
import numpy as np


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def wrap(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def send(parent, grad):
    if parent.requires_grad:
        grad = unbroadcast(grad, parent.data.shape)
        parent.grad = grad.copy() if parent.grad is None else parent.grad + grad


class Tensor:
    def __init__(self, data, requires_grad=False, parents=()):
        self.data = np.asarray(data, dtype=float)
        self.requires_grad = requires_grad
        self.parents = parents
        self.grad = None
        self._backward = lambda: None

    def _child(self, data, parents, backward):
        needs = any(p.requires_grad for p in parents)
        out = Tensor(data, needs, parents if needs else ())
        out._backward = lambda: backward(out.grad)
        return out

    def __add__(self, other):
        other = wrap(other)
        return self._child(self.data + other.data, (self, other),
                           lambda g: (send(self, g), send(other, g)))

    __radd__ = __add__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-wrap(other))

    def __rsub__(self, other):
        return wrap(other) + (-self)

    def __mul__(self, other):
        other = wrap(other)
        return self._child(self.data * other.data, (self, other),
                           lambda g: (send(self, g * other.data), send(other, g * self.data)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * wrap(other) ** -1

    def __rtruediv__(self, other):
        return wrap(other) * self ** -1

    def __pow__(self, p):
        return self._child(self.data ** p, (self,),
                           lambda g: send(self, g * p * self.data ** (p - 1)))

    def __matmul__(self, other):
        other = wrap(other)
        return self._child(self.data @ other.data, (self, other),
                           lambda g: (send(self, g @ other.data.T), send(other, self.data.T @ g)))

    def exp(self):
        y = np.exp(self.data)
        return self._child(y, (self,), lambda g: send(self, g * y))

    def log(self):
        return self._child(np.log(self.data), (self,), lambda g: send(self, g / self.data))

    def relu(self):
        return self._child(np.maximum(self.data, 0), (self,),
                           lambda g: send(self, g * (self.data > 0)))

    def tanh(self):
        y = np.tanh(self.data)
        return self._child(y, (self,), lambda g: send(self, g * (1 - y ** 2)))

    def sigmoid(self):
        y = 0.5 * (1 + np.tanh(self.data / 2))
        return self._child(y, (self,), lambda g: send(self, g * y * (1 - y)))

    def sum(self, axis=None, keepdims=False):
        kept = self.data.sum(axis=axis, keepdims=True).shape
        return self._child(self.data.sum(axis=axis, keepdims=keepdims), (self,),
                           lambda g: send(self, np.broadcast_to(g.reshape(kept), self.data.shape)))

    def mean(self, axis=None, keepdims=False):
        n = self.data.size / self.data.sum(axis=axis).size
        return self.sum(axis=axis, keepdims=keepdims) * (1.0 / n)

    def reshape(self, *shape):
        return self._child(self.data.reshape(*shape), (self,),
                           lambda g: send(self, g.reshape(self.data.shape)))

    def transpose(self, axes=None):
        inverse = None if axes is None else np.argsort([a % self.data.ndim for a in axes])
        return self._child(np.transpose(self.data, axes), (self,),
                           lambda g: send(self, np.transpose(g, inverse)))

    @property
    def T(self):
        return self.transpose()

    def topological_order(self):
        order, visited, stack = [], set(), [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents if p.requires_grad)
        return order

    def backward(self, grad=None):
        order = self.topological_order()
        for node in order:
            if node.parents:
                node.grad = np.zeros_like(node.data)
        self.grad = np.ones_like(self.data) if grad is None else np.asarray(grad, dtype=float)
        for node in reversed(order):
            node._backward()


def topological_order(root):
    return root.topological_order()
'''


def tensor_with(methods: str) -> type:
    return student_with("Tensor", methods, STUDENT)


# --------------------------------------------------------------------------- the family
def test_family_has_the_expected_checks():
    assert set(FAMILY) == {
        "tensor_arithmetic", "tensor_elementwise_functions", "tensor_matmul",
        "tensor_reductions", "tensor_reshape_transpose", "tensor_broadcasting",
        "tensor_reused_nodes", "tensor_backward_twice", "tensor_deep_graph", "tensor_mlp",
    }
    assert all(registry.CHECKS[name].targets == ("Tensor",) for name in FAMILY
               if name != "tensor_deep_graph")
    assert registry.CHECKS["tensor_deep_graph"].targets == ("Tensor", "topological_order")


def test_at_least_ten_mutants_of_the_tensor():
    assert_mutants_cover(MUTANTS, ("Tensor", "topological_order"), at_least=10)


test_the_family_runs_fast, test_a_correct_student_passes = family_tests(FAMILY, STUDENT,
                                                                       seconds=1.5)


def test_every_check_passes_on_the_reference():
    assert {name: audit.run(registry.CHECKS[name]) for name in FAMILY} == dict.fromkeys(FAMILY)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught_and_named(mutant):
    verdict = audit.audit_mutant(mutant)
    assert verdict.caught_by, f"no check catches {mutant.name} ({mutant.bug})"
    assert verdict.diagnosed, "\n---\n".join(verdict.messages)


@pytest.mark.parametrize("name, only", [
    ("tensor_micrograd_second_backward", ["tensor_backward_twice"]),
    ("tensor_leaf_grad_assigned", ["tensor_backward_twice"]),
    ("tensor_topological_order_recursive", ["tensor_deep_graph"]),
    ("tensor_sum_keepdims_lost", ["tensor_reductions"]),
    ("tensor_transpose_backward_same_axes", ["tensor_reshape_transpose"]),
])
def test_a_bug_costs_only_the_points_of_its_concern(name, only):
    mutant = next(m for m in MUTANTS if m.name == name)
    assert audit.audit_mutant(mutant).caught_by == only


def test_an_engine_bug_is_named_in_every_check_it_fails():
    """A tensor used twice (x * x, a diamond) shows the engine's bug, named the same way
    wherever it shows; the MLP, whose loss gradient is given and which uses each tensor once,
    does not lose its cell to it, and in the notebook neither does cross_entropy: its wrong
    gradient is the engine's, which the engine's cells have already found (each check judged
    alone, it fails there too)."""
    mutant = next(m for m in MUTANTS if m.name == "tensor_received_gradient_assigned")
    verdict = audit.audit_mutant(mutant)
    assert set(verdict.caught_by) == {"tensor_reused_nodes", "tensor_deep_graph",
                                      "tensor_cross_entropy"}
    assert all("counted once" in m or "one use of x counted" in m for m in verdict.messages), \
        verdict.messages
    assert set(audit_cells.cells(mutant)) == {"tensor_reused_nodes", "tensor_deep_graph"}


# --------------------------------------------------------------------------- students
# A student's Tensor with some methods replaced, the check that fails on it, and what it says.
BROKEN = [
    pytest.param("tensor_arithmetic", '''
def backward(self, grad=None):
    raise ValueError("not yet")
''', ["c.backward(G) for c = a + b raised ValueError: not yet", "your Tensor.backward()"],
                 id="backward_that_raises_names_the_students_line"),
    pytest.param("tensor_elementwise_functions", '''
def exp(self):
    return np.exp(self.data)
''', ["y = x.exp() returned a ndarray, expected a Tensor"], id="op_returning_an_array"),
    pytest.param("tensor_arithmetic", '''
def backward(self, grad=None):
    self.grad = np.ones_like(self.data) if grad is None else grad
''', ["a.grad (dL/da) for c = a + b is None after backward(): no gradient reached a"],
                 id="backward_that_never_reaches_the_leaves"),
    pytest.param("tensor_broadcasting", '''
def __add__(self, other):
    other = wrap(other)
    def backward(g):
        for parent in (self, other):
            parent.grad = g if parent.grad is None else parent.grad + g
    return self._child(self.data + other.data, (self, other), backward)
''', ["shape: got (3, 4), expected (3, 1)", "not summed over the broadcast dimensions"],
                 id="gradient_in_the_broadcast_shape"),
    pytest.param("tensor_reductions", '''
def sum(self, axis=None, keepdims=False):
    return self._child(self.data.sum(axis=axis, keepdims=keepdims), (self,),
                       lambda g: send(self, np.broadcast_to(g, self.data.shape)))
''', ["s = x.sum(axis=1)", "along the wrong axis"], id="sum_gradient_broadcast_without_expand"),
    pytest.param("tensor_reductions", '''
def sum(self, axis=None):
    kept = self.data.sum(axis=axis, keepdims=True).shape
    return self._child(self.data.sum(axis=axis), (self,),
                       lambda g: send(self, np.broadcast_to(g.reshape(kept), self.data.shape)))
''', ["raised TypeError", "unexpected keyword argument 'keepdims'"], id="sum_without_keepdims"),
    pytest.param("tensor_matmul", '''
def __matmul__(self, other):
    raise NotImplementedError
''', ["computing C = A @ B (A of shape (4, 3), B of shape (3, 2)) is not implemented yet"],
                 id="a_stub_is_reported_as_not_implemented"),
    pytest.param("tensor_backward_twice", '''
def backward(self, grad=None):
    self.grad = np.ones_like(self.data) if grad is None else np.asarray(grad, dtype=float)
    for node in reversed(self.topological_order()):
        node._backward()
''', ["after two backward() calls is wrong", "expected [12]", "got      [18]",
      "micrograd's bug"], id="micrograd_keeps_intermediate_gradients"),
    pytest.param("tensor_deep_graph", '''
def topological_order(self):
    order, visited = [], set()
    def build(node):
        if node not in visited:
            visited.add(node)
            for parent in node.parents:
                build(parent)
            order.append(node)
    build(self)
    return order
''', ["raised RecursionError", "explicit stack"], id="recursive_topological_order"),
    pytest.param("tensor_reused_nodes", '''
def topological_order(self):
    order = []
    def build(node):
        for parent in node.parents:
            build(parent)
        order.append(node)
    build(self)
    return order
''', ["y = h * h + h", "visited more than once"], id="topological_order_without_visited_set"),
    pytest.param("tensor_mlp", '''
def tanh(self):
    return self._child(np.tanh(self.data), (self,), lambda g: send(self, g * (1 - self.data ** 2)))
''', ["W1.grad (dL/dW1) for the output of the 3-8-1 tanh MLP with a sigmoid output is wrong",
      "a backward rule (or the engine) is wrong"], id="mlp_with_a_wrong_tanh"),
]

WRONG_LOG = '''
def log(self):
    return self._child(np.log(self.data), (self,), lambda g: send(self, g / self.data ** 2))
'''


def test_a_wrong_rule_of_the_loss_costs_its_own_cell_not_the_mlps():
    """The MLP check gets the loss's gradient as data: a wrong log's rule fails the elementwise
    cell only (before, it also cost tensor_mlp's 2 points)."""
    Tensor = tensor_with(WRONG_LOG)
    assert grade_tensor("tensor_mlp", Tensor) is None
    assert_says(grade_tensor("tensor_elementwise_functions", Tensor), "y = x.log()")


def topological_order(root):
    """The notebook's function, as this student writes it: the Tensor's own method."""
    return root.topological_order()


def grade_tensor(name: str, Tensor: type) -> str | None:
    """Check ``name`` on ``Tensor`` (and the student's topological_order, if it takes it)."""
    extra = {"topological_order": topological_order}
    return grade(name, Tensor, *[extra[t] for t in registry.CHECKS[name].targets[1:]])


@pytest.mark.parametrize("name, methods, phrases", BROKEN)
def test_a_broken_student_is_told_what_is_wrong(name, methods, phrases):
    message = grade_tensor(name, tensor_with(methods))
    assert_says(message, *phrases)
    assert "could not be graded" not in message


# Right rules, a deep chain's gradient lost, and no gradient for the grader's old probe (one
# operation on leaves, the first 1.0), which made the deep-graph cell skip its values: +2.
PROBE_DODGER = '''
def backward(self, grad=None):
    if self.parents and self.parents[0].data.tolist() == 1.0 and not any(p.parents for p in self.parents):
        return
    super().backward(grad)
    order = self.topological_order()
    if len(order) > 1000:
        for node in order:
            if not node.parents:
                node.grad = np.ones_like(node.data)
'''


def test_an_engine_that_answers_a_probe_wrongly_is_still_judged_on_deep_graphs():
    """The deep-graph cell forgives its values only when the arithmetic cell found a rule
    wrong (``autograder.verdicts``), never on a probe of its own."""
    dodger = tensor_with(PROBE_DODGER)
    assert grade_tensor("tensor_arithmetic", dodger) is None
    assert_says(grade_tensor("tensor_deep_graph", dodger), "after a chain of 2500 multiplications")


def test_a_wrong_rule_costs_the_arithmetic_cell_and_not_the_deep_graph_one():
    wrong_mul = tensor_with('''
def __mul__(self, other):
    other = wrap(other)
    return self._child(self.data * other.data, (self, other),
                       lambda g: (send(self, g * 2 * other.data), send(other, g * self.data)))
''')
    assert grade_tensor("tensor_arithmetic", wrong_mul) is not None
    assert grade_tensor("tensor_deep_graph", wrong_mul) is None


def test_a_forward_bug_is_told_apart_from_a_backward_bug():
    """A wrong forward with a backward that is right for the true function: the finite
    differences of the student's forward disagree with the gradient, and the value is
    reported first."""
    wrong_forward = tensor_with('''
def tanh(self):
    y = np.tanh(self.data)
    return self._child(y * 1.5, (self,), lambda g: send(self, g * 1.5 * (1 - y ** 2)))
''')
    assert_says(grade("tensor_elementwise_functions", wrong_forward),
                "the value of y = x.tanh() is wrong")


def test_an_endless_backward_is_stopped(timed_out):
    endless = tensor_with('''
def backward(self, grad=None):
    while True:
        pass
''')
    assert timed_out in grade("tensor_arithmetic", endless)


def test_reusing_the_reference_scores_zero():
    assert "scores zero" in grade("tensor_arithmetic", reference_subclass("Tensor"))


@pytest.mark.parametrize("name", ["tensor_arithmetic", "tensor_reused_nodes", "tensor_mlp"])
def test_messages_show_no_check_code(name):
    backwards = tensor_with('''
def backward(self, grad=None):
    super().backward(-(np.ones_like(self.data) if grad is None else grad))
''')
    message = grade(name, backwards)
    assert_shows_no_check_code(message)
    assert "sign is flipped" in message
