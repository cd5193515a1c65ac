"""Property tests over random shapes (batch size 1 included), seeds and value scales."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import special

from minitorch_ref import nn
from minitorch_ref.gradcheck import check_loss, check_module

from helpers import (
    GRAD_TOL, LOSS_CASES, assert_gradients_ok, build, case_ids, loss_inputs, randn,
)

batch_sizes = st.integers(1, 8)
feature_sizes = st.integers(1, 8)
seeds = st.integers(0, 2**32 - 1)
# Moderate scales: far beyond them the activations saturate and the gradients sink
# below what central differences can resolve.
scales = st.sampled_from([0.1, 1.0, 3.0])

FEW = settings(max_examples=15, deadline=None)
SOME = settings(max_examples=40, deadline=None)

ACTIVATIONS = [
    ("relu", nn.ReLU),
    ("leaky_relu", lambda: nn.LeakyReLU(0.1)),
    ("sigmoid", nn.Sigmoid),
    ("tanh", nn.Tanh),
    ("gelu_exact", nn.GELU),
    ("gelu_tanh", lambda: nn.GELU("tanh")),
    ("softmax_dim-1", nn.Softmax),
    ("softmax_dim0", lambda: nn.Softmax(dim=0)),
    ("log_softmax_dim-1", nn.LogSoftmax),
    ("log_softmax_dim0", lambda: nn.LogSoftmax(dim=0)),
]


# ----------------------------------------------------------------------------- gradients
@SOME
@given(n=batch_sizes, fan_in=feature_sizes, fan_out=feature_sizes, bias=st.booleans(),
       seed=seeds, scale=st.sampled_from([0.01, 1.0, 10.0]))
def test_linear_gradients(n, fan_in, fan_out, bias, seed, scale):
    model = build(lambda: nn.Linear(fan_in, fan_out, bias=bias), seed=seed)
    errors = check_module(model, randn(n, fan_in, seed=seed, scale=scale))
    assert_gradients_ok(errors, ("weight", "bias") if bias else ("weight",))


@pytest.mark.parametrize("name, factory", ACTIVATIONS, ids=case_ids(ACTIVATIONS))
@FEW
@given(n=batch_sizes, features=feature_sizes, seed=seeds, scale=scales)
def test_activation_gradients(name, factory, n, features, seed, scale):
    errors = check_module(factory(), randn(n, features, seed=seed, scale=scale))
    assert_gradients_ok(errors, ())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("name, factory, kind", LOSS_CASES, ids=case_ids(LOSS_CASES))
@FEW
@given(n=batch_sizes, c=feature_sizes, seed=seeds, scale=scales)
def test_loss_gradients(name, factory, kind, reduction, n, c, seed, scale):
    pred, target = loss_inputs(kind, n, c, seed=seed, scale=scale)
    assert check_loss(factory(reduction, c), pred, target)["pred"] < GRAD_TOL


# ----------------------------------------------------------------------------- shapes
# (id, factory(features), input shape from (n, features), expected output shape)
SHAPE_CASES = [
    ("linear", lambda f: nn.Linear(f, 3), lambda n, f: (n, f), lambda n, f: (n, 3)),
    ("relu", lambda f: nn.ReLU(), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("gelu", lambda f: nn.GELU(), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("softmax", lambda f: nn.Softmax(), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("log_softmax_dim0", lambda f: nn.LogSoftmax(0), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("dropout", lambda f: nn.Dropout(0.5), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("identity", lambda f: nn.Identity(), lambda n, f: (n, f), lambda n, f: (n, f)),
    ("flatten", lambda f: nn.Flatten(), lambda n, f: (n, f, 2, 3), lambda n, f: (n, 6 * f)),
    ("batchnorm_eval", lambda f: nn.BatchNorm1d(f).eval(), lambda n, f: (n, f),
     lambda n, f: (n, f)),
    ("mlp", lambda f: nn.Sequential(nn.Flatten(), nn.Linear(2 * f, 5), nn.Tanh(),
                                    nn.Linear(5, 2)),
     lambda n, f: (n, f, 2), lambda n, f: (n, 2)),
]


@pytest.mark.parametrize("name, factory, in_shape, out_shape", SHAPE_CASES,
                         ids=case_ids(SHAPE_CASES))
@FEW
@given(n=batch_sizes, features=feature_sizes, seed=seeds)
def test_output_and_input_gradient_shapes(name, factory, in_shape, out_shape, n, features, seed):
    model = build(lambda: factory(features), seed=seed)
    x = randn(*in_shape(n, features), seed=seed)
    y = model(x)
    assert y.shape == out_shape(n, features)
    assert model.backward(np.ones_like(y)).shape == x.shape


# ----------------------------------------------------------------------------- values
def _logits(max_magnitude):
    return st.tuples(batch_sizes, feature_sizes).flatmap(
        lambda shape: hnp.arrays(
            np.float64, shape, elements=st.floats(-max_magnitude, max_magnitude)
        )
    )


@SOME
@given(logits=_logits(1e3))
def test_softmax_rows_are_finite_probabilities(logits):
    probs = nn.Softmax()(logits)
    assert np.all(np.isfinite(probs))
    assert np.all((probs >= 0) & (probs <= 1))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@SOME
@given(logits=_logits(1e3))
def test_log_softmax_is_finite_and_exponentiates_to_softmax(logits):
    log_probs = nn.LogSoftmax()(logits)
    assert np.all(np.isfinite(log_probs))
    assert np.all(log_probs <= 0)
    np.testing.assert_allclose(np.exp(log_probs), nn.Softmax()(logits), rtol=1e-9, atol=1e-300)


@SOME
@given(n=batch_sizes, c=feature_sizes, seed=seeds,
       magnitude=st.sampled_from([1e2, 1e4, 1e8, 1e15, 1e30]),
       label_smoothing=st.sampled_from([0.0, 0.2]))
def test_cross_entropy_is_finite_for_huge_logits(n, c, seed, magnitude, label_smoothing):
    logits = magnitude * np.random.default_rng(seed).standard_normal((n, c))
    target = np.random.default_rng(seed + 1).integers(0, c, n)
    loss = nn.CrossEntropyLoss(label_smoothing=label_smoothing)

    value = loss(logits, target)
    grad = loss.backward()

    assert np.isfinite(value) and value >= 0
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-12)  # softmax - q sums to 0
    if label_smoothing == 0:
        expected = np.mean(special.logsumexp(logits, axis=1) - logits[np.arange(n), target])
        assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)


@SOME
@given(n=batch_sizes, fan_in=feature_sizes, fan_out=feature_sizes, bias=st.booleans(),
       seed=seeds)
def test_linear_computes_x_times_weight_plus_bias(n, fan_in, fan_out, bias, seed):
    layer = build(lambda: nn.Linear(fan_in, fan_out, bias=bias), seed=seed)
    x = randn(n, fan_in, seed=seed)
    expected = x @ layer.weight.data + (layer.bias.data if bias else 0.0)
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- accumulation
ACCUMULATION_CASES = [
    ("linear", lambda f: nn.Linear(f, 3), 1),
    ("batchnorm", lambda f: nn.BatchNorm1d(f), 2),
    ("mlp", lambda f: nn.Sequential(nn.Linear(f, 4), nn.BatchNorm1d(4), nn.Tanh(),
                                    nn.Linear(4, 2)), 2),
]


def _forward_backward_twice(factory, n, features, seed):
    """The model, its gradients after one backward, and after a second identical one."""
    model = build(lambda: factory(features), seed=seed)
    y = model(randn(n, features, seed=seed))
    grad_output = np.random.default_rng(seed + 1).standard_normal(y.shape)
    model.backward(grad_output)
    once = [g.copy() for g in model.grads()]
    model.backward(grad_output)
    return model, once, model.grads()


@pytest.mark.parametrize("name, factory, min_batch", ACCUMULATION_CASES,
                         ids=case_ids(ACCUMULATION_CASES))
@FEW
@given(n=batch_sizes, features=feature_sizes, seed=seeds)
def test_two_backward_calls_accumulate_twice_the_gradient(name, factory, min_batch, n,
                                                          features, seed):
    n = max(n, min_batch)  # BatchNorm needs 2 rows to train
    _, once, twice = _forward_backward_twice(factory, n, features, seed)
    for g1, g2 in zip(once, twice, strict=True):
        np.testing.assert_allclose(g2, 2 * g1, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, factory, min_batch", ACCUMULATION_CASES,
                         ids=case_ids(ACCUMULATION_CASES))
@FEW
@given(n=batch_sizes, features=feature_sizes, seed=seeds)
def test_zero_grad_zeros_every_gradient_in_place(name, factory, min_batch, n, features, seed):
    model, _, grads = _forward_backward_twice(factory, max(n, min_batch), features, seed)
    model.zero_grad()
    for g, p in zip(grads, model.parameters(), strict=True):
        assert p.grad is g
        assert not np.any(g)
