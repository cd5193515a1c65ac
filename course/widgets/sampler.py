"""A sampler for a trained character-level language model (unit 16's namer).

A text box for the start of a name, sliders for the temperature and top-k: the widget shows
the next-character distribution the student's own ``next_token_distribution`` gives after
that prefix (a bar per character) and a few names drawn by the student's own ``generate``.
Both functions and the model are passed in; nothing here computes a distribution itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from course.plots import style
from course.widgets.interaction import Interactive, interact


@dataclass(frozen=True)
class Draw:
    """What the sampler shows for one prefix: the next-character probabilities ``(V,)`` and
    names drawn from the prefix (each cut at its closing boundary)."""
    probabilities: np.ndarray
    names: list[str]


def _tokens(tokenizer: Any, prefix: str) -> np.ndarray:
    """``.prefix`` as tokens ``(1, T)``; ValueError naming a character the vocabulary lacks."""
    unknown = sorted(set(prefix) - set(tokenizer.itos[1:]))
    if unknown:
        raise ValueError(f"{''.join(unknown)!r} not in the vocabulary: use the characters "
                         f"{''.join(tokenizer.itos[1:])!r}")
    return tokenizer.encode(tokenizer.boundary + prefix)[None]


def draw(model: Any, tokenizer: Any, next_token_distribution: Callable, generate: Callable,
         prefix: str, temperature: float = 1.0, top_k: int | None = None, count: int = 8,
         max_new_tokens: int = 15, seed: int = 0) -> Draw:
    """The distribution after ``prefix`` and ``count`` names continuing it, by the functions given.

    Raises:
        ValueError: if ``prefix`` holds a character the tokenizer does not know, or the
            distribution is not one probability per token summing to 1.
    """
    idx = _tokens(tokenizer, prefix)
    probabilities = np.asarray(next_token_distribution(model, idx, temperature, top_k))
    if probabilities.shape != (1, tokenizer.vocab_size) or not np.isclose(probabilities.sum(), 1):
        raise ValueError(f"next_token_distribution gave {probabilities.shape} summing to "
                         f"{probabilities.sum():.3g}; the sampler needs (1, {tokenizer.vocab_size}) "
                         "summing to 1")
    rows = generate(model, np.repeat(idx, count, axis=0), max_new_tokens, temperature, top_k,
                    rng=np.random.default_rng(seed))
    names = [prefix + tokenizer.decode(row[idx.shape[1]:]).split(tokenizer.boundary)[0]
             for row in np.asarray(rows)]
    return Draw(probabilities[0], names)


def plot_distribution(probabilities: np.ndarray, characters: list[str], title: str = "") -> plt.Axes:
    """One bar per character, the boundary shown as ``end``; the likeliest in vermillion."""
    ax = style.subplots(figsize=(9, 2.6))[1][0, 0]
    labels = ["end", *characters[1:]]
    colours = [style.TEST_COLOR if p == probabilities.max() else style.TRAIN_COLOR for p in probabilities]
    ax.bar(range(len(labels)), probabilities, color=colours)
    ax.set_xticks(range(len(labels)), labels)
    ax.set(ylim=(0, 1), ylabel="probability", title=title)
    return ax


def sampler(model: Any, tokenizer: Any, next_token_distribution: Callable, generate: Callable,
            count: int = 8, seed: int = 0) -> Interactive:
    """The widget: a prefix, a temperature and top-k (0: all tokens) drive ``draw``.

    Args:
        model: a trained model, put in ``eval()`` mode here.
        tokenizer: its ``CharTokenizer`` (``itos``, ``encode``, ``decode``, ``boundary``).
        next_token_distribution: ``(model, idx, temperature, top_k) -> (B, V)``, the student's.
        generate: ``(model, idx, max_new_tokens, temperature, top_k, rng) -> (B, T + new)``.
        count: names drawn per setting; seed: their generator's seed, the same for every setting.
    """
    model.eval()
    slider = dict(continuous_update=False, style={"description_width": "90px"})

    def show(prefix: str, temperature: float, top_k: int) -> None:
        k = top_k or None
        try:
            shown = draw(model, tokenizer, next_token_distribution, generate, prefix, temperature,
                         k, count=count, seed=seed)
        except ValueError as exc:
            print(exc)
            return
        print("names:", ", ".join(shown.names))   # printed text shows above the figure
        plot_distribution(shown.probabilities, tokenizer.itos,
                          f"after '.{prefix}': temperature {temperature:g}, top_k {k or 'all'}")
        plt.show()

    return interact(show,
                    prefix=widgets.Text(value="", description="prefix", placeholder="e.g. ma"),
                    temperature=widgets.FloatSlider(value=1.0, min=0.1, max=2.0, step=0.1,
                                                    description="temperature", **slider),
                    top_k=widgets.IntSlider(value=0, min=0, max=tokenizer.vocab_size, description="top_k",
                                            **slider)).widget
