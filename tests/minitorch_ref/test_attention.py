"""The transformer's parts without PyTorch: gradients against finite differences, what a
mask must guarantee, dtypes kept, and errors that say what is wrong."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn
from minitorch_ref.gradcheck import check_module

from test_errors import case, check_raises, floats

TOLERANCE = 1e-6


class AttentionOnOneInput(nn.Module):
    """Scaled dot-product attention of ``(x, 2x, x**2)``, so ``check_module`` (one input)
    checks the gradients of the query, the key and the value at once."""

    def __init__(self, **options):
        super().__init__()
        self.attention = nn.ScaledDotProductAttention(**options)

    def forward(self, x):
        self.x = x
        return self.attention.forward(x, 2 * x, x**2)

    def backward(self, grad_output):
        grad_q, grad_k, grad_v = self.attention.backward(grad_output)
        return grad_q + 2 * grad_k + 2 * self.x * grad_v


GRADIENT_CASES = [
    pytest.param(lambda: nn.LayerNorm(5), (2, 3, 5), id="LayerNorm"),
    pytest.param(lambda: nn.LayerNorm((3, 5)), (2, 3, 5), id="LayerNorm-two-axes"),
    pytest.param(lambda: AttentionOnOneInput(), (2, 2, 4, 3), id="attention"),
    pytest.param(lambda: AttentionOnOneInput(is_causal=True), (2, 2, 4, 3), id="causal"),
    pytest.param(lambda: nn.MultiheadAttention(6, 3), (2, 4, 6), id="MultiheadAttention"),
    pytest.param(lambda: nn.TransformerEncoderLayer(6, 2, 12, dropout=0.2, activation="gelu",
                                                    norm_first=True), (2, 4, 6),
                 id="pre-norm-block-with-dropout"),
    pytest.param(lambda: nn.TransformerEncoderLayer(6, 2, 12, dropout=0.0), (2, 4, 6),
                 id="post-norm-block"),
]


@pytest.mark.parametrize("make, shape", GRADIENT_CASES)
def test_every_gradient_matches_finite_differences(make, shape):
    errors = check_module(make(), np.random.default_rng(0).standard_normal(shape))
    assert max(errors.values()) < TOLERANCE, errors


def test_causal_weights_sum_to_one_and_give_the_future_exactly_zero():
    q, k, v = (np.random.default_rng(i).standard_normal((2, 3, 5, 4)) for i in range(3))
    attention = nn.ScaledDotProductAttention(is_causal=True)
    attention.forward(q, k, v)
    weights = attention.attn_weights
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
    assert (weights[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0).all()


def test_no_gradient_reaches_a_key_or_value_no_query_may_read():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((1, 4, 3)), rng.standard_normal((1, 5, 3)), rng.standard_normal(
        (1, 5, 2))
    mask = np.ones((4, 5), dtype=bool)
    mask[:, 2] = False                  # key 2 is hidden from every query
    mask[3] = False                     # query 3 may read nothing: its output is 0, not NaN
    attention = nn.ScaledDotProductAttention()
    out = attention.forward(q, k, v, attn_mask=mask)
    assert np.isfinite(out).all() and not out[0, 3].any()
    grad_q, grad_k, grad_v = attention.backward(rng.standard_normal(out.shape))
    assert not grad_k[0, 2].any() and not grad_v[0, 2].any() and not grad_q[0, 3].any()


def test_float32_stays_float32_through_the_block():
    block = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                       norm_first=True, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    y = block.forward(x, is_causal=True)
    grad = block.backward(np.ones_like(y))
    assert y.dtype == grad.dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in block.parameters())


def test_heads_split_and_merge_back():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    heads = nn.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(heads[1, 2, 0], x[1, 0, 4:6])   # head 2: features 4 and 5
    np.testing.assert_array_equal(nn.merge_heads(heads), x)


def test_gradients_accumulate_until_zero_grad():
    block = nn.MultiheadAttention(4, 2)
    x = floats(2, 3, 4)
    for _ in range(2):
        block.backward(np.ones_like(block.forward(x, is_causal=True)))
    twice = block.in_proj_weight.grad.copy()
    block.zero_grad()
    block.backward(np.ones_like(block.forward(x, is_causal=True)))
    np.testing.assert_allclose(twice, 2 * block.in_proj_weight.grad)


ERROR_CASES = [
    case(lambda: nn.MultiheadAttention(10, 3), ValueError, "embed_dim=10", "num_heads=3",
         "divisible", id="heads-do-not-divide"),
    case(lambda: nn.MultiheadAttention(4, 2, batch_first=False), ValueError, "batch_first",
         id="not-batch-first"),
    case(lambda: nn.MultiheadAttention(4, 2)(floats(3, 4)), ValueError, "(B, T, 4)", "(3, 4)",
         "batch dimension", id="attention-without-batch"),
    case(lambda: nn.MultiheadAttention(4, 2).forward(floats(2, 3, 4), attn_mask=np.ones(
        (4, 4), dtype=bool)), ValueError, "attn_mask", "(3, 3)", "(4, 4)", id="mask-shape"),
    case(lambda: nn.MultiheadAttention(4, 2).forward(floats(2, 3, 4), floats(2, 3, 4)),
         ValueError, "key and value", id="key-without-value"),
    case(lambda: nn.ScaledDotProductAttention(is_causal=True).forward(
        floats(1, 3, 2), floats(1, 3, 2), floats(1, 3, 2), np.ones((3, 3), dtype=bool)),
         ValueError, "attn_mask", "is_causal", id="mask-and-causal"),
    case(lambda: nn.ScaledDotProductAttention().forward(
        floats(1, 3, 2), floats(1, 4, 2), floats(1, 4, 2), np.ones((3, 3), dtype=bool)),
         ValueError, "attn_mask", "(3, 3)", "(1, 3, 4)", id="mask-does-not-broadcast"),
    case(lambda: nn.ScaledDotProductAttention().forward(
        floats(1, 3, 2), floats(1, 4, 3), floats(1, 4, 2)), ValueError, "query and key",
         id="query-key-width"),
    case(lambda: nn.LayerNorm(5)(floats(2, 3, 4)), ValueError, "LayerNorm", "(*, 5)",
         "(2, 3, 4)", id="layer-norm-shape"),
    case(lambda: nn.TransformerEncoderLayer(4, 2, activation="tanh"), ValueError, "activation",
         "'tanh'", id="block-activation"),
    case(lambda: nn.Linear(3, 2)(floats(2, 4, 5)), ValueError, "Linear", "(..., 3)",
         "(2, 4, 5)", id="linear-sequence-features"),
]


@pytest.mark.parametrize("action, exc, fragments", ERROR_CASES)
def test_bad_input_is_refused_with_what_was_wrong(action, exc, fragments):
    check_raises(action, exc, fragments)
