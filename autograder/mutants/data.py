"""Datasets, loaders and random_split with one classic student bug each."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import data
from minitorch_ref._random import resolve_rng


class DropsPartialBatch(data.DataLoader):
    def __len__(self):
        return len(self.dataset) // self.batch_size


class LenRoundsDown(data.DataLoader):
    def __len__(self):
        return len(self.dataset) // self.batch_size

    def __iter__(self):
        n = len(self.dataset)
        order = resolve_rng(self.rng).permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, n, self.batch_size):
            if self.drop_last and start + self.batch_size > n:
                return
            yield self._fetch(order[start:start + self.batch_size])


class ShufflesOnce(data.DataLoader):
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, rng=None):
        super().__init__(dataset, batch_size, shuffle, drop_last, rng)
        self.order = resolve_rng(rng).permutation(len(dataset))

    def __iter__(self):
        order = self.order if self.shuffle else np.arange(len(self.dataset))
        for b in range(len(self)):
            yield self._fetch(order[b * self.batch_size:(b + 1) * self.batch_size])


class ShuffleIgnored(data.DataLoader):
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, rng=None):
        super().__init__(dataset, batch_size, False, drop_last, rng)


class ShufflesBatchOrder(data.DataLoader):
    def __iter__(self):
        starts = np.arange(len(self)) * self.batch_size
        if self.shuffle:
            starts = resolve_rng(self.rng).permutation(starts)
        for start in starts:
            yield self._fetch(np.arange(start, min(start + self.batch_size, len(self.dataset))))


class LenCountsArrays(data.TensorDataset):
    def __len__(self):
        return len(self.arrays)


def random_split_overlapping(dataset, lengths, rng=None):
    """Each subset draws its own sample of indices, so subsets overlap."""
    rng = resolve_rng(rng)
    return [data.Subset(dataset, rng.permutation(len(dataset))[:k]) for k in lengths]


def random_split_in_order(dataset, lengths, rng=None):
    """Consecutive pieces of the dataset, never shuffled."""
    bounds = np.cumsum([0] + list(lengths))
    return [data.Subset(dataset, np.arange(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


MUTANTS = [
    Mutant("dataloader_drops_partial_batch", "DataLoader", DropsPartialBatch,
           "the last, smaller batch is missing", "n // batch_size batches with drop_last=False"),
    Mutant("dataloader_len_rounds_down", "DataLoader", LenRoundsDown, "len() rounds down",
           "__len__ uses n // batch_size, iteration is right"),
    Mutant("dataloader_shuffles_once", "DataLoader", ShufflesOnce, "same order every epoch",
           "permutation drawn in __init__"),
    Mutant("dataloader_shuffle_ignored", "DataLoader", ShuffleIgnored, "original order",
           "shuffle=True has no effect"),
    Mutant("dataloader_shuffles_batch_order", "DataLoader", ShufflesBatchOrder,
           "order of the batches", "batches shuffled, samples within them consecutive"),
    Mutant("tensor_dataset_len_counts_arrays", "TensorDataset", LenCountsArrays,
           "number of arrays", "len(self.arrays) instead of len(self.arrays[0])"),
    Mutant("random_split_overlapping", "random_split", random_split_overlapping, "overlapping",
           "one permutation per subset"),
    Mutant("random_split_in_order", "random_split", random_split_in_order, "not shuffled",
           "consecutive runs, no permutation"),
]
