"""PyTorch parity of the transformer's parts, in float64: LayerNorm, scaled dot-product
attention, MultiheadAttention, TransformerEncoderLayer, and the layers that now take
sequences ``(B, T, C)``.

Each test gives the torch twin the same parameters, then compares the forward output, the
input gradients for a random upstream gradient and every parameter gradient.
"""
import numpy as np
import pytest

from minitorch_ref import nn as mnn

from .conftest import assert_close, assert_same_parameters, needs_torch, to_torch, torch, twin
from .test_parity_nn import check_forward_backward

pytestmark = needs_torch

SEEDS = [0, 1]


def randomised(module, rng):
    """``module`` with every parameter drawn afresh, so no LayerNorm weight is a trivial 1 and
    no bias a trivial 0."""
    for param in module.parameters():
        param.data[...] = rng.normal(0.0, 0.5, param.shape)
    return module


# ====================================================================== LayerNorm
LAYER_NORMS = [
    pytest.param(lambda: mnn.LayerNorm(6), (4, 6), id="rows"),
    pytest.param(lambda: mnn.LayerNorm(5), (2, 3, 5), id="tokens"),
    pytest.param(lambda: mnn.LayerNorm((3, 4)), (2, 3, 4), id="two-axes"),
    pytest.param(lambda: mnn.LayerNorm(5, eps=1e-2), (2, 3, 5), id="eps"),
    pytest.param(lambda: mnn.LayerNorm(5, bias=False), (2, 3, 5), id="no-bias"),
    pytest.param(lambda: mnn.LayerNorm(5, elementwise_affine=False), (2, 3, 5), id="no-affine"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("make, shape", LAYER_NORMS)
def test_layer_norm(make, shape, seed):
    rng = np.random.default_rng(seed)
    module = randomised(make(), rng)
    check_forward_backward(module, twin(module), rng.normal(2.0, 3.0, shape), rng)


# ====================================================================== attention
def as_torch_mask(mask):
    """A boolean mask as a bool tensor, a float one in float64."""
    return torch.as_tensor(mask) if mask.dtype == bool else to_torch(mask)


def torch_attention_grads(q, k, v, grad_output, **kwargs):
    tensors = [to_torch(a, requires_grad=True) for a in (q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*tensors, **kwargs)
    out.backward(to_torch(grad_output))
    return out, [t.grad for t in tensors]


def shapes_qkv(rng, length=5, source=5):
    return (rng.standard_normal((2, 3, length, 4)), rng.standard_normal((2, 3, source, 4)),
            rng.standard_normal((2, 3, source, 6)))


def bool_mask(rng, length, source):
    """Random booleans (True: may attend) with one row masked entirely."""
    mask = rng.random((length, source)) < 0.6
    mask[1] = False
    return mask


MASKS = {
    "none": lambda rng, length, source: {},
    "causal": lambda rng, length, source: {"is_causal": True},
    "bool-with-empty-row": lambda rng, length, source: {"attn_mask": bool_mask(rng, length,
                                                                               source)},
    "float": lambda rng, length, source: {"attn_mask": rng.normal(0, 2, (length, source))},
    "per-head": lambda rng, length, source: {"attn_mask": rng.random((3, length, source)) < .7},
    "scale": lambda rng, length, source: {"scale": 0.3},
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lengths", [(5, 5), (4, 7)], ids=["self", "cross"])
@pytest.mark.parametrize("mask", MASKS)
def test_scaled_dot_product_attention(mask, lengths, seed):
    if mask == "causal" and lengths[0] != lengths[1]:
        lengths = (4, 4)
    rng = np.random.default_rng(seed)
    q, k, v = shapes_qkv(rng, *lengths)
    kwargs = MASKS[mask](rng, *lengths)
    module = mnn.ScaledDotProductAttention(kwargs.get("is_causal", False), kwargs.get("scale"))
    out = module.forward(q, k, v, kwargs.get("attn_mask"))
    torch_kwargs = dict(kwargs)
    if "attn_mask" in kwargs:
        torch_kwargs["attn_mask"] = as_torch_mask(kwargs["attn_mask"])
    grad_output = rng.standard_normal(out.shape)
    out_t, grads_t = torch_attention_grads(q, k, v, grad_output, **torch_kwargs)
    assert_close(out, out_t, "attention output")
    assert_close(mnn.scaled_dot_product_attention(q, k, v, **kwargs), out_t, "functional")
    for name, grad, grad_t in zip("qkv", module.backward(grad_output), grads_t):
        assert_close(grad, grad_t, f"dL/d{name}")


# ====================================================================== MultiheadAttention
def torch_causal_mask(length):
    """MultiheadAttention's causal mask: True above the diagonal (may not attend)."""
    return torch.ones(length, length, dtype=torch.bool).triu(1)


def check_attention(module, inputs, kwargs, torch_kwargs, rng):
    """Output, attention weights, input and parameter gradients against the twin."""
    twin_module = twin(module)
    out = module.forward(*inputs, **kwargs)
    tensors = [to_torch(x, requires_grad=True) for x in inputs]
    query, key, value = tensors if len(tensors) == 3 else tensors * 3
    out_t, weights_t = twin_module(query, key, value, need_weights=True,
                                   average_attn_weights=False, **torch_kwargs)
    assert_close(out, out_t, "output")
    assert_close(module.attn_weights, weights_t, "attention weights per head")
    grad_output = rng.standard_normal(out.shape)
    grads = module.backward(grad_output)
    out_t.backward(to_torch(grad_output))
    grads = grads if isinstance(grads, tuple) else (grads,)
    for index, (grad, tensor) in enumerate(zip(grads, tensors)):
        assert_close(grad, tensor.grad, f"input gradient {index}")
    assert_same_parameters(module, twin_module, attr="grad")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("heads", [1, 2, 4])
def test_self_attention(heads, bias, seed):
    rng = np.random.default_rng(seed)
    module = randomised(mnn.MultiheadAttention(8, heads, bias=bias, rng=rng), rng)
    check_attention(module, [rng.standard_normal((3, 5, 8))], {}, {}, rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_causal_self_attention(seed):
    """Ours needs only ``is_causal``; PyTorch takes it as a hint beside the mask itself."""
    rng = np.random.default_rng(seed)
    module = randomised(mnn.MultiheadAttention(8, 2, rng=rng), rng)
    check_attention(module, [rng.standard_normal((3, 6, 8))], {"is_causal": True},
                    {"attn_mask": torch_causal_mask(6), "is_causal": True}, rng)


@pytest.mark.parametrize("kind", ["bool", "float", "per-head"])
def test_masked_self_attention(kind):
    rng = np.random.default_rng(3)
    module = randomised(mnn.MultiheadAttention(8, 2, rng=rng), rng)
    mask = {"bool": lambda: rng.random((5, 5)) < 0.3,
            "float": lambda: rng.normal(0, 2, (5, 5)),
            "per-head": lambda: rng.random((6, 5, 5)) < 0.3}[kind]()
    check_attention(module, [rng.standard_normal((3, 5, 8))], {"attn_mask": mask},
                    {"attn_mask": as_torch_mask(mask)}, rng)


def test_cross_attention():
    """Queries of one sequence over keys and values of another, of a different length."""
    rng = np.random.default_rng(4)
    module = randomised(mnn.MultiheadAttention(8, 2, rng=rng), rng)
    inputs = [rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 7, 8)),
              rng.standard_normal((2, 7, 8))]
    check_attention(module, inputs, {}, {}, rng)


def test_attention_initialisation_follows_pytorchs_bounds():
    """Xavier-uniform in-projection over (3E, E), zero biases, out_proj as a Linear's."""
    module = mnn.MultiheadAttention(64, 4, rng=np.random.default_rng(0))
    bound = np.sqrt(6 / (64 + 192))
    weight = module.in_proj_weight.data
    assert weight.shape == (64, 192) and np.abs(weight).max() <= bound
    assert np.abs(weight).max() > 0.95 * bound
    assert not module.in_proj_bias.data.any() and not module.out_proj.bias.data.any()
    assert np.abs(module.out_proj.weight.data).max() <= 1 / 8


# ====================================================================== the block
BLOCKS = [
    pytest.param(dict(norm_first=True, activation="gelu"), True, id="pre-norm-gelu-causal"),
    pytest.param(dict(norm_first=True, activation="gelu"), False, id="pre-norm-gelu"),
    pytest.param(dict(norm_first=False, activation="relu"), True, id="post-norm-relu-causal"),
    pytest.param(dict(norm_first=True, activation="gelu", bias=False), True, id="no-bias"),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("options, causal", BLOCKS)
def test_encoder_layer(options, causal, seed):
    """Equal to ``torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
    dropout=0.0, batch_first=True, ...)``, with the causal mask given to both."""
    rng = np.random.default_rng(seed)
    module = mnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=rng, **options)
    randomised(module, rng)
    twin_module = twin(module)
    x = rng.standard_normal((3, 6, 8))
    y = module(x) if not causal else module.forward(x, is_causal=True)
    x_t = to_torch(x, requires_grad=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    y_t = twin_module(x_t, src_mask=mask, is_causal=True) if causal else twin_module(x_t)
    assert_close(y, y_t, "block output")
    grad_output = rng.standard_normal(y.shape)
    grad_input = module.backward(grad_output)
    y_t.backward(to_torch(grad_output))
    assert_close(grad_input, x_t.grad, "input gradient")
    assert_same_parameters(module, twin_module, attr="grad")


# ====================================================================== sequences through old layers
SEQUENCE_LAYERS = [
    pytest.param(lambda rng: mnn.Linear(5, 3, rng=rng), id="Linear"),
    pytest.param(lambda rng: mnn.GELU(), id="GELU"),
    pytest.param(lambda rng: mnn.Softmax(dim=-1), id="Softmax"),
    pytest.param(lambda rng: mnn.Dropout(0.3).eval(), id="Dropout-eval"),
]


@pytest.mark.parametrize("make", SEQUENCE_LAYERS)
def test_layers_take_a_batch_of_sequences(make):
    """``(B, T, C)`` in, every token treated as one more row of the batch, as in PyTorch."""
    rng = np.random.default_rng(5)
    module = make(rng)
    check_forward_backward(module, twin(module), rng.standard_normal((2, 4, 5)), rng)
