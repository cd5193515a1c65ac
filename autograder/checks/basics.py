"""Checks of unit 1's array functions: ``affine``, ``standardize``, ``pairwise_sq_distances``.

Each runs the student's function on several shapes (a batch of 1, non-square
matrices, d = 1) and compares with the definition written as plainly as possible
(loops for the distances); a wrong answer is matched against the classic
mistakes of a first numpy exercise (the wrong axis, a lost bias, a root too many).
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import expect_unchanged, expect_value_error, placed
from course.testing.compare import expect_close
from course.testing.diagnose import Signature, close, transposed, when
from course.testing.failure import expect, fail
from autograder.registry import check
from autograder.sandbox import call

AFFINE_SHAPES = ((4, 3, 4), (3, 2, 5), (1, 5, 2), (6, 1, 1))  # (N, d_in, d_out); N = d_out first


def _affine_signatures(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> tuple[Signature, ...]:
    return (
        when("no_bias", lambda g, e: close(g, X @ W),
             "the result is X @ W without the bias: add b, one value per output column."),
        when("bias_per_row", lambda g, e: close(g, X @ W + b[:, None]),
             "b was added per sample (row) with b[:, None]; b has one value per output "
             "feature (column) and broadcasts as it is, shape (d_out,)."),
    )


@check
def affine_values(affine):
    """affine(X, W, b) = X @ W + b for several shapes, a batch of one and d_out = 1 included."""
    rng = np.random.default_rng(10)
    for n, d_in, d_out in AFFINE_SHAPES:
        X, W, b = (rng.standard_normal(s) for s in ((n, d_in), (d_in, d_out), (d_out,)))
        got = call(f"affine(X {X.shape}, W {W.shape}, b {b.shape})", affine, X, W, b)
        expect_close("affine(X, W, b)", got, X @ W + b, f"X {X.shape}, W {W.shape}, b {b.shape}",
                     _affine_signatures(X, W, b))


@check
def affine_shape_errors(affine):
    """A 1-D or 3-D X, a W that does not fit and a b of shape (d_out, 1) or (1, d_out) raise a
    ValueError naming the wrong shape; for W, both W's and X's (the mistake lies between them,
    as the notebook asks), and W's shape is none of X's, so naming X's alone does not pass."""
    X, W, b = np.ones((3, 2)), np.ones((2, 3)), np.ones(3)
    bad_inputs = (
        ("a single sample x of shape (2,) (no batch axis)", (X[0], W, b), ((2,),)),
        ("W of shape (4, 3) for X of shape (3, 2)", (X, np.ones((4, 3)), b), ((4, 3), (3, 2))),
        ("b of shape (3, 1), which would broadcast to a wrong (3, 3)", (X, W, b[:, None]),
         ((3, 1),)),
        ("b of shape (1, 3), not exactly (d_out,)", (X, W, b[None, :]), ((1, 3),)),
        ("a 3-D X of shape (1, 3, 2)", (X[None], W, b), ((1, 3, 2),)),
    )
    for what, args, shapes in bad_inputs:
        expect_value_error(f"affine with {what}", affine, *args, naming=tuple(map(str, shapes)),
                           fix="Check X.ndim, W.shape[0] and b.shape before computing, and "
                               "name the shape you received.")


def _standardized(X: np.ndarray, eps: float, axis: int = 0, ddof: int = 0) -> np.ndarray:
    mean = X.mean(axis=axis, keepdims=True)
    return (X - mean) / np.sqrt(X.var(axis=axis, ddof=ddof, keepdims=True) + eps)


def _standardize_signatures(X: np.ndarray, eps: float) -> tuple[Signature, ...]:
    return (
        when("rows", lambda g, e: close(g, _standardized(X, eps, axis=1)),
             "each row (sample) was normalised; normalise each column (feature): reduce over "
             "the batch, axis=0."),
        when("ddof", lambda g, e: close(g, _standardized(X, eps, ddof=1)),
             "the variance is the unbiased one (ddof=1, divided by N - 1); use the biased "
             "variance, divided by N (X.var(axis=0))."),
        when("eps_outside", lambda g, e: close(g, (X - X.mean(axis=0)) / (X.std(axis=0) + eps)),
             "eps was added to the standard deviation; add it to the variance, inside the "
             "square root: sqrt(var + eps)."),
        when("eps_ignored", lambda g, e: close(g, _standardized(X, 1e-5)),
             "the eps argument is ignored (the default 1e-5 is used whatever is passed)."),
    )


@check
def standardize_columns(standardize):
    """(X - mean) / sqrt(var + eps) per column, biased variance, eps honoured, X untouched."""
    rng = np.random.default_rng(11)
    constant = np.column_stack([rng.standard_normal(5), np.full(5, 3.0)])
    cases = ((rng.normal(3, 4, (6, 3)), 1e-5), (rng.normal(-2, 0.5, (4, 2)), 0.3), (constant, 1e-5))
    for X, eps in cases:
        given, read = placed(X, standardize)
        got = call(f"standardize(X of shape {X.shape}, eps={eps:g})", standardize, given, eps=eps)
        expect_unchanged(X, read, "standardize changed its input X in place; compute a new array "
                         "(X - mean, not X -= mean).")
        expect_close(f"standardize(X, eps={eps:g})", got, _standardized(X, eps),
                     f"X of shape {X.shape}" + (", a constant column" if X is constant else ""),
                     _standardize_signatures(X, eps))


def _by_loop(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.array([[float(np.sum((a - b) ** 2)) for b in B] for a in A]).reshape(len(A), len(B))


def _distance_signatures(A: np.ndarray, B: np.ndarray) -> tuple[Signature, ...]:
    return (
        transposed("D has shape (M, N): D[n, m] compares row n of A with row m of B, so its "
                   "shape is (N, M) = (len(A), len(B))."),
        when("root", lambda g, e: close(g, np.sqrt(e)),
             "these are the distances, not their squares: drop the square root."),
        when("not_squared", lambda g, e: close(g, np.abs(A[:, None] - B[None]).sum(axis=-1)),
             "the absolute differences were summed; square them: sum_k (A[n, k] - B[m, k])**2."),
    )


@check
def pairwise_sq_distances_values(pairwise_sq_distances):
    """D[n, m] = sum_k (A[n, k] - B[m, k])**2, shape (N, M), against a loop, N != M, d = 1."""
    rng = np.random.default_rng(12)
    for n, m, d in ((7, 4, 5), (1, 3, 2), (5, 5, 1), (2, 6, 3)):
        A, B = rng.standard_normal((n, d)), 3 * rng.standard_normal((m, d))
        got = call(f"pairwise_sq_distances(A {A.shape}, B {B.shape})", pairwise_sq_distances,
                   A.copy(), B.copy())
        expect_close("pairwise_sq_distances(A, B)", got, _by_loop(A, B),
                     f"A of shape {A.shape}, B of shape {B.shape}", _distance_signatures(A, B),
                     atol=1e-9)
