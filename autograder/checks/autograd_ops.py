"""Checks of the bonus unit's Tensor operations: arithmetic, elementwise functions, matmul,
reductions, reshape/transpose and broadcasting, each gradient matched against what the
classic mistakes of its backward rule give. See ``_tensor_cases`` for how a case is graded."""
from __future__ import annotations

from typing import Callable

import numpy as np

from autograder.checks._tensor_cases import (
    Case, Expected, Mistake, check_case, check_cases, positive, randn,
)
from autograder.registry import check
from course.testing.diagnose import Signature, transposed
from minitorch_ref.autograd.functions import unbroadcast


# ============================================================================ the mistakes
def _g(e: Expected, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(G, x)``: the upstream gradient and the input's values, for a unary case."""
    return e.G, e.inputs[name]


def _to(grad: np.ndarray, e: Expected, name: str) -> np.ndarray:
    """``grad`` summed to input ``name``'s shape (so a bug shows even under broadcasting)."""
    return unbroadcast(np.broadcast_to(grad, np.shape(e.value)), e.inputs[name].shape)


def mul_mistakes(name: str, e: Expected) -> list[Mistake]:
    return [(_to(e.G * e.inputs[name], e, name),
             f"{name} received G * {name}; each factor receives G times the OTHER factor "
             "(for c = a * b: dL/da = G * b, dL/db = G * a).")]


def div_mistakes(name: str, e: Expected) -> list[Mistake]:
    a, b, G = e.inputs["a"], e.inputs["b"], e.G
    if name == "a":
        return [(_to(G * b, e, "a"), "d(a / b)/da = 1 / b: divide G by b.")]
    return [(_to(-G / b**2, e, "b"), "d(a / b)/db = -a / b**2: the factor a is missing."),
            (_to(-G * a / b, e, "b"), "d(a / b)/db = -a / b**2: divide by b squared.")]


def power_mistakes(p: float) -> Callable[[str, Expected], list[Mistake]]:
    def mistakes(name: str, e: Expected) -> list[Mistake]:
        G, x = _g(e, name)
        return [(G * p * x**p, f"d(x**p)/dx = p * x**(p - 1): lower the exponent by 1 "
                               f"(here {p:g} * x**{p - 1:g})."),
                (G * x ** (p - 1), "d(x**p)/dx = p * x**(p - 1): the factor p is missing.")]
    return mistakes


def exp_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * x, "d exp(x)/dx = exp(x): multiply G by the output exp(x), not by x.")]


def log_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G / np.log(x), "d log(x)/dx = 1/x: divide by the input x, not by the output "
                            "log(x)."),
            (G * np.log(x), "d log(x)/dx = 1/x: divide G by x.")]


def relu_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * (x >= 0), "relu'(0) is 0, as in PyTorch: the mask is x > 0, not x >= 0."),
            (G * np.maximum(x, 0), "multiplied by the output relu(x); the derivative is the "
                                   "mask x > 0 (1 or 0).")]


def tanh_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    return [(G * (1 - x**2), "d tanh(x)/dx = 1 - tanh(x)**2: square the output y = tanh(x), "
                             "not the input x."),
            (G * (1 - np.tanh(x)), "d tanh(x)/dx = 1 - tanh(x)**2: square tanh(x).")]


def sigmoid_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    s = 0.5 * (1 + np.tanh(x / 2))  # sigmoid(x), without overflow
    return [(G * x * (1 - x), "d sigmoid(x)/dx = s (1 - s) with s = sigmoid(x), the output, "
                              "not the input x."),
            (G * s, "d sigmoid(x)/dx = s (1 - s): the factor (1 - s) is missing.")]


def matmul_mistakes(name: str, e: Expected) -> list[Mistake]:
    A, B, G = e.inputs["A"], e.inputs["B"], e.G
    if name == "A" and G.shape[1] == B.shape[0]:
        return [(G @ B, "dL/dA = G @ B.T: transpose B.")]
    if name == "B" and A.shape[1] == G.shape[0]:
        return [(A @ G, "dL/dB = A.T @ G: transpose A.")]
    return []


def matmul_signatures(name: str, e: Expected) -> tuple[Signature, ...]:
    formula = "dL/dA = G @ B.T, of A's shape" if name == "A" else "dL/dB = A.T @ G, of B's shape"
    return (transposed(f"dL/d{name} looks transposed: for C = A @ B, {formula}."),)


def sum_mistakes(name: str, e: Expected) -> list[Mistake]:
    """G broadcast back without putting the summed axes back first."""
    G, x = _g(e, name)
    try:
        return [(np.broadcast_to(G, x.shape),
                 "G was broadcast back along the wrong axis: put the summed axes back first "
                 "(np.expand_dims, or reshape G to the keepdims shape), then broadcast it to "
                 "the input's shape.")]
    except ValueError:
        return []


def mean_mistakes(name: str, e: Expected) -> list[Mistake]:
    G, x = _g(e, name)
    n = x.size // max(np.size(e.value), 1)
    return [(e.grads[name] * n, f"every entry should receive G / n, with n = {n} entries "
                                "averaged: the 1/n is missing (the mean's backward is the sum's, "
                                "divided by n).")] + sum_mistakes(name, e)


