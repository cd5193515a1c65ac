"""Autograd engines with one classic bug each: a wrong local derivative, a broadcast gradient
not summed back, or a backward pass that visits the graph wrongly (micrograd's second-call
bug, a topological order without a visited set, a gradient assigned instead of added...).

The reference ``Tensor`` creates its results as reference Tensors with the reference's
Functions, so a mutant cannot just override one method: ``MutantTensor`` routes every
operation through ``FUNCTIONS`` (one Function replaced by a buggy subclass) and returns its
own class, and its ``backward`` runs ``engine``, a plain engine without the reference's
shape checks (a student's usually has none, and they would hide the bug's signature).
"""
from __future__ import annotations

import numpy as np

from autograder.checks._engine_mistakes import _with_repeats
from autograder.mutants import Mutant
from minitorch_ref.autograd import Tensor
from minitorch_ref.autograd import functions as F
from minitorch_ref.autograd.graph import topological_order
from minitorch_ref.autograd.tensor import _as_operand


# ============================================================================ the harness
class MutantTensor(Tensor):
    """The reference Tensor, with the Functions of ``FUNCTIONS`` and the engine ``engine``."""

    FUNCTIONS: dict[str, type] = {}

    def _apply(self, name: str, *operands, args: tuple = ()):
        fn = self.FUNCTIONS.get(name, getattr(F, name))(*args)
        inputs = tuple(_as_operand(x, self.dtype) for x in operands)
        out = type(self)(fn.forward(*(t.data for t in inputs)))
        if any(t.requires_grad for t in inputs):
            fn.needs_input_grad = tuple(t.requires_grad for t in inputs)
            out.requires_grad, out.grad_fn, out.parents = True, fn, inputs
        return out

    def backward(self, grad=None):
        grad = np.ones_like(self.data) if grad is None else np.asarray(grad, dtype=self.dtype)
        self.engine(grad)

    def engine(self, grad: np.ndarray) -> None:
        """Reverse topological order, gradients summed in a dict local to the call."""
        pending = {id(self): grad}
        for node in reversed(topological_order(self)):
            grad = pending.pop(id(node), None)
            if grad is None:
                continue
            if node.grad_fn is None:
                self.store(node, grad)
                continue
            self.send(pending, node, node.grad_fn.backward(grad))

    @staticmethod
    def store(leaf, grad: np.ndarray) -> None:
        leaf.grad = np.array(grad) if leaf.grad is None else leaf.grad + grad

    @staticmethod
    def send(pending: dict, node, parent_grads) -> None:
        for parent, g in zip(node.parents, parent_grads):
            if parent.requires_grad and g is not None:
                key = id(parent)
                pending[key] = pending[key] + g if key in pending else g

    # every operation, through _apply
    def __neg__(self):
        return self._apply("Neg", self)

    def __getitem__(self, index):
        return self._apply("GetItem", self, args=(index,))

    def sum(self, axis=None, keepdims=False):
        return self._apply("Sum", self, args=(axis, keepdims))

    def mean(self, axis=None, keepdims=False):
        return self._apply("Mean", self, args=(axis, keepdims))

    def reshape(self, *shape):
        return self._apply("Reshape", self, args=(shape[0] if len(shape) == 1 else shape,))

    def transpose(self, axes=None):
        return self._apply("Transpose", self, args=(None if axes is None else tuple(axes),))


def _binary(name: str):
    return (lambda self, other: self._apply(name, self, other),
            lambda self, other: self._apply(name, other, self))


for _method, _name in (("add", "Add"), ("sub", "Sub"), ("mul", "Mul"), ("truediv", "Div"),
                       ("pow", "Pow"), ("matmul", "MatMul")):
    _forward, _reflected = _binary(_name)
    setattr(MutantTensor, f"__{_method}__", _forward)
    setattr(MutantTensor, f"__r{_method}__", _reflected)
for _method, _name in (("exp", "Exp"), ("log", "Log"), ("relu", "ReLU"), ("tanh", "Tanh"),
                       ("sigmoid", "Sigmoid")):
    setattr(MutantTensor, _method, lambda self, _name=_name: self._apply(_name, self))


def with_function(name: str, function: type) -> type:
    """A MutantTensor whose operation ``name`` runs ``function``."""
    return type(f"Tensor_{function.__name__}", (MutantTensor,), {"FUNCTIONS": {name: function}})


# ============================================================================ wrong local rules
class AddNotUnbroadcast(F.Add):
    def backward(self, grad):
        return grad, grad


