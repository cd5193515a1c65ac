"""DataLoader: iterate over a dataset in (shuffled) mini-batches."""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from minitorch_ref._random import resolve_rng
from minitorch_ref.data.dataset import Dataset


def default_collate(samples: list) -> tuple[np.ndarray, ...] | np.ndarray:
    """Stack samples into a batch: tuples field by field, arrays along a new axis 0."""
    if isinstance(samples[0], tuple):
        return tuple(np.stack(field) for field in zip(*samples))
    return np.stack(samples)


class DataLoader:
    """Mini-batches of a dataset, as tuples of stacked arrays ``(X_batch, y_batch)``.

    With ``shuffle=True`` the order is a fresh permutation at the start of every
    epoch (every ``iter(loader)``). The last batch is smaller when the batch size
    does not divide the dataset, unless ``drop_last=True`` drops it.

    Args:
        dataset: a ``Dataset`` (anything with ``__len__`` and ``__getitem__``).
        batch_size: samples per batch.
        shuffle: reshuffle at every epoch.
        drop_last: drop the last, incomplete batch.
        rng: generator for shuffling (default: the package's, at each epoch).
    """

    def __init__(self, dataset: Dataset, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, rng: np.random.Generator | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if len(dataset) == 0:
            raise ValueError("DataLoader got an empty dataset: there is nothing to iterate over")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last, self.rng = shuffle, drop_last, rng

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator:
        n = len(self.dataset)
        order = resolve_rng(self.rng).permutation(n) if self.shuffle else np.arange(n)
        for b in range(len(self)):
            yield self._fetch(order[b * self.batch_size:(b + 1) * self.batch_size])

    def _fetch(self, indices: np.ndarray):
        getitems = getattr(self.dataset, "__getitems__", None)
        batch = getitems(indices) if getitems else [self.dataset[int(i)] for i in indices]
        return batch if isinstance(batch, (tuple, np.ndarray)) else default_collate(batch)