def transpose_mistakes(axes: tuple[int, ...] | None) -> Callable[[str, Expected], list[Mistake]]:
    def mistakes(name: str, e: Expected) -> list[Mistake]:
        G = e.G
        found = [(G, "the gradient of a transpose is G transposed back to the input's "
                     "layout; it was passed on unchanged.")]
        if axes is not None:
            positive = [a % G.ndim for a in axes]
            found.append((np.transpose(G, axes),
                          f"transpose's backward applies the inverse permutation, "
                          f"np.argsort(axes) = {tuple(int(i) for i in np.argsort(positive))}, "
                          "not axes again."))
            if positive != list(axes):
                found.append((np.transpose(G, np.argsort(axes)),
                              f"np.argsort{tuple(axes)} is not the inverse permutation of negative "
                              f"axes: make the axes positive first (a % ndim) and take "
                              f"np.argsort{tuple(positive)}."))
        return found
    return mistakes


# ============================================================================ the cases
def _arithmetic() -> list[Case]:
    a, b, p = randn(3, 4, seed=0), randn(3, 4, seed=1), positive(3, 4, seed=2)
    row = positive(1, 5, seed=3)
    return [
        Case("c = a + b", lambda a, b: a + b, {"a": a, "b": b}),
        Case("c = a - b", lambda a, b: a - b, {"a": a, "b": b}),
        Case("c = a * b", lambda a, b: a * b, {"a": a, "b": b}, mul_mistakes),
        Case("c = a / b", lambda a, b: a / b, {"a": a, "b": p}, div_mistakes),
        Case("c = -a", lambda a: -a, {"a": a}),
        Case("c = a ** 2", lambda a: a**2, {"a": a}, power_mistakes(2)),
        Case("c = a ** 3", lambda a: a**3, {"a": b}, power_mistakes(3)),
        Case("c = a ** 0.5", lambda a: a**0.5, {"a": p}, power_mistakes(0.5)),
        Case("c = a ** -1.5", lambda a: a**-1.5, {"a": row}, power_mistakes(-1.5)),
        Case("e = 2 * a - 1 / (b + 3) + c / 4 - (1 - d)",
             lambda a, b, c, d: 2 * a - 1 / (b + 3) + c / 4 - (1 - d),
             {"a": row, "b": positive(1, 5, seed=4), "c": randn(1, 5, seed=5),
              "d": randn(1, 5, seed=6)}),
    ]


def _functions() -> list[Case]:
    x = randn(3, 4, seed=4)
    with_zeros = randn(3, 4, seed=5)
    with_zeros[0, :2] = 0.0
    return [
        Case("y = x.exp()", lambda x: x.exp(), {"x": x}, exp_mistakes),
        Case("y = x.log()", lambda x: x.log(), {"x": positive(3, 4, seed=6)}, log_mistakes),
        Case("y = x.relu()", lambda x: x.relu(), {"x": with_zeros}, relu_mistakes),
        Case("y = x.tanh()", lambda x: x.tanh(), {"x": randn(3, 4, seed=7, scale=2)},
             tanh_mistakes),
        Case("y = x.sigmoid()", lambda x: x.sigmoid(), {"x": randn(3, 4, seed=8, scale=3)},
             sigmoid_mistakes),
        Case("y = x.sigmoid()", lambda x: x.sigmoid(), {"x": randn(1, 5, seed=9, scale=20)},
             sigmoid_mistakes),
        Case("y = x.tanh()", lambda x: x.tanh(), {"x": randn(1, 5, seed=10, scale=0.5)},
             tanh_mistakes),
    ]


def _matmul() -> list[Case]:
    shapes = (((4, 3), (3, 2)), ((1, 5), (5, 3)), ((3, 3), (3, 3)), ((2, 4), (4, 1)))
    return [Case("C = A @ B", lambda A, B: A @ B,
                 {"A": randn(*sa, seed=2 * i), "B": randn(*sb, seed=2 * i + 1)}, matmul_mistakes)
            for i, (sa, sb) in enumerate(shapes)]


KEEPDIMS = "keepdims=True keeps every reduced axis, with size 1."


