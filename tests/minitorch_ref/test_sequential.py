"""Sequential: order of forward and backward, indexing, slicing, append, validation."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn

from helpers import Recorder, build, randn


@pytest.fixture
def log():
    return []


@pytest.fixture
def chain(log):
    """a: 2x+1, b: 3x, c: x+5, so x=1 -> 3 -> 9 -> 14; gradients 1 -> 1 -> 3 -> 6."""
    return nn.Sequential(
        Recorder("a", log, scale=2.0, shift=1.0),
        Recorder("b", log, scale=3.0),
        Recorder("c", log, shift=5.0),
    )


def _events(log, kind):
    return [(name, float(value.item())) for event, name, value in log if event == kind]


def test_forward_applies_modules_in_order(chain, log):
    assert chain(np.array([[1.0]])).item() == 14.0
    assert _events(log, "forward") == [("a", 1.0), ("b", 3.0), ("c", 9.0)]


def test_backward_runs_modules_in_reverse_order(chain, log):
    chain(np.array([[1.0]]))
    log.clear()
    assert chain.backward(np.array([[1.0]])).item() == 6.0
    assert _events(log, "backward") == [("c", 1.0), ("b", 1.0), ("a", 3.0)]
    assert len(log) == 3  # backward does not rerun any forward


def test_empty_sequential_is_the_identity():
    x = randn(2, 3)
    seq = nn.Sequential()
    np.testing.assert_array_equal(seq(x), x)
    np.testing.assert_array_equal(seq.backward(x), x)


@pytest.mark.parametrize("index, name", [(0, "a"), (1, "b"), (2, "c"), (-1, "c"), (-3, "a")])
def test_indexing_returns_the_module(chain, index, name):
    assert chain[index].name == name


@pytest.mark.parametrize("index", [3, 10, -4])
def test_indexing_out_of_range_raises_index_error(chain, index):
    with pytest.raises(IndexError, match="out of range"):
        chain[index]


@pytest.mark.parametrize(
    "index, names",
    [(slice(1, None), ["b", "c"]), (slice(None, 2), ["a", "b"]), (slice(None, None, -1),
                                                                    ["c", "b", "a"]),
     (slice(5, 9), [])],
    ids=["tail", "head", "reversed", "empty"],
)
def test_slicing_returns_a_sequential_of_the_same_modules(chain, index, names):
    part = chain[index]
    assert isinstance(part, nn.Sequential)
    assert [m.name for m in part] == names
    assert all(any(m is original for original in chain) for m in part)


def test_slice_is_renumbered_from_zero():
    seq = build(lambda: nn.Sequential(nn.ReLU(), nn.Linear(2, 3), nn.Linear(3, 1)))
    assert [name for name, _ in seq[1:].named_parameters()] == [
        "0.weight", "0.bias", "1.weight", "1.bias",
    ]


def test_slice_runs_its_part_of_the_chain(chain):
    assert chain[1:](np.array([[1.0]])).item() == 8.0  # 3 * 1 + 5


def test_len_and_iteration(chain):
    assert len(chain) == 3
    assert [m.name for m in chain] == ["a", "b", "c"]
    assert list(chain) == list(chain.children())


def test_append_returns_self_and_registers_the_next_index(chain, log):
    layer = build(lambda: nn.Linear(1, 1))
    assert chain.append(layer) is chain
    assert len(chain) == 4 and chain[3] is layer and chain[-1] is layer
    assert [name for name, _ in chain.named_parameters()] == ["3.weight", "3.bias"]

    out = chain(np.array([[1.0]]))
    assert out.item() == pytest.approx(14.0 * layer.weight.data.item() + layer.bias.data.item())


def test_constructor_numbers_children_like_pytorch():
    seq = build(lambda: nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)))
    assert [name for name, _ in seq.named_modules()] == ["", "0", "1", "2"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


NOT_MODULES = [
    (lambda x: x, "function"),
    (np.ones(3), "ndarray"),
    (nn.Linear, "type"),  # the class, not an instance: a common slip
    (None, "NoneType"),
]


@pytest.mark.parametrize("value, type_name", NOT_MODULES, ids=[n for _, n in NOT_MODULES])
@pytest.mark.parametrize(
    "add",
    [lambda v: nn.Sequential(nn.ReLU(), v), lambda v: nn.Sequential(nn.ReLU()).append(v)],
    ids=["constructor", "append"],
)
def test_non_modules_are_rejected(add, value, type_name):
    with pytest.raises((TypeError, ValueError), match=type_name):
        add(value)
