"""The Playground's control widgets, one per ``Config`` field, and reading a Config back."""
from __future__ import annotations

from typing import Any, Sequence

import ipywidgets as widgets

from course.datasets import TOY_2D
from course.widgets.config import Config, format_hidden, parse_hidden
from course.widgets.framework import Framework

WEIGHT_DECAYS = (0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1)
_STYLE = {"description_width": "90px"}


def _common(description: str) -> dict[str, Any]:
    return {"description": description, "style": _STYLE, "layout": widgets.Layout(width="270px")}


def _dropdown(description: str, options: Sequence[str], value: str) -> widgets.Dropdown:
    return widgets.Dropdown(options=list(options), value=value if value in options else options[0],
                            **_common(description))


def make_controls(config: Config, framework: Framework) -> dict[str, widgets.ValueWidget]:
    """One widget per ``Config`` field except ``seed``, set to ``config``'s values.

    Choices the framework cannot build (an activation or optimizer it was not
    given, dropout without a Dropout class) are left out or disabled.
    """
    def slider(kind: type, description: str, value: object, **kwargs: Any) -> widgets.ValueWidget:
        # Sliders act on release: each change starts a fresh run.
        return kind(value=value, continuous_update=False, **kwargs, **_common(description))

    no_dropout = framework.Dropout is None and framework.model_factory is None
    return {
        "dataset": _dropdown("dataset", list(TOY_2D), config.dataset),
        "noise": slider(widgets.FloatSlider, "noise", config.noise, min=0, max=0.5, step=0.05),
        "n_points": slider(widgets.IntSlider, "points", config.n_points, min=50, max=1000, step=50),
        "test_ratio": slider(widgets.FloatSlider, "test ratio", config.test_ratio, min=0.1, max=0.9, step=0.05),
        "hidden": slider(widgets.Text, "hidden layers", format_hidden(config.hidden),
                         placeholder="widths, e.g. 8, 8"),
        "activation": _dropdown("activation", framework.activations or [config.activation], config.activation),
        "dropout": slider(widgets.FloatSlider, "dropout", config.dropout, min=0, max=0.8, step=0.1,
                          disabled=no_dropout),
        "optimizer": _dropdown("optimizer", framework.optimizers, config.optimizer),
        "lr": slider(widgets.FloatLogSlider, "learning rate", config.lr, base=10, min=-4, max=0, step=0.25,
                     readout_format=".0e"),
        "batch_size": slider(widgets.IntSlider, "batch size", config.batch_size, min=1, max=256),
        "weight_decay": slider(widgets.SelectionSlider, "weight decay", config.weight_decay,
                               options=sorted({*WEIGHT_DECAYS, config.weight_decay})),
    }


def read_config(controls: dict[str, widgets.ValueWidget], seed: int = 0) -> Config:
    """The Config the controls show. Raises ValueError for a malformed hidden-layer text."""
    values = {name: control.value for name, control in controls.items()}
    return Config(**{**values, "hidden": parse_hidden(values["hidden"]), "seed": seed})
