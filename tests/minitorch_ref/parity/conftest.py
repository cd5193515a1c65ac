"""Shared helpers of the PyTorch parity suite: torch twins of minitorch_ref modules
and comparisons in float64.

Layout convention: minitorch_ref's ``Linear.weight`` is ``(in_features, out_features)``,
the transpose of torch's ``(out, in)``, and ``Conv2d.weight`` is ``(in, out, kH, kW)``,
torch's with its first two axes swapped; ``Embedding.weight`` is torch's ``(num, dim)``. Every
copy and comparison below goes through ``torch_layout`` so tests never have to think about it.
"""
from importlib.util import find_spec

import numpy as np
import pytest

from minitorch_ref import nn as mnn


class _Torch:
    """``torch``, imported at the first use of one of its names. The suite's three workers
    each collect these tests and one runs them: torch's import (1.7 s of CPU) happens on that
    one only. Private names are not looked up: pytest probes every module-level object of a
    test module for fixture markers (``_mock_name``, ...), which would import torch."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        import torch
        return getattr(torch, name)


torch = _Torch() if find_spec("torch") else None
# Each test module's mark: without torch, its tests are skipped with the reason.
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch parity tests need the optional "
                                 "extra: pip install -e '.[parity]' (torch==2.13.0)")

RTOL, ATOL = 1e-6, 1e-8


@pytest.fixture(scope="session", autouse=True)
def single_threaded_torch():
    """The tensors here are tiny: torch's intra-op thread pool only adds overhead
    (its BatchNorm is ~100x slower with 2 threads on a busy 2-core machine)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


# ---------------------------------------------------------------------- conversions
def to_torch(array, requires_grad=False):
    """A float64 tensor holding a copy of ``array``."""
    return torch.tensor(np.asarray(array, dtype=np.float64), dtype=torch.float64,
                        requires_grad=requires_grad)


