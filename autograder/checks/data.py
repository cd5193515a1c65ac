"""Checks of data loading: TensorDataset, DataLoader (batches, drop_last, shuffling), random_split.

DataLoader and random_split are given a small dataset (``doubles.IndexDataset``, built in
the student's kernel when graded from outside) whose samples carry their own index: sample ``i`` is ``(x_i, i)`` with ``x_i[0] == i``. The
batches then show which samples came, in which order, and whether inputs and
targets still belong together. The dataset has only ``__len__`` and an
``__getitem__`` that takes one integer, the interface every Dataset offers (a
``Subset`` from random_split, a dataset a student writes), so a loader that
relies on ``dataset[array_of_indices]`` or on TensorDataset's internals fails.
"""
from __future__ import annotations

import math

import numpy as np

from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, diagnose, when
from course.testing.failure import expect, fail
from autograder.checks._calls import expect_value_error, twice_after_seed
from autograder.integrity import check_instance
from autograder.registry import check
from autograder.sandbox import call
from autograder.remote.doubles import IndexDataset
from autograder.remote.proxy import Remote
from minitorch_ref import data as ref

_END = object()


def index_dataset(beside: object, n: int, shape: tuple[int, ...] = (3,)):
    """``doubles.IndexDataset(n, shape)`` for the student's code: made in the student's kernel
    when ``beside`` (the student's class or function) lives there."""
    if isinstance(beside, Remote):
        return beside._session.send("double", "index_dataset", n, shape)
    return IndexDataset(n, shape)


def _label(n: int, kwargs: dict) -> str:
    shown = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"DataLoader(<dataset of {n} samples>{shown})"


# ----------------------------------------------------------------------------- reading batches
def read_epoch(label: str, loader, limit: int, epoch: int = 1) -> list[tuple[np.ndarray, ...]]:
    """The batches of one pass over ``loader``, each checked to be (inputs, targets) arrays."""
    iterator = call(f"iter({label})", iter, loader)
    batches = []
    for _ in range(limit + 1):
        batch = call(f"iterating over {label}", next, iterator, _END)
        if batch is _END:
            return batches
        batches.append(_unpack(f"batch {len(batches)} of epoch {epoch} of {label}", batch))
    fail(f"{label} yielded more than {limit} batches in one epoch. Does __iter__ stop "
         "after the last batch?")


def _unpack(what: str, batch) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        fail(f"{what} should be a tuple (inputs, targets) of stacked arrays, got "
             f"{type(batch).__name__}{_length(batch)}.")
    x, y = as_array(f"{what}: inputs", batch[0]), as_array(f"{what}: targets", batch[1])
    expect(len(y) > 0 if y.ndim else True, f"{what} is empty; a loader never yields empty batches.")
    expect(y.ndim == 1 and x.shape[:1] == y.shape,
           f"{what}: inputs of shape {x.shape} and targets of shape {y.shape}; a batch of B "
           "samples stacks them along a new first axis: (B, *sample_shape) and (B,).")
    expect(close(x.reshape(len(x), -1)[:, 0], y),
           f"{what}: the inputs and targets do not belong together (the inputs of samples "
           f"{x.reshape(len(x), -1)[:, 0].astype(int).tolist()} with the targets of samples "
           f"{y.astype(int).tolist()}). Take X and y at the same indices.")
    return x, y


def _length(value) -> str:
    return f" of length {len(value)}" if isinstance(value, (tuple, list)) else ""


def _sizes(batches) -> list[int]:
    return [len(y) for _, y in batches]


def _order(batches) -> list[int]:
    return [int(i) for _, y in batches for i in y]


# ----------------------------------------------------------------------------- loaders
def loader_twins(DataLoader, n: int, shape: tuple[int, ...] = (3,), **kwargs):
    dataset = index_dataset(DataLoader, n, shape)
    label = _label(n, kwargs)
    loader = call(label, DataLoader, dataset, **kwargs)
    check_instance("DataLoader", loader, allowed=[dataset])
    return label, loader, ref.DataLoader(IndexDataset(n, shape), **kwargs)


