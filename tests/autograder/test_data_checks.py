"""The data checks (test_mutation_audit runs them on the reference and every mutant) turn
whatever a standalone student DataLoader / TensorDataset / random_split does into a
CheckFailure."""
from __future__ import annotations

import math

import numpy as np
import pytest

from autograder import check, registry
from students import GENERATOR, failure, notebook


# ------------------------------------------------------------------------ a student's own classes
_GENERATOR = notebook(GENERATOR, np=np)     # the notebook's manual_seed and default_rng
manual_seed, default_rng = _GENERATOR["manual_seed"], _GENERATOR["default_rng"]


class StudentTensorDataset:
    def __init__(self, *arrays):
        self.arrays = tuple(np.asarray(a) for a in arrays)
        if not self.arrays or any(a.ndim == 0 for a in self.arrays) \
                or len({len(a) for a in self.arrays}) > 1:
            raise ValueError(f"arrays of shapes {[a.shape for a in self.arrays]}")

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, i):
        return tuple(a[i] for a in self.arrays)


def student_collate(samples):
    if isinstance(samples[0], tuple):
        return tuple(np.stack(field) for field in zip(*samples))
    return np.stack(samples)


class StudentDataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, rng=None):
        self.dataset, self.batch_size = dataset, batch_size
        self.shuffle, self.drop_last, self.rng = shuffle, drop_last, rng

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        rng = default_rng() if self.rng is None else self.rng
        order = rng.permutation(n) if self.shuffle else np.arange(n)
        for b in range(len(self)):
            indices = order[b * self.batch_size:(b + 1) * self.batch_size]
            yield student_collate([self.dataset[int(i)] for i in indices])


def student_random_split(dataset, lengths, rng=None):
    n = len(dataset)
    if all(0 <= x <= 1 for x in lengths) and math.isclose(sum(lengths), 1):
        counts = [math.floor(n * x) for x in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"lengths {lengths} do not add up to {n}")
    order, start, subsets = (default_rng() if rng is None else rng).permutation(n), 0, []
    for k in lengths:
        subsets.append([dataset[int(i)] for i in order[start:start + k]])
        start += k
    return subsets


# ------------------------------------------------------------------------ student implementations
def test_correct_student_classes_pass():
    check.tensor_dataset(StudentTensorDataset)
    check.tensor_dataset_arrays(StudentTensorDataset)
    for name in ("dataloader_batches", "dataloader_drop_last"):
        getattr(check, name)(StudentDataLoader)
    check.dataloader_shuffle(StudentDataLoader, manual_seed)
    check.default_collate_fields(student_collate)
    check.random_split_partition(student_random_split, manual_seed)
    check.random_split_fractions(student_random_split)


class RaisesInIter(StudentDataLoader):
    def __iter__(self):
        raise ValueError("no batches today")


class YieldsNone(StudentDataLoader):
    def __iter__(self):
        for _ in range(len(self)):
            yield None


class NeverStops(StudentDataLoader):
    def __iter__(self):
        while True:
            yield tuple(np.stack(f) for f in zip(self.dataset[0]))


class FancyIndexing(StudentDataLoader):
    """Works for TensorDataset only: indexes the dataset with a whole array."""

    def __iter__(self):
        for b in range(len(self)):
            yield self.dataset[np.arange(b * self.batch_size,
                                         min((b + 1) * self.batch_size, len(self.dataset)))]


class ShufflesLabelsSeparately(StudentDataLoader):
    def __iter__(self):
        for x, y in super().__iter__():
            yield x, np.random.permutation(y) if len(y) > 1 else y


class ListItems(StudentTensorDataset):
    def __getitem__(self, i):
        return [a[i] for a in self.arrays]


@pytest.mark.parametrize("name, cls, expected", [
    ("dataloader_batches", RaisesInIter, "raised ValueError: no batches today"),
    ("dataloader_batches", YieldsNone, "should be a tuple (inputs, targets)"),
    ("dataloader_batches", NeverStops, "Does __iter__ stop"),
    ("dataloader_batches", FancyIndexing, "a Dataset is read one sample at a time"),
    ("dataloader_shuffle", ShufflesLabelsSeparately, "do not belong together"),
    ("tensor_dataset", ListItems, "should be a tuple of 2 entries"),
], ids=["raises", "none", "endless-generator", "fancy-indexing", "labels-shuffled", "list-item"])
def test_broken_student_classes_get_clean_messages(name, cls, expected):
    seeds = (manual_seed,) if "manual_seed" in registry.CHECKS[name].targets else ()
    assert expected in failure(name, cls, *seeds)


def test_a_split_returning_index_arrays_is_explained():
    def split_indices(dataset, lengths):
        order = np.random.permutation(len(dataset))
        return [order[:lengths[0]], order[lengths[0]:]]
    assert "should return a list of 3 datasets" in failure("random_split_partition", split_indices,
                                                           manual_seed)


def test_an_endless_len_is_stopped(timed_out):
    class EndlessLen(StudentDataLoader):
        def __len__(self):
            while True:
                pass
    assert timed_out in failure("dataloader_batches", EndlessLen)