class AddSumsLeadingAxesOnly(F.Add):
    def backward(self, grad):
        return tuple(grad.sum(axis=tuple(range(grad.ndim - len(s)))) for s in self.shapes)


class SubSignLost(F.Sub):
    def backward(self, grad):
        return F.unbroadcast(grad, self.shapes[0]), F.unbroadcast(grad, self.shapes[1])


class MulSameFactor(F.Mul):
    def backward(self, grad):
        return (F.unbroadcast(grad * self.a, self.a.shape),
                F.unbroadcast(grad * self.b, self.b.shape))


class DivForgetsNumerator(F.Div):
    def backward(self, grad):
        return (F.unbroadcast(grad / self.b, self.a.shape),
                F.unbroadcast(-grad / self.b**2, self.b.shape))


class PowKeepsExponent(F.Pow):
    def backward(self, grad):
        return F.unbroadcast(grad * self.b * self.a**self.b, self.a.shape), None


class LogDividesByOutput(F.Log):
    def backward(self, grad):
        return (grad / np.log(self.a),)


class TanhFromInput(F.Tanh):
    def forward(self, a):
        self.a = a
        return super().forward(a)

    def backward(self, grad):
        return (grad * (1 - self.a**2),)


class SigmoidFromInput(F.Sigmoid):
    def forward(self, a):
        self.a = a
        return super().forward(a)

    def backward(self, grad):
        return (grad * self.a * (1 - self.a),)


class ReLUMaskIncludesZero(F.ReLU):
    def forward(self, a):
        self.positive = a >= 0
        return np.maximum(a, 0)


class MatMulGradTransposed(F.MatMul):
    def backward(self, grad):
        return grad @ self.b.T, grad.T @ self.a


class MeanWithoutOneOverN(F.Mean):
    def backward(self, grad):
        return F.Sum.backward(self, grad)


class SumBackwardWithoutExpand(F.Sum):
    def backward(self, grad):
        return (np.broadcast_to(grad, self.shape),)


class SumIgnoresKeepdims(F.Sum):
    def forward(self, a):
        self.shape, self.keepdims = a.shape, False
        return super().forward(a)


class TransposeBackwardSameAxes(F.Transpose):
    def backward(self, grad):
        return (np.transpose(grad, self.axes),)


class TransposeNegativeAxesArgsort(F.Transpose):
    """np.argsort of the axes as given: wrong once an axis is negative."""

    def backward(self, grad):
        inverse = None if self.axes is None else np.argsort(self.axes)
        return (np.transpose(grad, inverse),)


class ReshapeBackwardNotReshaped(F.Reshape):
    def backward(self, grad):
        return (grad,)


# ============================================================================ wrong engines
class MicrogradEngine(MutantTensor):
    """micrograd's backward: gradients live on every node, the root's is set, and nothing
    resets the intermediates, so a second call sends the first call's gradients again."""

    def engine(self, grad):
        self.grad = grad
        for node in reversed(topological_order(self)):
            if node.grad_fn is None:
                continue
            for parent, g in zip(node.parents, node.grad_fn.backward(node.grad)):
                if parent.requires_grad and g is not None:
                    parent.grad = np.array(g) if parent.grad is None else parent.grad + g


class LeafGradWithoutCopy(MutantTensor):
    """A leaf keeps the array it receives (``leaf.grad = g``) and later adds into it in place:
    Add hands the same array to both inputs, so both leaves' gradients change together."""

    @staticmethod
    def store(leaf, grad):
        if leaf.grad is None:
            leaf.grad = grad
        else:
            leaf.grad += grad


class SumInPlaceIntoShared(MutantTensor):
    """run_backward adds a parent's gradients with ``+=`` into the dict entry, which may be the
    very array another node holds (Add returns G for both inputs)."""

    @staticmethod
    def send(pending, node, parent_grads):
        for parent, g in zip(node.parents, parent_grads):
            if parent.requires_grad and g is not None:
                if id(parent) in pending:
                    pending[id(parent)] += g
                else:
                    pending[id(parent)] = g


class RecursiveOrderWithoutVisited(MutantTensor):
    """A recursive depth-first order that lists a node once per path to it."""

    def engine(self, grad):
        order = []

        def build(node):
            for parent in node.parents:
                if parent.requires_grad:
                    build(parent)
            order.append(node)

        build(self)
        for node in order:
            if node.grad_fn is not None:
                node.grad = None
        self.grad = grad
        for node in reversed(order):
            if node.grad_fn is not None and node.grad is not None:
                for parent, g in zip(node.parents, node.grad_fn.backward(node.grad)):
                    if parent.requires_grad and g is not None:
                        parent.grad = np.array(g) if parent.grad is None else parent.grad + g


