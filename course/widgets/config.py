"""The settings of one Playground run, and the parsing of the hidden-layer text box."""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Config:
    """Everything a Playground run depends on; the same Config trains the same way.

    ``hidden`` lists the widths of the hidden layers (``()`` is a linear model);
    ``test_ratio`` is the share of the points held out for testing.
    """

    dataset: str = "circles"
    noise: float = 0.1
    n_points: int = 300
    test_ratio: float = 0.3
    hidden: tuple[int, ...] = (8, 8)
    activation: str = "ReLU"
    optimizer: str = "Adam"
    lr: float = 0.03
    batch_size: int = 16
    weight_decay: float = 0.0
    dropout: float = 0.0
    seed: int = 0

    def replace(self, **changes: object) -> Config:
        return dataclasses.replace(self, **changes)


def parse_hidden(text: str) -> tuple[int, ...]:
    """``"8, 8"`` -> ``(8, 8)``; an empty text is no hidden layer.

    Raises:
        ValueError: unless every entry is an integer from 1 to 256.
    """
    parts = [part for part in text.replace(",", " ").split() if part]
    if not all(part.isdigit() and 1 <= int(part) <= 256 for part in parts):
        raise ValueError(
            f"hidden layers: write widths from 1 to 256 separated by commas, like '8, 8'; got {text!r}"
        )
    return tuple(int(part) for part in parts)


def format_hidden(hidden: tuple[int, ...]) -> str:
    return ", ".join(str(width) for width in hidden)
