"""nn.Embedding without PyTorch: what a student notices about the lookup and its gradient
(the parity suite compares the numbers with torch's)."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn


def test_lookup_returns_the_rows_with_a_trailing_embedding_axis():
    emb = nn.Embedding(5, 3, rng=np.random.default_rng(0))
    indices = np.array([[4, 0], [2, 2]])
    out = emb(indices)
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out[1, 0], emb.weight.data[2])


def test_output_is_a_copy_not_a_view_of_the_table():
    emb = nn.Embedding(5, 3, rng=np.random.default_rng(0))
    before = emb.weight.data.copy()
    emb(np.array([1, 1]))[...] = 99.0
    np.testing.assert_array_equal(emb.weight.data, before)


def test_repeated_indices_accumulate_where_fancy_index_plus_equals_would_not():
    """Row 1 is read three times: it gets 1 + 2 + 3; ``grad[idx] += G`` would keep only 3."""
    emb = nn.Embedding(4, 1)
    emb(np.array([1, 3, 1, 1]))
    emb.backward(np.array([[1.0], [10.0], [2.0], [3.0]]))
    np.testing.assert_array_equal(emb.weight.grad[:, 0], [0.0, 6.0, 0.0, 10.0])
    lossy = np.zeros((4, 1))
    lossy[np.array([1, 3, 1, 1])] += np.array([[1.0], [10.0], [2.0], [3.0]])
    assert lossy[1, 0] == 3.0, "the classic mistake this test guards against"


def test_gradient_accumulates_until_zero_grad():
    emb = nn.Embedding(3, 2)
    for _ in range(2):
        emb(np.array([2]))
        emb.backward(np.ones((1, 2)))
    np.testing.assert_array_equal(emb.weight.grad[2], [2.0, 2.0])
    emb.zero_grad()
    assert not emb.weight.grad.any()


def test_padding_row_gets_no_gradient_and_keeps_its_value():
    emb = nn.Embedding(4, 2, padding_idx=0, rng=np.random.default_rng(1))
    emb(np.array([[0, 2], [0, 0]]))
    emb.backward(np.ones((2, 2, 2)))
    np.testing.assert_array_equal(emb.weight.grad[0], [0.0, 0.0])
    np.testing.assert_array_equal(emb.weight.grad[2], [1.0, 1.0])
    np.testing.assert_array_equal(emb.weight.data[0], [0.0, 0.0])


def test_backward_returns_none_in_a_sequential_too():
    model = nn.Sequential(nn.Embedding(5, 2), nn.Flatten(), nn.Linear(6, 3))
    out = model(np.array([[1, 2, 3], [0, 0, 4]]))
    assert model.backward(np.ones_like(out)) is None
    assert model[0].weight.grad.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_of_table_gradient_and_output(dtype):
    emb = nn.Embedding(5, 2, dtype=dtype)
    assert emb(np.array([1])).dtype == dtype and emb.weight.grad.dtype == dtype


def test_state_dict_round_trip_and_repr():
    emb = nn.Embedding(6, 3, padding_idx=-1, rng=np.random.default_rng(2))
    copy = nn.Embedding(6, 3, padding_idx=-1, rng=np.random.default_rng(3))
    copy.load_state_dict(emb.state_dict())
    np.testing.assert_array_equal(copy.weight.data, emb.weight.data)
    assert list(emb.state_dict()) == ["weight"]
    assert repr(emb) == "Embedding(6, 3, padding_idx=5)"
    assert repr(nn.Embedding(6, 3)) == "Embedding(6, 3)"
