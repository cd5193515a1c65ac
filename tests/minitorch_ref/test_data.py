"""Datasets, DataLoader and random_split: what a training loop sees."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_ref as mt
from minitorch_ref.data import DataLoader, Dataset, Subset, TensorDataset, random_split


def numbered(n: int, features: int = 4) -> TensorDataset:
    """Sample ``i`` is ``(X[i], i)`` with ``X[i] = [i, i + 0.1, ...]``: the label names the row."""
    ids = np.arange(n)
    X = ids[:, None] + 0.1 * np.arange(features)
    return TensorDataset(X, ids)


def epoch_ids(loader) -> list[int]:
    """The sample ids in the order one epoch delivers them."""
    return [int(i) for _, yb in loader for i in yb]


class PairDataset(Dataset):
    """A user-written dataset with only __len__/__getitem__, returning (x, y)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        return np.array([index, -index], dtype=np.float64), index


class ArrayDataset(Dataset):
    """A user-written dataset whose samples are single arrays."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        return np.full(3, float(index))


# ----------------------------------------------------------------------------- TensorDataset
def test_tensordataset_indexing_returns_a_tuple_of_rows():
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6) * 10
    ds = TensorDataset(X, y)
    assert len(ds) == 6
    sample = ds[4]
    assert isinstance(sample, tuple) and len(sample) == 2
    np.testing.assert_array_equal(sample[0], X[4])
    assert sample[1] == 40


def test_tensordataset_with_one_array_returns_a_one_tuple():
    ds = TensorDataset(np.arange(5.0))
    assert ds[2] == (2.0,)


# ----------------------------------------------------------------------------- DataLoader
def test_loader_yields_tuples_of_stacked_arrays():
    loader = DataLoader(numbered(10, features=4), batch_size=3)
    batches = list(loader)
    for xb, yb in batches[:-1]:
        assert isinstance(xb, np.ndarray) and isinstance(yb, np.ndarray)
        assert xb.shape == (3, 4) and yb.shape == (3,)
    assert all(isinstance(batch, tuple) for batch in batches)
    assert np.issubdtype(batches[0][1].dtype, np.integer), "labels keep their integer dtype"


@pytest.mark.parametrize(
    "n, batch_size, drop_last, sizes",
    [
        (10, 3, False, [3, 3, 3, 1]),
        (10, 3, True, [3, 3, 3]),
        (9, 3, False, [3, 3, 3]),
        (9, 3, True, [3, 3, 3]),
        (10, 10, False, [10]),
        (5, 8, False, [5]),
        (5, 8, True, []),
    ],
)
def test_loader_length_and_batch_sizes(n, batch_size, drop_last, sizes):
    loader = DataLoader(numbered(n), batch_size=batch_size, drop_last=drop_last)
    assert len(loader) == len(sizes)
    assert [len(xb) for xb, _ in loader] == sizes


def test_unshuffled_loader_keeps_dataset_order():
    loader = DataLoader(numbered(10), batch_size=3)
    assert epoch_ids(loader) == list(range(10))
    assert epoch_ids(loader) == list(range(10)), "and the same order again next epoch"


def test_batches_pair_each_input_with_its_own_label():
    loader = DataLoader(numbered(20), batch_size=6, shuffle=True, rng=np.random.default_rng(0))
    for xb, yb in loader:
        np.testing.assert_array_equal(xb[:, 0], yb)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), batch_size=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_every_sample_appears_exactly_once_per_shuffled_epoch(n, batch_size, seed):
    loader = DataLoader(numbered(n), batch_size=batch_size, shuffle=True,
                        rng=np.random.default_rng(seed))
    for _ in range(2):
        assert sorted(epoch_ids(loader)) == list(range(n))


def test_shuffle_draws_a_new_order_every_epoch():
    loader = DataLoader(numbered(50), batch_size=8, shuffle=True, rng=np.random.default_rng(0))
    first, second = epoch_ids(loader), epoch_ids(loader)
    assert first != list(range(50)), "shuffled"
    assert first != second, "a fresh permutation each epoch"


def two_epochs(loader) -> list[list[int]]:
    return [epoch_ids(loader), epoch_ids(loader)]


def test_shuffle_is_reproducible_with_an_explicit_rng():
    def run(seed):
        return two_epochs(DataLoader(numbered(30), batch_size=4, shuffle=True,
                                     rng=np.random.default_rng(seed)))

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_shuffle_is_reproducible_under_manual_seed():
    loader = DataLoader(numbered(30), batch_size=4, shuffle=True)

    def run(seed):
        mt.manual_seed(seed)
        return two_epochs(loader)

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_custom_dataset_of_pairs_is_collated_by_stacking():
    batches = list(DataLoader(PairDataset(7), batch_size=3))
    assert len(batches) == 3
    xb, yb = batches[1]
    np.testing.assert_array_equal(xb, [[3, -3], [4, -4], [5, -5]])
    np.testing.assert_array_equal(yb, [3, 4, 5])
    assert batches[2][0].shape == (1, 2)


def test_custom_dataset_of_single_arrays_is_collated_into_one_array():
    batches = list(DataLoader(ArrayDataset(5), batch_size=2))
    assert all(isinstance(b, np.ndarray) for b in batches)
    assert [b.shape for b in batches] == [(2, 3), (2, 3), (1, 3)]
    np.testing.assert_array_equal(batches[1][:, 0], [2, 3])


@pytest.mark.parametrize("make", [numbered, PairDataset], ids=["TensorDataset", "custom"])
def test_loader_over_a_subset_follows_the_subset_indices(make):
    subset = Subset(make(10), [7, 2, 9, 0])
    assert len(subset) == 4
    assert int(subset[1][1]) == 2
    assert epoch_ids(DataLoader(subset, batch_size=3)) == [7, 2, 9, 0]


# ----------------------------------------------------------------------------- random_split
def subset_ids(subset) -> list[int]:
    return [int(subset[i][1]) for i in range(len(subset))]


@pytest.mark.parametrize(
    "n, lengths, sizes",
    [
        (10, [7, 3], [7, 3]),
        (10, [0, 10], [0, 10]),
        (10, [0.8, 0.2], [8, 2]),
        (5, [0.5, 0.5], [3, 2]),          # remainder goes to the first split, as in PyTorch
        (10, [1 / 3, 1 / 3, 1 / 3], [4, 3, 3]),
        (11, [0.25, 0.25, 0.5], [3, 3, 5]),
    ],
)
def test_random_split_sizes_are_disjoint_and_cover_the_dataset(n, lengths, sizes):
    parts = random_split(numbered(n), lengths, rng=np.random.default_rng(0))
    assert [len(p) for p in parts] == sizes
    ids = [i for p in parts for i in subset_ids(p)]
    assert sorted(ids) == list(range(n))


def test_random_split_is_random_and_reproducible():
    def split(seed):
        return [subset_ids(p) for p in random_split(numbered(20), [15, 5],
                                                     rng=np.random.default_rng(seed))]

    assert split(0) == split(0)
    assert split(0) != split(1)
    assert split(0)[0] != list(range(15)), "the samples are shuffled before splitting"
