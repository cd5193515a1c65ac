"""Unit 1's functions with one classic first-numpy bug each."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from autograder.mutants._solutions import solution


def affine_without_bias(X, W, b):
    solution("affine")(X, W, b)       # the notebook's shape checks, then the bug
    return np.asarray(X) @ np.asarray(W)


def affine_bias_per_row(X, W, b):
    solution("affine")(X, W, b)
    X, W, b = np.asarray(X), np.asarray(W), np.asarray(b)
    return X @ W + b[:, None]


def affine_lenient(X, W, b):
    """Refuses a 1-D X and a b of the wrong length only: b (1, d_out) and a 3-D X pass."""
    X, W, b = np.asarray(X), np.asarray(W), np.asarray(b)
    if X.ndim == 1 or W.shape[0] != X.shape[-1] or b.shape[-1] != W.shape[1] or b.ndim > 1 \
            and b.shape[0] != 1:
        raise ValueError(f"affine got X {X.shape}, W {W.shape} and b {b.shape}")
    return X @ W + b


def affine_names_x_only(X, W, b):
    """Refuses every wrong shape, but a W that does not fit is reported by X's shape alone."""
    X, W = np.asarray(X), np.asarray(W)
    if X.ndim == 2 and (W.ndim != 2 or W.shape[0] != X.shape[1]):
        raise ValueError(f"affine: W does not fit X of shape {X.shape}")
    return solution("affine")(X, W, b)


def affine_unchecked(X, W, b):
    return np.asarray(X) @ np.asarray(W) + np.asarray(b)


def standardize_rows(X, eps=1e-5):
    return (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, keepdims=True) + eps)


def standardize_unbiased(X, eps=1e-5):
    return (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0, ddof=1) + eps)


def standardize_eps_outside(X, eps=1e-5):
    return (X - X.mean(axis=0)) / (X.std(axis=0) + eps)


def standardize_in_place(X, eps=1e-5):
    X -= X.mean(axis=0)
    X /= np.sqrt(X.var(axis=0) + eps)
    return X


def distances_not_squared(A, B):
    return np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1))


def distances_transposed(A, B):
    return ((B[:, None, :] - A[None, :, :]) ** 2).sum(axis=-1)


def distances_absolute(A, B):
    return np.abs(A[:, None, :] - B[None, :, :]).sum(axis=-1)


MUTANTS = [
    Mutant("affine_without_bias", "affine", affine_without_bias, "without the bias",
           "returns X @ W"),
    Mutant("affine_bias_per_row", "affine", affine_bias_per_row, "b[:, None]",
           "adds b along the batch axis"),
    Mutant("affine_lenient", "affine", affine_lenient, "should raise a ValueError",
           "accepts b of shape (1, d_out) and a 3-D X"),
    Mutant("affine_names_x_only", "affine", affine_names_x_only, "does not name (4, 3)",
           "a W that does not fit is reported with X's shape only"),
    Mutant("affine_unchecked", "affine", affine_unchecked, "should raise a ValueError",
           "no shape checks, so a 1-D x silently works"),
    Mutant("standardize_rows", "standardize", standardize_rows, "each row",
           "normalises samples instead of features"),
    Mutant("standardize_unbiased", "standardize", standardize_unbiased, "ddof=1",
           "divides the variance by N - 1"),
    Mutant("standardize_eps_outside", "standardize", standardize_eps_outside,
           "inside the square root", "std + eps instead of sqrt(var + eps)"),
    Mutant("standardize_in_place", "standardize", standardize_in_place, "in place",
           "overwrites its input"),
    Mutant("distances_not_squared", "pairwise_sq_distances", distances_not_squared,
           "drop the square root", "Euclidean distances, not their squares"),
    Mutant("distances_transposed", "pairwise_sq_distances", distances_transposed, "(N, M)",
           "returns D.T, shape (M, N)"),
    Mutant("distances_absolute", "pairwise_sq_distances", distances_absolute, "absolute",
           "sums |differences| (L1)"),
]
