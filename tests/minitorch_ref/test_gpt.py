"""Unit 16's GPT without PyTorch: every gradient against finite differences, the tied head's
gradient as the sum of its two uses, GPT-2's initialisation, causality, generation and the
sampler's distribution, parameter groups, and the errors a student meets."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn, optim
from minitorch_ref.gradcheck import FD_NORM_FLOOR, numerical_gradient, rel_error
from minitorch_ref.models import GPT, GPTConfig
from minitorch_ref.sampling import next_token_probabilities, sample
from minitorch_ref.serialization import load, save

from test_errors import case, check_raises

TINY = GPTConfig(vocab_size=5, block_size=4, n_layer=2, n_head=2, n_embd=8)


def tiny(config=TINY, seed=0):
    model = GPT(config, rng=np.random.default_rng(seed))
    for param in model.parameters():   # larger than GPT-2's 0.02, so every path matters
        param.data[...] = np.random.default_rng(seed + 1).normal(0, 0.5, param.shape)
    return model


def loss_and_gradients(model, idx, targets):
    criterion = nn.CrossEntropyLoss()
    model.zero_grad()
    loss = criterion(model(idx), targets)
    model.backward(criterion.backward())
    return loss, {name: p.grad.copy() for name, p in model.named_parameters()}


@pytest.mark.parametrize("config", [GPTConfig(5, 4, 1, 2, 8),
                                    GPTConfig(5, 4, 1, 2, 8, tie_weights=False)],
                         ids=["tied", "untied"])
def test_every_gradient_matches_finite_differences(config):
    model = tiny(config)
    rng = np.random.default_rng(2)
    idx, targets = rng.integers(0, 5, (2, 4)), rng.integers(0, 5, (2, 4))
    criterion = nn.CrossEntropyLoss()
    _, analytic = loss_and_gradients(model, idx, targets)
    for name, param in model.named_parameters():
        numeric = numerical_gradient(lambda: criterion(model(idx), targets), param.data)
        assert rel_error(numeric, analytic[name], FD_NORM_FLOOR) < 1e-6, name


def test_the_tied_tables_gradient_is_the_sum_of_its_two_uses():
    tied = tiny()
    untied = GPT(GPTConfig(5, 4, 2, 2, 8, tie_weights=False))
    untied.load_state_dict({**tied.state_dict(), "lm_head.weight": tied.wte.weight.data.T})
    rng = np.random.default_rng(3)
    idx, targets = rng.integers(0, 5, (2, 4)), rng.integers(0, 5, (2, 4))
    _, grads = loss_and_gradients(tied, idx, targets)
    _, parts = loss_and_gradients(untied, idx, targets)
    np.testing.assert_allclose(grads["wte.weight"],
                               parts["wte.weight"] + parts["lm_head.weight"].T, rtol=1e-10)


def test_gpt2_initialisation():
    config = GPTConfig(vocab_size=64, block_size=32, n_layer=4, n_head=4, n_embd=128)
    model = GPT(config, rng=np.random.default_rng(0))
    params = dict(model.named_parameters())
    residual = 0.02 / np.sqrt(2 * config.n_layer)
    for name, param in params.items():
        if name.endswith(("out_proj.weight", "linear2.weight")):
            assert abs(param.data.std() - residual) < 0.1 * residual, name
        elif param.data.ndim == 2:
            assert abs(param.data.std() - 0.02) < 0.002, name
        elif name.endswith("bias"):
            assert not param.data.any(), name
        else:
            np.testing.assert_array_equal(param.data, 1.0, err_msg=name)   # LayerNorm gains
    assert "lm_head.weight" not in params   # tied: the head reads wte.weight
    assert model.num_parameters() == model.num_parameters(False) - 32 * 128


def test_a_later_token_never_changes_an_earlier_logit():
    model = tiny()
    idx = np.array([[1, 2, 3, 4]])
    changed = idx.copy()
    changed[0, 2] = 0
    np.testing.assert_allclose(model(idx)[0, :2], model(changed)[0, :2], rtol=1e-12)
    assert not np.allclose(model(idx)[0, 2:], model(changed)[0, 2:])


def test_generation_crops_the_context_and_repeats_with_a_seed():
    model = tiny()
    start = np.array([[1, 2, 3, 4, 0, 1]])      # longer than block_size = 4
    first = model.generate(start, 6, temperature=0.7, top_k=3, rng=np.random.default_rng(5))
    again = model.generate(start, 6, temperature=0.7, top_k=3, rng=np.random.default_rng(5))
    assert first.shape == (1, 12)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first[:, :6], start)


def test_draws_follow_the_distribution():
    """200,000 draws of one row: every frequency within 0.005 of its probability."""
    logits = np.tile([1.0, 0.0, 2.0, -1.0, 0.5], (200_000, 1))
    draws = sample(logits, temperature=1.5, top_k=4, rng=np.random.default_rng(0))
    frequencies = np.bincount(draws, minlength=5) / len(draws)
    np.testing.assert_allclose(frequencies, next_token_probabilities(logits[0], 1.5, 4),
                               atol=0.005)
    assert frequencies[3] == 0


@pytest.mark.parametrize("suffix", [".npz", ".json"])
def test_a_trained_model_saved_and_loaded_predicts_the_same(tmp_path, suffix):
    """A few AdamW steps, ``save(model.state_dict())``, then ``load`` into a fresh GPT of the
    same config: the same logits to the last bit, the tied table still one parameter."""
    model = tiny()
    optimizer = optim.AdamW(optim.weight_decay_groups(model, 0.1), lr=0.01)
    rng = np.random.default_rng(4)
    for _ in range(3):
        idx, targets = rng.integers(0, 5, (2, 4)), rng.integers(0, 5, (2, 4))
        optimizer.zero_grad()
        loss_and_gradients(model, idx, targets)
        optimizer.step()
    save(model.state_dict(), tmp_path / f"gpt{suffix}")
    loaded = GPT(TINY)
    loaded.load_state_dict(load(tmp_path / f"gpt{suffix}"))
    np.testing.assert_array_equal(loaded(idx), model(idx))
    assert "lm_head.weight" not in loaded.state_dict()


def test_weight_decay_reaches_matrices_only():
    model = tiny()
    decay, rest = optim.weight_decay_groups(model, 0.1)
    assert decay["weight_decay"] == 0.1 and rest["weight_decay"] == 0.0
    assert all(p.data.ndim == 2 for p in decay["params"])
    assert all(p.data.ndim == 1 for p in rest["params"])
    assert len(decay["params"]) + len(rest["params"]) == len(model.parameters())


ERROR_CASES = [
    case(lambda: tiny()(np.zeros((1, 5), dtype=np.int64)), ValueError, "5 tokens",
         "block_size=4", "crop", id="context-too-long"),
    case(lambda: tiny()(np.zeros((1, 3))), ValueError, "integer", id="float-tokens"),
    case(lambda: tiny()(np.zeros(3, dtype=np.int64)), ValueError, "(B, T)", "batch dimension",
         id="no-batch"),
    case(lambda: tiny()(np.full((1, 3), 5)), IndexError, "5", "size 5", id="token-out-of-range"),
    case(lambda: GPT(GPTConfig(5, 4, 1, 3, 8)), ValueError, "divisible", id="heads"),
]


@pytest.mark.parametrize("action, exc, fragments", ERROR_CASES)
def test_bad_input_is_refused_with_what_was_wrong(action, exc, fragments):
    check_raises(action, exc, fragments)
