"""minitorch_ref.language: the MLP language model's shapes, its next-token distribution
(temperature, top-k) and sampling words with a seeded generator."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from minitorch_ref import nn
from minitorch_ref.data import CharTokenizer
from minitorch_ref.language import mlp_language_model, sample_words
from minitorch_ref.sampling import next_token_probabilities

LOGITS = np.array([2.0, 1.0, 0.0, -1.0])


def test_model_maps_contexts_to_logits_over_the_vocabulary():
    model = mlp_language_model(27, block_size=4, embedding_dim=5, hidden=16)
    assert model(np.zeros((6, 4), dtype=np.int64)).shape == (6, 27)
    assert isinstance(model[0], nn.Embedding) and model[2].in_features == 20


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_probs_are_the_softmax_of_logits_over_temperature(temperature):
    np.testing.assert_allclose(next_token_probabilities(LOGITS, temperature),
                               special.softmax(LOGITS / temperature), rtol=1e-12)


def test_low_temperature_tends_to_the_argmax_and_high_to_uniform():
    assert next_token_probabilities(LOGITS, 0.01)[0] > 0.999
    np.testing.assert_allclose(next_token_probabilities(LOGITS, 1e4), 0.25, atol=1e-3)


def test_top_k_keeps_the_k_largest_renormalised():
    probs = next_token_probabilities(LOGITS, 1.0, top_k=2)
    np.testing.assert_allclose(probs, [*special.softmax(LOGITS[:2]), 0, 0], rtol=1e-12)
    np.testing.assert_allclose(next_token_probabilities(LOGITS, top_k=10), special.softmax(LOGITS))


def test_probs_of_a_batch_of_rows():
    rows = np.stack([LOGITS, -LOGITS])
    probs = next_token_probabilities(rows, 0.7, top_k=3)
    assert probs.shape == (2, 4)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert probs[0, 3] == 0 and probs[1, 0] == 0


@pytest.mark.parametrize("kwargs, fragment", [
    ({"temperature": 0.0}, "temperature"), ({"temperature": -1.0}, "temperature"),
    ({"top_k": 0}, "top_k"),
])
def test_bad_sampling_arguments_are_refused(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        next_token_probabilities(LOGITS, **kwargs)


def tokenizer():
    return CharTokenizer(["abc"])


def test_samples_are_reproducible_with_a_seeded_generator_and_use_the_vocabulary():
    model = mlp_language_model(4, block_size=3, rng=np.random.default_rng(0))
    first = sample_words(model, tokenizer(), 3, 20, rng=np.random.default_rng(5))
    assert first == sample_words(model, tokenizer(), 3, 20, rng=np.random.default_rng(5))
    assert len(first) == 20 and all(set(word) <= set("abc") for word in first)
    assert model.training, "sampling restores the training mode"


def test_a_model_that_always_ends_gives_empty_words_and_one_that_never_ends_stops():
    model = mlp_language_model(4, block_size=2, rng=np.random.default_rng(0))
    model[-1].weight.data[...] = 0.0
    model[-1].bias.data[...] = [50.0, 0.0, 0.0, 0.0]      # the boundary token, always
    assert sample_words(model, tokenizer(), 2, 3, rng=np.random.default_rng(0)) == ["", "", ""]
    model[-1].bias.data[...] = [-50.0, 50.0, 0.0, 0.0]    # 'a', never the boundary
    assert sample_words(model, tokenizer(), 2, 2, np.random.default_rng(0), max_length=7) \
        == ["aaaaaaa", "aaaaaaa"]


def test_sampled_frequencies_follow_the_distribution():
    """One step from a model whose logits ignore the context: first letters drawn with the
    probabilities next_token_probabilities gives for the head's bias."""
    model = mlp_language_model(4, block_size=1, rng=np.random.default_rng(0))
    model[-1].weight.data[...] = 0.0
    model[-1].bias.data[...] = [-50.0, 1.0, 0.0, -1.0]
    words = sample_words(model, tokenizer(), 1, 20_000, np.random.default_rng(1), max_length=1)
    counts = np.array([sum(w == c for w in words) for c in "abc"]) / len(words)
    np.testing.assert_allclose(counts, next_token_probabilities(model[-1].bias.data)[1:], atol=0.015)