class RecursiveOrder(MutantTensor):
    """A correct order, built by recursion: fine until the graph is deeper than the limit."""

    def engine(self, grad):
        order, visited = [], set()

        def build(node):
            if id(node) in visited:
                return
            visited.add(id(node))
            for parent in node.parents:
                if parent.requires_grad:
                    build(parent)
            order.append(node)

        build(self)
        pending = {id(self): grad}
        for node in reversed(order):
            grad = pending.pop(id(node), None)
            if grad is None:
                continue
            if node.grad_fn is None:
                node.grad = np.array(grad) if node.grad is None else node.grad + grad
            else:
                self.send(pending, node, node.grad_fn.backward(grad))


class AssignsReceivedGradient(MutantTensor):
    """A tensor keeps only the last gradient sent to it: ``=`` where ``+=`` was needed."""

    @staticmethod
    def send(pending, node, parent_grads):
        for parent, g in zip(node.parents, parent_grads):
            if parent.requires_grad and g is not None:
                pending[id(parent)] = g


class BreadthFirstOrder(MutantTensor):
    """Nodes processed breadth-first from the loss, each when first reached."""

    def engine(self, grad):
        pending, queue, seen = {id(self): grad}, [self], {id(self)}
        while queue:
            node = queue.pop(0)
            grad = pending.pop(id(node), None)
            if grad is None:
                continue
            if node.grad_fn is None:
                node.grad = np.array(grad) if node.grad is None else node.grad + grad
                continue
            self.send(pending, node, node.grad_fn.backward(grad))
            for parent in node.parents:
                if parent.requires_grad and id(parent) not in seen:
                    seen.add(id(parent))
                    queue.append(parent)


class LeafGradAssigned(MutantTensor):
    """Leaves' ``.grad`` overwritten by each backward call instead of accumulated."""

    def engine(self, grad):
        for leaf in topological_order(self):
            if leaf.grad_fn is None:
                leaf.grad = None
        super().engine(grad)


# ============================================================================ the catalogue
def _function_mutant(name, target_fn, function, diagnosis, bug, also=()) -> Mutant:
    return Mutant(name, "Tensor", with_function(target_fn, function), diagnosis, bug, also)


def topological_order_without_visited(root):
    """No visited set: a tensor reached along several paths is listed once per path."""
    return _with_repeats(root)[::-1]