def _reductions() -> list[Case]:
    def case(text, fn, shape, mistakes=sum_mistakes, seed=0):
        return Case(text, fn, {"x": randn(*shape, seed=seed)}, mistakes, KEEPDIMS)
    return [
        case("s = x.sum()", lambda x: x.sum(), (2, 3)),
        case("s = x.sum(axis=0)", lambda x: x.sum(axis=0), (2, 3), seed=1),
        case("s = x.sum(axis=1)", lambda x: x.sum(axis=1), (3, 3), seed=2),
        case("s = x.sum(axis=-1, keepdims=True)", lambda x: x.sum(axis=-1, keepdims=True),
             (2, 3), seed=3),
        case("s = x.sum(axis=(0, 2))", lambda x: x.sum(axis=(0, 2)), (2, 3, 4), seed=4),
        case("s = x.sum(axis=0)", lambda x: x.sum(axis=0), (1, 4), seed=5),
        case("m = x.mean()", lambda x: x.mean(), (2, 3), mean_mistakes, seed=6),
        case("m = x.mean(axis=0)", lambda x: x.mean(axis=0), (4, 3), mean_mistakes, seed=7),
        case("m = x.mean(axis=1)", lambda x: x.mean(axis=1), (3, 3), mean_mistakes, seed=8),
        case("m = x.mean(axis=1, keepdims=True)", lambda x: x.mean(axis=1, keepdims=True),
             (2, 5), mean_mistakes, seed=9),
        case("m = x.mean(axis=(0, 2), keepdims=True)",
             lambda x: x.mean(axis=(0, 2), keepdims=True), (2, 3, 4), mean_mistakes, seed=10),
    ]


def _shapes() -> list[Case]:
    x, cube = randn(2, 3, seed=11), randn(2, 3, 4, seed=12)
    return [
        Case("y = x.reshape(3, 2)", lambda x: x.reshape(3, 2), {"x": x}),
        Case("y = x.reshape((-1,))", lambda x: x.reshape((-1,)), {"x": x}),
        Case("y = x.reshape(4, 1, 3)", lambda x: x.reshape(4, 1, 3), {"x": randn(2, 6, seed=13)}),
        Case("y = x.T", lambda x: x.T, {"x": x}, transpose_mistakes(None)),
        Case("y = x.transpose((1, 2, 0))", lambda x: x.transpose((1, 2, 0)), {"x": cube},
             transpose_mistakes((1, 2, 0))),
        Case("y = x.transpose()", lambda x: x.transpose(), {"x": cube}, transpose_mistakes(None)),
        Case("y = x.transpose((0, -1, -2))", lambda x: x.transpose((0, -1, -2)), {"x": cube},
             transpose_mistakes((0, -1, -2))),
        Case("y = a.reshape(3, 2).T @ b.T", lambda a, b: a.reshape(3, 2).T @ b.T,
             {"a": randn(2, 3, seed=14), "b": randn(4, 3, seed=15)}),
    ]


def _broadcasting() -> list[Case]:
    def case(text, fn, a, b, mistakes=None):
        return Case(text, fn, {"a": a, "b": b}, mistakes)
    return [
        case("c = a + b", lambda a, b: a + b, randn(3, 1, seed=20), randn(1, 4, seed=21)),
        case("c = a + b", lambda a, b: a + b, randn(2, 3, seed=22), randn(3, seed=23)),
        case("c = a * b", lambda a, b: a * b, randn(2, 3, seed=24), randn(seed=25),
             mul_mistakes),
        case("c = a - b", lambda a, b: a - b, randn(4, seed=26), randn(2, 3, 4, seed=27)),
        case("c = a * b", lambda a, b: a * b, randn(2, 1, 4, seed=28), randn(3, 1, seed=29),
             mul_mistakes),
        case("c = a / b", lambda a, b: a / b, randn(2, 3, seed=30), positive(2, 1, seed=31),
             div_mistakes),
        Case("Y = X @ W + b", lambda X, W, b: X @ W + b,
             {"X": randn(5, 3, seed=32), "W": randn(3, 2, seed=33), "b": randn(2, seed=34)}),
        Case("d = (a ** 2) * b - c", lambda a, b, c: (a**2) * b - c,
             {"a": randn(1, 3, seed=35), "b": randn(4, 1, seed=36), "c": randn(3, seed=37)}),
    ]


# ============================================================================ the checks
@check
def tensor_arithmetic(Tensor):
    """``+ - * / **`` and unary ``-``: values and gradients, numbers on either side."""
    check_cases(Tensor, _arithmetic())


@check
def tensor_elementwise_functions(Tensor):
    """``exp log relu tanh sigmoid``: values and gradients (relu'(0) = 0, inputs up to ~60)."""
    check_cases(Tensor, _functions())


@check
def tensor_matmul(Tensor):
    """``A @ B``: value, dL/dA = G @ B.T and dL/dB = A.T @ G, on non-square and square shapes."""
    for seed, case in enumerate(_matmul()):
        check_case(Tensor, case, seed, extra=matmul_signatures)


@check
def tensor_reductions(Tensor):
    """``sum`` and ``mean`` over all axes, one axis, negative and tuple axes, with keepdims."""
    check_cases(Tensor, _reductions())


@check
def tensor_reshape_transpose(Tensor):
    """``reshape`` (sizes or a tuple, -1), ``.T`` and ``transpose(axes)``: values and gradients."""
    check_cases(Tensor, _shapes())


@check
def tensor_broadcasting(Tensor):
    """Binary operations on broadcast shapes: each input's gradient is summed back to its shape
    (judged with the student's own rules of the operations when those are wrong: their cells')."""
    for seed, case in enumerate(_broadcasting()):
        check_case(Tensor, case, seed, own="broadcasting")
