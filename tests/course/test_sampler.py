"""course.widgets.sampler: the namer's next-character distribution and names, by the functions given.

The student's ``next_token_distribution`` and ``generate`` are played by minitorch_ref's
sampling on its ``GPT``; a test kernel then drives the widget headless, as a notebook does.
"""
from __future__ import annotations

import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from course.widgets.sampler import draw, sampler
from headless import RecordingClient
from minitorch_ref import manual_seed
from minitorch_ref.data.text import CharTokenizer
from minitorch_ref.models.gpt import GPT, GPTConfig
from minitorch_ref.sampling import next_token_probabilities

TOKENIZER = CharTokenizer(["emma", "olivia", "ava", "mia"])


def next_token_distribution(model, idx, temperature=1.0, top_k=None):
    return next_token_probabilities(model(idx[:, -model.config.block_size:])[:, -1], temperature, top_k)


def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, rng=None):
    return model.generate(idx, max_new_tokens, temperature, top_k, rng)


@pytest.fixture
def model():
    manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=TOKENIZER.vocab_size, block_size=8, n_layer=1, n_head=2, n_embd=8))
    gpt.eval()
    return gpt


def test_the_distribution_is_the_one_given_after_the_boundary_and_the_prefix(model):
    shown = draw(model, TOKENIZER, next_token_distribution, generate, "em", temperature=0.7, top_k=3)
    expected = next_token_distribution(model, TOKENIZER.encode(".em")[None], 0.7, 3)[0]
    assert np.array_equal(shown.probabilities, expected)
    assert (shown.probabilities > 0).sum() == 3


def test_names_continue_the_prefix_stop_at_the_boundary_and_repeat_with_the_seed(model):
    shown = draw(model, TOKENIZER, next_token_distribution, generate, "a", count=6, seed=3)
    assert len(shown.names) == 6 and all(name.startswith("a") and "." not in name for name in shown.names)
    again = draw(model, TOKENIZER, next_token_distribution, generate, "a", count=6, seed=3)
    assert again.names == shown.names
    greedy = draw(model, TOKENIZER, next_token_distribution, generate, "a", top_k=1, count=3)
    assert len(set(greedy.names)) == 1      # top_k=1: every draw the likeliest character


def test_a_character_outside_the_vocabulary_is_named(model):
    with pytest.raises(ValueError, match=r"'z' not in the vocabulary: use the characters 'aeilmov'"):
        draw(model, TOKENIZER, next_token_distribution, generate, "ez")


def test_a_distribution_that_does_not_sum_to_one_is_refused(model):
    def unnormalised(model, idx, temperature, top_k):
        return np.exp(model(idx)[:, -1])
    with pytest.raises(ValueError, match=r"next_token_distribution gave \(1, 8\) summing to .*needs \(1, 8\)"):
        draw(model, TOKENIZER, unnormalised, generate, "e")


def test_the_widget_shows_the_chart_and_names_and_redraws_when_a_slider_moves(model):
    widget = sampler(model, TOKENIZER, next_token_distribution, generate, count=4)
    prefix, temperature, top_k = widget.children[:3]
    assert (prefix.value, temperature.value, top_k.value) == ("", 1.0, 0)
    top_k.value = 1
    assert widget.kwargs == {"prefix": "", "temperature": 1.0, "top_k": 1}
    prefix.value = "q"
    assert widget.kwargs["prefix"] == "q"


SAMPLER = """import numpy as np
from course.widgets.sampler import sampler
from minitorch_ref import manual_seed
from minitorch_ref.data.text import CharTokenizer
from minitorch_ref.models.gpt import GPT, GPTConfig
from minitorch_ref.sampling import next_token_probabilities

tokenizer = CharTokenizer(["emma", "olivia", "ava", "mia"])
manual_seed(0)
model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=8, n_layer=1, n_head=2, n_embd=8))
distribution = lambda m, idx, t, k: next_token_probabilities(m(idx[:, -8:])[:, -1], t, k)
generate = lambda m, idx, n, t, k, rng: m.generate(idx, n, t, k, rng)
widget = sampler(model, tokenizer, distribution, generate, count=3)"""


def _run(*sources: str):
    """The notebook of ``sources`` executed headless, and its Output widget's outputs."""
    nb = new_notebook(cells=[new_code_cell(source) for source in sources],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                               "language": "python"}})
    client = RecordingClient(nb)
    client.execute()
    assert not client.unexpected(), client.sent
    state = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    (outputs,) = [m["state"]["outputs"] for m in state.values() if m["model_name"] == "OutputModel"]
    return nb, outputs


@pytest.mark.notebooks
def test_headless_the_widget_keeps_a_chart_and_names():
    nb, outputs = _run(SAMPLER)
    assert [o["output_type"] for o in outputs] == ["stream", "display_data"]
    assert outputs[0]["text"].startswith("names: ") and outputs[0]["text"].count(",") == 2
    assert "image/png" in outputs[1]["data"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in nb.cells[0].outputs)


@pytest.mark.notebooks
def test_headless_a_prefix_outside_the_vocabulary_gets_a_message_not_a_traceback():
    _, outputs = _run(SAMPLER, 'widget.children[0].value = "mz"')
    assert [o["output_type"] for o in outputs] == ["stream"]
    assert outputs[0]["text"].startswith("'z' not in the vocabulary")