def expect_batches(label: str, loader, reference, sample_shape: tuple[int, ...] = (3,),
                   epoch: int = 1, own: tuple[list[int], int] | None = None) -> list:
    """Batch sizes, sample shapes and len(loader) as the reference's (or, ``own``, as the
    batch sizes and length of the student's own plain loader, for a cell that judges
    something else: drop_last, shuffling); returns the batches."""
    expected = list(reference)
    n, batch_size = len(reference.dataset), reference.batch_size
    batches = read_epoch(label, loader, limit=2 * n + 2, epoch=epoch)
    got_sizes, sizes = _sizes(batches), [len(y) for _, y in expected]
    if own is not None and own[0] != sizes:
        sizes = own[0]
    if got_sizes != sizes:
        hints = (
            when("dropped", lambda g, e: list(g) == list(e[:-1]) and not reference.drop_last,
                 "the last, smaller batch is missing. With drop_last=False the remaining "
                 "n % batch_size samples form one more batch: math.ceil(n / batch_size) batches."),
            when("kept", lambda g, e: reference.drop_last and list(g[:-1]) == list(e)
                 and g[-1] < batch_size,
                 "drop_last=True should drop the last, incomplete batch."),
            when("batches_shuffled", lambda g, e: sorted(g) == sorted(e),
                 "the smaller batch is not the last one: did you shuffle the order of the "
                 "batches rather than the samples? Shuffle the sample indices, then cut them "
                 "into batches in order."),
        )
        hint = diagnose(np.array(got_sizes), np.array(sizes), hints)
        fail(f"{label} yielded batches of sizes {got_sizes}, expected {sizes} ({n} samples)."
             + (f"\n  Likely mistake: {hint}" if hint else ""))
    for b, (x, _) in enumerate(batches):
        expect(x.shape[1:] == sample_shape,
               f"batch {b} of {label}: inputs of shape {x.shape}, expected "
               f"{(len(x),) + sample_shape}: stack the samples along a new first axis.")
    _expect_len(label, loader, len(expected) if own is None else own[1], n, batch_size)
    return batches


def own_plain(DataLoader, n: int, batch_size: int,
              drop_last: bool = False) -> tuple[list[int], int] | None:
    """The batch sizes and len() of the student's own loader over ``n`` samples, without
    shuffling: what drop_last and shuffling change, judged by their cells, starts from it
    (how it batches is dataloader_batches' to judge). None if it yields nothing: then the
    reference's."""
    label, loader, _ = loader_twins(DataLoader, n, batch_size=batch_size)
    sizes = _sizes(read_epoch(label, loader, limit=2 * n + 2))
    if not sizes:
        return None
    if drop_last and sizes and sizes[-1] < batch_size:
        sizes = sizes[:-1]
    length = call(f"len({label})", len, loader)
    return sizes, length - (1 if drop_last and length > len(sizes) else 0)


def _expect_len(label: str, loader, expected: int, n: int, batch_size: int) -> None:
    got = call(f"len({label})", len, loader)
    if got == expected:
        return
    hints = {n // batch_size: "len() rounds down; without drop_last the last partial batch "
                              "counts too: math.ceil(n / batch_size).",
             math.ceil(n / batch_size): "with drop_last=True the incomplete batch is not "
                                        "yielded, so len() is n // batch_size.",
             n: "len(loader) is the number of batches, not of samples."}
    hint = hints.get(got)
    fail(f"len({label}) is {got}, expected {expected} batches of {batch_size} from {n} samples."
         + (f"\n  Likely mistake: {hint}" if hint else ""))


# (samples, batch_size): batch size 1, batch = dataset, batch larger than the dataset.
BATCH_CASES = ((10, 3), (12, 4), (5, 1), (7, 7), (4, 10))


@check
def dataloader_batches(DataLoader):
    """Batches in order (no shuffle by default), the last one smaller; len(loader); 2-D samples."""
    for n, batch_size in BATCH_CASES:
        label, loader, reference = loader_twins(DataLoader, n, batch_size=batch_size)
        for epoch in (1, 2):
            order = _order(expect_batches(label, loader, reference, epoch=epoch))
            expect(order == list(range(n)),
                   f"epoch {epoch} of {label} visits the samples in the order {order}, "
                   f"expected 0..{n - 1} in order: shuffle is False by default.")
    label, loader, reference = loader_twins(DataLoader, 5, shape=(2, 3), batch_size=2)
    expect_batches(label, loader, reference, sample_shape=(2, 3))


@check
def dataloader_drop_last(DataLoader):
    """drop_last=True drops the incomplete last batch (and len() counts it out); False keeps it
    (how the batches are cut, dataloader_batches' part, is taken from the student's own plain
    loader when it differs from the reference's)."""
    for n, batch_size in BATCH_CASES:
        for drop_last in (True, False):
            label, loader, reference = loader_twins(DataLoader, n, batch_size=batch_size,
                                                    drop_last=drop_last)
            expect_batches(label, loader, reference,
                           own=own_plain(DataLoader, n, batch_size, drop_last))