MUTANTS = [
    _function_mutant("tensor_broadcast_grad_not_summed", "Add", AddNotUnbroadcast,
                     "not summed over the broadcast dimensions",
                     "a + b passes G unchanged to both inputs, whatever their shapes",
                     also=(
                           ('tensor_mlp',
                            'tensor_mlp grades the Tensor on the network of units 3-5, whose '
                            'bias is broadcast over the batch: a wrong rule there is a wrong '
                            'network gradient (the loss comes as data and does not count)'),)),
    _function_mutant("tensor_unbroadcast_keeps_size_one_axes", "Add", AddSumsLeadingAxesOnly,
                     "axes of size 1", "unbroadcast sums the leading axes only"),
    _function_mutant("tensor_sub_sign_lost", "Sub", SubSignLost, "sign is flipped",
                     "a - b sends +G to b"),
    _function_mutant("tensor_mul_same_factor", "Mul", MulSameFactor, "the OTHER factor",
                     "a * b sends G * a to a"),
    _function_mutant("tensor_div_forgets_numerator", "Div", DivForgetsNumerator,
                     "the factor a is missing", "d(a/b)/db = -1/b**2"),
    _function_mutant("tensor_pow_keeps_exponent", "Pow", PowKeepsExponent,
                     "lower the exponent by 1", "d(x**p)/dx = p * x**p"),
    _function_mutant("tensor_log_divides_by_output", "Log", LogDividesByOutput,
                     "not by the output log(x)", "d log(x)/dx = 1/log(x)"),
    _function_mutant("tensor_tanh_from_input", "Tanh", TanhFromInput,
                     "square the output y = tanh(x)", "d tanh(x)/dx = 1 - x**2",
                     also=(
                           ('tensor_mlp',
                            'tensor_mlp grades the Tensor on the network of units 3-5, one of'
                            ' which uses tanh: a wrong rule there is a wrong network gradient'
                            ' (the loss comes as data and does not count)'),)),
    _function_mutant("tensor_sigmoid_from_input", "Sigmoid", SigmoidFromInput,
                     "with s = sigmoid(x), the output", "d sigmoid(x)/dx = x (1 - x)",
                     also=(
                           ('tensor_mlp',
                            'tensor_mlp grades the Tensor on the network of units 3-5, one of'
                            ' which ends in a sigmoid: a wrong rule there is a wrong network '
                            'gradient (the loss comes as data and does not count)'),)),
    _function_mutant("tensor_relu_mask_includes_zero", "ReLU", ReLUMaskIncludesZero,
                     "not x >= 0", "relu'(0) = 1"),
    _function_mutant("tensor_matmul_grad_transposed", "MatMul", MatMulGradTransposed,
                     "looks transposed", "dL/dB = G.T @ A",
                     also=(
                           ('tensor_mlp',
                            'tensor_mlp grades the Tensor on the network of units 3-5, made '
                            'of matrix products: a wrong rule there is a wrong network '
                            'gradient'),
                           ('tensor_reshape_transpose',
                            'one of its cases, a.reshape(3, 2).T @ b.T, multiplies the '
                            'reshaped matrices: a transposed matmul rule is wrong there too'),)),
    _function_mutant("tensor_mean_without_one_over_n", "Mean", MeanWithoutOneOverN,
                     "the 1/n is missing", "mean's backward is sum's"),
    _function_mutant("tensor_sum_grad_wrong_axis", "Sum", SumBackwardWithoutExpand,
                     "along the wrong axis", "G broadcast back without np.expand_dims"),
    _function_mutant("tensor_sum_keepdims_lost", "Sum", SumIgnoresKeepdims, "keepdims=True keeps",
                     "sum ignores keepdims"),
    _function_mutant("tensor_transpose_backward_same_axes", "Transpose",
                     TransposeBackwardSameAxes, "inverse permutation",
                     "transpose's backward permutes by axes again"),
    _function_mutant("tensor_transpose_negative_axes", "Transpose",
                     TransposeNegativeAxesArgsort, "make the axes positive",
                     "transpose's backward takes np.argsort of negative axes"),
    _function_mutant("tensor_reshape_backward_not_reshaped", "Reshape",
                     ReshapeBackwardNotReshaped, "reshape a reshape's gradient back",
                     "reshape's backward returns G in the output's shape"),
    Mutant("tensor_micrograd_second_backward", "Tensor", MicrogradEngine, "micrograd's bug",
           "intermediate gradients kept between backward calls"),
    Mutant("tensor_leaf_grad_without_copy", "Tensor", LeafGradWithoutCopy, "without a copy",
           "a leaf stores the gradient array it receives (leaf.grad = g), then adds in place"),
    Mutant("tensor_sum_in_place_into_shared", "Tensor", SumInPlaceIntoShared, "in place",
           "run_backward adds into the dict entry with +=, changing an array another node holds"),
    Mutant("tensor_topological_order_revisits", "Tensor", RecursiveOrderWithoutVisited,
           "visited more than once", "recursive topological sort without a visited set",
           also=(
                 ('tensor_deep_graph',
                  'both engine cells judge the engine, on diamonds and on deep chains: a '
                  'wrong engine is wrong on both'),)),
    Mutant("tensor_topological_order_recursive", "Tensor", RecursiveOrder,
           "recursion limit", "recursive topological sort: RecursionError on deep graphs"),
    Mutant("tensor_received_gradient_assigned", "Tensor", AssignsReceivedGradient,
           "counted once", "a tensor used twice keeps the last gradient sent to it",
           also=(
                 ('tensor_deep_graph',
                  'both engine cells judge the engine, on diamonds and on deep chains: a '
                  'wrong engine is wrong on both'),)),
    Mutant("tensor_breadth_first_order", "Tensor", BreadthFirstOrder,
           "reverse topological order", "nodes processed breadth-first, not topologically",
           also=(
                 ('tensor_deep_graph',
                  'both engine cells judge the engine, on diamonds and on deep chains: a '
                  'wrong engine is wrong on both'),)),
    Mutant("tensor_leaf_grad_assigned", "Tensor", LeafGradAssigned, "must accumulate (+=)",
           "leaves' .grad reset by every backward call"),
    Mutant("topological_order_without_visited", "topological_order",
           topological_order_without_visited, "keep a set of visited tensors",
           "a tensor listed once per path"),
]
