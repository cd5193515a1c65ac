"""Input validation shared by the layers: errors that tell a student what to fix."""
from __future__ import annotations

import numpy as np


def check_features(name: str, x: np.ndarray, features: int) -> np.ndarray:
    """Check that ``x`` is a float batch of shape ``(N, features)``; return it as an array."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != features:
        hint = " Did you forget the batch dimension?" if x.ndim == 1 else ""
        raise ValueError(f"{name} expected input of shape (N, {features}), got {x.shape}.{hint}")
    check_floating(name, x)
    return x


def check_last_axis(name: str, x: np.ndarray, features: int) -> np.ndarray:
    """Check that ``x`` is a float batch ``(N, features)``, or has more leading dimensions
    ``(..., features)`` (a batch of sequences ``(B, T, features)``); return it as an array."""
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] != features:
        hint = " Did you forget the batch dimension?" if x.ndim == 1 else ""
        raise ValueError(f"{name} expected input of shape (N, {features}) or (..., "
                         f"{features}), got {x.shape}.{hint}")
    check_floating(name, x)
    return x


def check_floating(name: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":   # np.issubdtype(x.dtype, np.floating), without its ~3 µs per call
        raise ValueError(
            f"{name} expected a floating-point array, got dtype {x.dtype}. "
            "Convert it first, e.g. x.astype(np.float64)."
        )


def check_same_shape(name: str, what: str, got: np.ndarray, expected: tuple[int, ...]) -> None:
    if np.shape(got) != tuple(expected):
        raise ValueError(f"{name}: {what} must have shape {tuple(expected)}, got {np.shape(got)}.")


def check_images(name: str, x: np.ndarray, channels: int | None = None) -> np.ndarray:
    """Check that ``x`` is a float batch of images ``(N, C, H, W)`` (with ``C == channels``
    when given); return it as an array."""
    x = np.asarray(x)
    expected = f"(N, {'C' if channels is None else channels}, H, W)"
    if x.ndim != 4 or (channels is not None and x.shape[1] != channels):
        hint = " Did you forget the batch dimension?" if x.ndim == 3 else ""
        if x.ndim == 2:
            hint = " Reshape rows of pixels into images first, e.g. x.reshape(N, 1, 28, 28)."
        raise ValueError(f"{name} expected input of shape {expected}, got {x.shape}.{hint}")
    check_floating(name, x)
    return x


def check_indices(name: str, indices: np.ndarray, size: int) -> np.ndarray:
    """Check that ``indices`` is an integer array with values in ``[0, size)``; return it.

    Raises:
        ValueError: for a float or bool array (a token id is an integer).
        IndexError: for a negative index or one ``>= size``, naming it and ``size``, as
            PyTorch raises IndexError for an index out of range.
    """
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise ValueError(
            f"{name} expected integer indices, got dtype {indices.dtype}. Token ids are "
            "integers: convert them first, e.g. idx.astype(np.int64)."
        )
    if indices.size == 0:
        return indices
    low, high = indices.min(), indices.max()
    if low < 0:
        raise IndexError(
            f"{name}: index {low} is negative; indices must be in [0, {size}) "
            f"for a vocabulary of size {size}."
        )
    if high >= size:
        raise IndexError(
            f"{name}: index {high} is out of range for a vocabulary of size {size}; "
            f"indices must be in [0, {size})."
        )
    return indices