def _shuffle_verdict(label: str, orders: list[list[int]], n: int, batch_size: int,
                     per_epoch: int) -> None:
    """Each epoch a permutation (of ``per_epoch`` samples, n unless the student's own plain
    loader yields fewer), not sorted, batches not runs, a new one every epoch."""
    for epoch, order in enumerate(orders, start=1):
        counts = np.bincount(order, minlength=n)
        expect((counts <= 1).all() and counts.sum() == per_epoch if per_epoch < n
               else (counts == 1).all(),
               f"epoch {epoch} of {label} yielded samples {np.flatnonzero(counts > 1).tolist()} "
               f"more than once and missed {np.flatnonzero(counts == 0).tolist()}. Each sample "
               "comes exactly once per epoch: draw one permutation of range(n) and cut it "
               "into batches (not indices drawn with replacement).")
        expect(order != sorted(order),
               f"epoch {epoch} of {label} returned the samples in their original order. "
               "With shuffle=True draw a random permutation of the indices each epoch.")
        runs = [order[i:i + batch_size] for i in range(0, n, batch_size)]
        expect(not all(r == list(range(r[0], r[0] + len(r))) for r in runs),
               f"epoch {epoch} of {label} shuffled the order of the batches but each batch "
               "holds consecutive samples. Shuffle the sample indices, then cut them into batches.")
    expect(len({tuple(o) for o in orders}) == len(orders),
           f"{label} visits the samples in the same order every epoch: it was shuffled once. "
           "Draw a new permutation at the start of every epoch, in __iter__, not in __init__.")


@check
def dataloader_shuffle(DataLoader, manual_seed):
    """shuffle=True: every sample once per epoch, in a new random order every epoch, drawn
    from the loader's rng, else from default_rng() (manual_seed makes it reproducible); the
    batch sizes and len() as the student's own plain loader's (dataloader_batches' part)."""
    n, batch_size = 20, 6
    own = own_plain(DataLoader, n, batch_size)
    label, loader, reference = loader_twins(DataLoader, n, batch_size=batch_size, shuffle=True)
    orders = [_order(expect_batches(label, loader, reference, epoch=e, own=own))
              for e in (1, 2, 3)]
    _shuffle_verdict(label, orders, n, batch_size, sum(own[0]) if own else n)
    label, loader, reference = loader_twins(DataLoader, n, batch_size=batch_size, shuffle=True,
                                            drop_last=True)
    own = own_plain(DataLoader, n, batch_size, drop_last=True)
    orders = [_order(expect_batches(label, loader, reference, epoch=e, own=own))
              for e in (1, 2, 3)]
    expect(all(len(set(o)) == len(o) for o in orders) and len({tuple(o) for o in orders}) == 3,
           f"{label}: each epoch should yield 18 distinct samples, in a new order every epoch.")
    _expect_seeded_orders(DataLoader, manual_seed)


def _shuffled_orders(DataLoader, seed: int | None, epochs: int = 2) -> list[list[int]]:
    """The orders of ``epochs`` epochs of a shuffling loader over 20 samples, built with
    ``rng=default_rng(seed)`` (``seed`` None: no rng)."""
    kwargs = {} if seed is None else {"rng": np.random.default_rng(seed)}
    label, loader, reference = loader_twins(DataLoader, 20, batch_size=6, shuffle=True, **kwargs)
    own = own_plain(DataLoader, 20, 6)
    return [_order(expect_batches(label, loader, reference, epoch=e, own=own))
            for e in range(1, epochs + 1)]


def _expect_seeded_orders(DataLoader, manual_seed) -> None:
    """Equally seeded generators give equal orders, other seeds others; without an rng, the
    order follows manual_seed (the loader draws from default_rng() at each epoch)."""
    first, again, other = (_shuffled_orders(DataLoader, seed) for seed in (5, 5, 6))
    expect(first == again and first != other, "Two DataLoader(..., shuffle=True, rng="
           "np.random.default_rng(5)) gave different orders, or generators with other seeds "
           "the same ones.\n  Likely mistake: the loader does not shuffle with its rng: draw "
           "the permutation with self.rng when it is given.")
    seeded = twice_after_seed(manual_seed, lambda: _shuffled_orders(DataLoader, None))
    expect(seeded[0] == seeded[1], "After manual_seed(3), two loaders without an rng gave "
           "different orders.\n  Likely mistake: without an rng, shuffle with default_rng(), "
           "looked up when the epoch starts, so that manual_seed makes training reproducible.")