def to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def assert_close(actual, expected, what="", rtol=RTOL, atol=ATOL):
    """minitorch value ``actual`` against torch value ``expected`` (arrays, tensors or floats)."""
    assert expected is not None, f"{what}: torch has no value (did its backward run?)"
    actual, expected = to_numpy(actual), to_numpy(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != torch's {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


# ---------------------------------------------------------------------- torch twins
def _batchnorm_twin(m):
    return torch.nn.BatchNorm1d(
        m.num_features, eps=m.eps, momentum=m.momentum, affine=m.affine,
        track_running_stats=m.track_running_stats, dtype=torch.float64,
    )


def _layernorm_twin(m):
    return torch.nn.LayerNorm(m.normalized_shape, eps=m.eps,
                              elementwise_affine=m.elementwise_affine,
                              bias=m.bias is not None, dtype=torch.float64)


def _attention_twin(m):
    return torch.nn.MultiheadAttention(m.embed_dim, m.num_heads, bias=m.in_proj_bias is not None,
                                       batch_first=True, dtype=torch.float64)


def _encoder_layer_twin(m):
    return torch.nn.TransformerEncoderLayer(
        m.linear1.in_features, m.self_attn.num_heads, m.linear1.out_features, dropout=0.0,
        activation=m.activation_name, layer_norm_eps=m.norm1.eps, batch_first=True,
        norm_first=m.norm_first, bias=m.linear1.bias is not None, dtype=torch.float64)


# Exact types: LogSoftmax subclasses Softmax, so no isinstance dispatch.
_TWIN_BUILDERS = {
    mnn.Linear: lambda m: torch.nn.Linear(
        m.in_features, m.out_features, bias=m.bias is not None, dtype=torch.float64),
    mnn.Identity: lambda m: torch.nn.Identity(),
    mnn.Embedding: lambda m: torch.nn.Embedding(
        m.num_embeddings, m.embedding_dim, padding_idx=m.padding_idx, dtype=torch.float64),
    mnn.ReLU: lambda m: torch.nn.ReLU(),
    mnn.LeakyReLU: lambda m: torch.nn.LeakyReLU(m.negative_slope),
    mnn.Sigmoid: lambda m: torch.nn.Sigmoid(),
    mnn.Tanh: lambda m: torch.nn.Tanh(),
    mnn.GELU: lambda m: torch.nn.GELU(approximate=m.approximate),
    mnn.Softmax: lambda m: torch.nn.Softmax(dim=m.dim),
    mnn.LogSoftmax: lambda m: torch.nn.LogSoftmax(dim=m.dim),
    mnn.Flatten: lambda m: torch.nn.Flatten(m.start_dim, m.end_dim),
    mnn.Dropout: lambda m: torch.nn.Dropout(m.p),
    mnn.BatchNorm1d: _batchnorm_twin,
    mnn.Conv2d: lambda m: torch.nn.Conv2d(
        m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding,
        bias=m.bias is not None, dtype=torch.float64),
    mnn.MaxPool2d: lambda m: torch.nn.MaxPool2d(m.kernel_size, m.stride),
    mnn.AvgPool2d: lambda m: torch.nn.AvgPool2d(m.kernel_size, m.stride),
    mnn.LayerNorm: _layernorm_twin,
    mnn.MultiheadAttention: _attention_twin,
    mnn.TransformerEncoderLayer: _encoder_layer_twin,
    mnn.Sequential: lambda m: torch.nn.Sequential(*(_build(child) for child in m)),
}


def _build(module):
    return _TWIN_BUILDERS[type(module)](module)


def _is_transposed(module, name):
    """Whether parameter ``name`` (dotted) of ``module`` is stored with its first two axes
    swapped w.r.t. torch (a Linear's or a Conv2d's weight, MultiheadAttention's
    ``in_proj_weight``)."""
    prefix, _, leaf = name.rpartition(".")
    owner = dict(module.named_modules())[prefix]
    if isinstance(owner, mnn.MultiheadAttention):
        return leaf == "in_proj_weight"
    return isinstance(owner, (mnn.Linear, mnn.Conv2d)) and leaf == "weight"


def torch_layout(module, name, array):
    """A minitorch array of parameter ``name`` in torch's layout (and vice versa)."""
    array = to_numpy(array)
    return array.swapaxes(0, 1) if _is_transposed(module, name) else array


def twin(module):
    """A float64 torch module with the same structure, parameters, buffers and mode."""
    twin_module = _build(module)
    with torch.no_grad():
        for name, param in module.named_parameters():
            twin_module.get_parameter(name).copy_(to_torch(torch_layout(module, name, param.data)))
        for name, buf in module.named_buffers():
            target = twin_module.get_buffer(name)
            target.copy_(torch.as_tensor(np.asarray(buf), dtype=target.dtype))
    return twin_module.train(module.training)


# ---------------------------------------------------------------------- state comparisons
def assert_same_parameters(module, twin_module, attr="data"):
    """Every parameter's ``data`` (or ``grad``) equals the twin's, layout-corrected."""
    named = dict(module.named_parameters())
    assert set(named) == {n for n, _ in twin_module.named_parameters()}, "parameter names differ"
    for name, param in named.items():
        twin_param = twin_module.get_parameter(name)
        expected = twin_param if attr == "data" else twin_param.grad
        if expected is None:  # torch leaves .grad None until a backward reaches it
            expected = torch.zeros_like(twin_param)
        assert_close(getattr(param, attr), torch_layout(module, name, expected), f"{name}.{attr}")


def assert_same_buffers(module, twin_module):
    """Running statistics and counters equal the twin's (names and values)."""
    named = dict(module.named_buffers())
    twin_named = dict(twin_module.named_buffers())
    assert set(named) == set(twin_named), f"buffers {sorted(named)} != torch's {sorted(twin_named)}"
    for name, buf in named.items():
        assert_close(np.asarray(buf), twin_named[name], f"buffer {name}")


# ---------------------------------------------------------------------- shared models
def make_mlp(seed, in_shape=(2, 3), hidden=8, out=3):
    """Flatten -> Linear -> BatchNorm1d -> ReLU -> Linear -> Tanh -> Linear (no bias).

    BatchNorm's affine parameters are randomised so they are not a trivial 1/0.
    """
    rng = np.random.default_rng(seed)
    n_in = int(np.prod(in_shape))
    model = mnn.Sequential(
        mnn.Flatten(),
        mnn.Linear(n_in, hidden, rng=rng),
        mnn.BatchNorm1d(hidden),
        mnn.ReLU(),
        mnn.Linear(hidden, hidden, rng=rng),
        mnn.Tanh(),
        mnn.Linear(hidden, out, bias=False, rng=rng),
    )
    model[2].weight.data[...] = rng.uniform(0.5, 1.5, hidden)
    model[2].bias.data[...] = rng.normal(0, 0.3, hidden)
    return model
