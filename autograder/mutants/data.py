"""Datasets, loaders and random_split with one classic student bug each."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from minitorch_ref import data
from minitorch_ref._random import resolve_rng
from minitorch_ref.data.dataset import _split_lengths


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


class UncheckedArrays(data.TensorDataset):
    def __init__(self, *arrays):
        self.arrays = tuple(np.asarray(a) for a in arrays)


class ArraysInAList(data.TensorDataset):
    def __init__(self, *arrays):
        super().__init__(*arrays)
        self.arrays = list(self.arrays)


class _ShufflesWith(data.DataLoader):
    """A loader that shuffles with ``generator()`` instead of its rng, else default_rng()."""

    def generator(self):
        raise NotImplementedError

    def __iter__(self):
        rng, self.rng = self.rng, self.generator()
        try:
            yield from super().__iter__()
        finally:
            self.rng = rng


class ShufflesWithGlobalRandom(_ShufflesWith):
    def generator(self):
        return np.random            # np.random.permutation, whatever rng says


class ShufflesUnseeded(_ShufflesWith):
    def generator(self):
        return self.rng if self.rng is not None else np.random.default_rng()


def collate_tuples_only(samples):
    return tuple(np.stack(field) for field in zip(*samples))


def random_split_global_random(dataset, lengths, rng=None):
    """Shuffles with np.random, whatever rng says."""
    return data.random_split(dataset, lengths, rng=np.random)


def random_split_unchecked(dataset, lengths, rng=None):
    """Cuts whatever the counts say, without checking that they add up."""
    try:
        counts = _split_lengths(lengths, len(dataset))
    except ValueError:
        counts = [int(k) for k in lengths]
    order = resolve_rng(rng).permutation(len(dataset))
    bounds = np.cumsum([0] + counts)
    return [data.Subset(dataset, order[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]


def random_split_overlapping(dataset, lengths, rng=None):
    """Each subset draws its own sample of indices, so subsets overlap."""
    rng = resolve_rng(rng)
    counts = _split_lengths(lengths, len(dataset))
    return [data.Subset(dataset, rng.permutation(len(dataset))[:k]) for k in counts]


def random_split_in_order(dataset, lengths, rng=None):
    """Consecutive pieces of the dataset, never shuffled."""
    bounds = np.cumsum([0] + _split_lengths(lengths, len(dataset)))
    return [data.Subset(dataset, np.arange(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


MUTANTS = [
    Mutant("dataloader_drops_partial_batch", "DataLoader", DropsPartialBatch,
           "the last, smaller batch is missing", "n // batch_size batches with drop_last=False",
           also=(
                 ('dataloader_drop_last',
                  'for 4 samples in batches of 10 the loader yields nothing, so '
                  "drop_last=True has nothing of the student's own to be compared with"),)),
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
    Mutant("tensor_dataset_unchecked", "TensorDataset", UncheckedArrays,
           "should raise a ValueError", "no check of the arrays' shapes"),
    Mutant("tensor_dataset_arrays_in_a_list", "TensorDataset", ArraysInAList, "as a tuple",
           "self.arrays is a list"),
    Mutant("dataloader_global_random", "DataLoader", ShufflesWithGlobalRandom,
           "does not shuffle with its rng", "np.random.permutation, ignoring rng"),
    Mutant("dataloader_unseeded_default", "DataLoader", ShufflesUnseeded, "manual_seed",
           "a fresh np.random.default_rng() when rng is None"),
    Mutant("default_collate_tuples_only", "default_collate", collate_tuples_only,
           "return one stacked array", "plain-array samples zipped into a tuple"),
    Mutant("random_split_global_random", "random_split", random_split_global_random,
           "shuffle with the rng passed in", "np.random.permutation, ignoring rng"),
    Mutant("random_split_unchecked", "random_split", random_split_unchecked,
           "should raise a ValueError", "counts not checked against len(dataset)"),
    Mutant("random_split_overlapping", "random_split", random_split_overlapping, "overlapping",
           "one permutation per subset"),
    Mutant("random_split_in_order", "random_split", random_split_in_order, "not shuffled",
           "consecutive runs, no permutation"),
]