@check
def default_collate_fields(default_collate):
    """Tuples are stacked field by field into a tuple of arrays; plain arrays into one array."""
    rng = np.random.default_rng(2)
    xs, ys = rng.standard_normal((4, 2, 3)), np.arange(4)
    batch = call("default_collate([(x_0, y_0), ..., (x_3, y_3)])", default_collate,
                 [(x, y) for x, y in zip(xs, ys)])
    expect(isinstance(batch, tuple) and len(batch) == 2, "default_collate of four (x, y) "
           f"tuples should return a tuple (X_batch, y_batch), got {type(batch).__name__}"
           f"{_length(batch)}.")
    expect_close("default_collate(...)[0]", batch[0], xs, "the four x stacked along axis 0")
    expect_close("default_collate(...)[1]", batch[1], ys, "the four y stacked along axis 0")
    stacked = call("default_collate([x_0, ..., x_3])", default_collate, list(xs))
    expect(not isinstance(stacked, tuple), "default_collate of four plain arrays returned a "
           "tuple: for samples that are arrays, return one stacked array, np.stack(samples).")
    expect_close("default_collate([x_0, ..., x_3])", stacked, xs, "np.stack of the samples")


# ----------------------------------------------------------------------------- TensorDataset
def _expect_items(what: str, dataset, arrays: tuple[np.ndarray, ...], length: bool = True) -> None:
    """len (``length``: tensor_dataset judges it) and the items of a TensorDataset."""
    n = len(arrays[0])
    size = call(f"len({what})", len, dataset) if length else n
    hint = (f"\n  Likely mistake: that is the number of arrays; len() is the number of samples, "
            f"len(arrays[0])." if size == len(arrays) else "")
    expect(size == n, f"len({what}) is {size}, expected {n} samples.{hint}")
    for i in (0, n // 2, n - 1):
        item = call(f"{what}[{i}]", dataset.__getitem__, i)
        expect(isinstance(item, tuple) and len(item) == len(arrays),
               f"{what}[{i}] should be a tuple of {len(arrays)} entries, one row of each array "
               f"(as in PyTorch; a DataLoader stacks tuples field by field), got "
               f"{type(item).__name__}{_length(item)}.")
        for k, (got, array) in enumerate(zip(item, arrays)):
            expect_close(f"{what}[{i}][{k}]", got, array[i], f"row {i} of array {k}")


@check
def tensor_dataset(TensorDataset):
    """TensorDataset(X, y): len is the number of rows, ds[i] == (X[i], y[i]), the arrays kept as
    a tuple in .arrays; no array, a 0-d one or unequal first dimensions raise a ValueError."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((7, 3)), np.arange(7) % 3
    dataset = call("TensorDataset(X, y)", TensorDataset, X.copy(), y.copy())
    check_instance("TensorDataset", dataset)
    _expect_items("TensorDataset(X, y)", dataset, (X, y))
    stored = call("TensorDataset(X, y).arrays", getattr, dataset, "arrays", None)
    expect(isinstance(stored, tuple) and len(stored) == 2,
           f"TensorDataset(X, y).arrays is {type(stored).__name__}{_length(stored)}: store the "
           "arrays as a tuple, self.arrays = tuple(np.asarray(a) for a in arrays).")
    for k, (got, array) in enumerate(zip(stored, (X, y))):
        expect_close(f"TensorDataset(X, y).arrays[{k}]", got, array, f"array {k} as given")
    for what, arrays, shapes in (("X (7, 3) and y (6,)", (X, y[:-1]), ("(7, 3)", "(6,)")),
                                 ("no array at all", (), ()),
                                 ("X (7, 3) and a zero-dimensional 1.0", (X, np.float64(1.0)),
                                  ("()",))):
        expect_value_error(f"TensorDataset with {what}", TensorDataset, *arrays, naming=shapes,
                           fix="Check the arrays in the constructor: a mismatch is a bug to "
                               "report at once, naming the shapes.")


@check
def tensor_dataset_arrays(TensorDataset):
    """TensorDataset takes any number of arrays: (X,) and (X, y, w) samples (len() is
    tensor_dataset's to judge)."""
    rng = np.random.default_rng(1)
    X, y, w = rng.standard_normal((5, 2, 2)), np.arange(5), rng.random(5)
    for names, arrays in (("X", (X,)), ("X, y, w", (X, y, w))):
        dataset = call(f"TensorDataset({names})", TensorDataset, *(a.copy() for a in arrays))
        check_instance("TensorDataset", dataset)
        _expect_items(f"TensorDataset({names})", dataset, arrays, length=False)


# ----------------------------------------------------------------------------- random_split
def _split_indices(what: str, subsets, lengths: list[int]) -> list[list[int]]:
    """The dataset indices in each returned subset (read through subset[k])."""
    expect(isinstance(subsets, (list, tuple)) and len(subsets) == len(lengths),
           f"{what} should return a list of {len(lengths)} datasets, got "
           f"{type(subsets).__name__}{_length(subsets)}.")
    got_lengths = [call(f"len(subset {s} of {what})", len, subset)
                   for s, subset in enumerate(subsets)]
    expect(got_lengths == lengths,
           f"{what} returned subsets of sizes {got_lengths}, expected {lengths}.")
    indices = []
    for s, subset in enumerate(subsets):
        samples = [call(f"subset {s} of {what}[{k}]", subset.__getitem__, k)
                   for k in range(lengths[s])]
        expect(all(isinstance(sample, tuple) and len(sample) == 2 for sample in samples),
               f"subset {s} of {what}: subset[k] should be a sample of the dataset, (x, y).")
        indices.append([int(asarray(y)) for _, y in samples])
    return indices


def expect_partition(what: str, indices: list[list[int]], n: int) -> None:
    """Disjoint subsets that together hold every sample, in a random order."""
    flat = [i for subset in indices for i in subset]
    counts = np.bincount(flat, minlength=n)
    expect(not (counts > 1).any(),
           f"{what}: samples {np.flatnonzero(counts > 1).tolist()} appear in more than one "
           "subset (overlapping). Draw ONE permutation of range(n) and cut it into consecutive "
           "pieces of the given lengths.")
    expect((counts == 1).all(),
           f"{what}: samples {np.flatnonzero(counts == 0).tolist()} are in no subset.")
    expect(flat != list(range(n)),
           f"{what}: the subsets are consecutive runs of the dataset, in order (not shuffled). "
           "random_split draws a random permutation first, then cuts it.")


@check
def random_split_partition(random_split, manual_seed):
    """random_split(ds, [12, 5, 3]): subsets of those sizes, disjoint, covering, random, drawn
    from rng (else default_rng(), reproducible with manual_seed); [10, 5] of 20 raises."""
    dataset, lengths = index_dataset(random_split, 20), [12, 5, 3]
    what = f"random_split(<dataset of 20 samples>, {lengths})"
    subsets = call(what, random_split, dataset, lengths)
    expect_partition(what, _split_indices(what, subsets, lengths), 20)
    expect_value_error("random_split(<dataset of 20 samples>, [10, 5])", random_split,
                       dataset, [10, 5], fix="Counts must add up to len(dataset).")

    def split(seed: int | None) -> list[list[int]]:
        kwargs = {} if seed is None else {"rng": np.random.default_rng(seed)}
        shown = f"random_split(<dataset of 20 samples>, {lengths}, rng=default_rng({seed}))"
        return _split_indices(shown, call(shown, random_split, dataset, lengths, **kwargs),
                              lengths)

    expect(split(0) == split(0) and split(0) != split(1), "random_split with equally seeded "
           "generators gave different subsets, or with other seeds the same ones.\n  Likely "
           "mistake: shuffle with the rng passed in, rng.permutation(len(dataset)).")
    seeded = twice_after_seed(manual_seed, lambda: split(None))
    expect(seeded[0] == seeded[1], "After manual_seed(3), two random_split calls without an "
           "rng gave different subsets.\n  Likely mistake: without an rng, shuffle with "
           "default_rng(), so that manual_seed makes the split reproducible.")


@check
def random_split_fractions(random_split):
    """Fractions summing to 1 become sizes; the remainder goes one by one to the first subsets
    (how the samples are drawn into them is random_split_partition's to judge)."""
    for n, fractions, lengths in ((10, [0.8, 0.2], [8, 2]), (11, [0.5, 0.5], [6, 5]),
                                  (9, [0.7, 0.2, 0.1], [7, 2, 0])):
        what = f"random_split(<dataset of {n} samples>, {fractions})"
        subsets = call(what, random_split, index_dataset(random_split, n), fractions)
        _split_indices(what, subsets, lengths)
