"""course.probe: looking inside a model leaves its mode and gradients as they were."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch_ref as mt
from course.probe import dead_share, evaluation_mode, layers_of, trace_layers
from minitorch_ref import nn


def _model():
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))


def test_evaluation_mode_restores_training_mode_even_after_an_error():
    model = _model()
    with pytest.raises(ZeroDivisionError), evaluation_mode(model):
        assert model.training is False
        1 / 0
    assert model.training is True and all(m.training for m in model.modules())
    model.eval()
    with evaluation_mode(model):
        pass
    assert model.training is False


def test_trace_layers_matches_the_models_own_gradients_and_keeps_grads():
    model, X, y = _model(), np.random.default_rng(0).normal(size=(16, 2)), np.arange(16) % 3
    for p in model.parameters():
        p.grad[...] = 7.0
    loss_value, traces = trace_layers(model, X, y, nn.CrossEntropyLoss())
    assert [t.name for t in traces] == ["0: Linear", "1: ReLU", "2: Dropout", "3: Linear"]
    assert traces[-1].output.shape == (16, 3) and traces[0].grad_output.shape == (16, 8)
    assert traces[1].grad_norm is None
    assert all(np.all(p.grad == 7.0) for p in model.parameters())
    assert model.training is True

    model.eval()
    model.zero_grad()
    criterion = nn.CrossEntropyLoss()
    assert criterion(model(X), y) == pytest.approx(loss_value)
    model.backward(criterion.backward())
    first = np.sqrt(sum(np.sum(p.grad**2) for p in model[0].parameters()))
    assert traces[0].grad_norm == pytest.approx(first)


def test_dead_share_counts_units_that_are_zero_for_every_sample():
    out = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0]])
    assert dead_share(out) == 0.5


def test_layers_of_rejects_a_model_without_layers():
    with pytest.raises(ValueError, match="is not Sequential-like"):
        layers_of(nn.Linear(2, 2))
