"""Datasets: indexable collections of samples, and ways to split them."""
from __future__ import annotations

import abc
import math
from typing import Sequence

import numpy as np

from minitorch_ref._random import resolve_rng


class Dataset(abc.ABC):
    """A collection of samples: ``len(ds)`` and ``ds[i]`` (usually a tuple ``(x, y)``).

    A dataset may also define ``__getitems__(indices)`` returning a whole batch
    at once (a tuple of stacked arrays); DataLoader then uses it instead of
    fetching and stacking samples one at a time.
    """

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def __getitem__(self, index: int): ...


class TensorDataset(Dataset):
    """Samples are the rows of arrays that share their first dimension.

    ``TensorDataset(X, y)[i] == (X[i], y[i])``.

    Shape:
        - each array: ``(N, *)`` with the same ``N``.
    """

    def __init__(self, *arrays: np.ndarray) -> None:
        if not arrays:
            raise ValueError("TensorDataset needs at least one array")
        self.arrays = tuple(np.asarray(a) for a in arrays)
        lengths = [len(a) if a.ndim else None for a in self.arrays]
        if None in lengths or len(set(lengths)) != 1:
            shapes = ", ".join(str(a.shape) for a in self.arrays)
            raise ValueError(f"TensorDataset arrays must share their first dimension, got {shapes}")

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index: int) -> tuple[np.ndarray, ...]:
        return tuple(a[index] for a in self.arrays)

    def __getitems__(self, indices: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(a[indices] for a in self.arrays)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, np.asarray(indices, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: int):
        return self.dataset[int(self.indices[index])]

    def __getitems__(self, indices: np.ndarray):
        if hasattr(self.dataset, "__getitems__"):
            return self.dataset.__getitems__(self.indices[indices])
        return [self.dataset[int(i)] for i in self.indices[indices]]


def _split_lengths(lengths: Sequence[float], n: int) -> list[int]:
    """Integer lengths; fractions summing to 1 become counts, the remainder
    going one by one to the first splits, as in PyTorch."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and n != 1:
        if any(not 0 <= frac <= 1 for frac in lengths):
            raise ValueError(f"random_split fractions must each be in [0, 1], got {list(lengths)}")
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        return counts
    if sum(lengths) != n or any(int(x) != x or x < 0 for x in lengths):
        raise ValueError(
            f"random_split lengths {list(lengths)} must be non-negative integers summing to "
            f"the dataset size {n}, or fractions summing to 1"
        )
    return [int(x) for x in lengths]


def random_split(dataset: Dataset, lengths: Sequence[float],
                 rng: np.random.Generator | None = None) -> list[Subset]:
    """Randomly partition ``dataset`` into non-overlapping ``Subset`` objects of the given sizes."""
    counts = _split_lengths(lengths, len(dataset))
    order = resolve_rng(rng).permutation(len(dataset))
    bounds = np.cumsum([0] + counts)
    return [Subset(dataset, order[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]
