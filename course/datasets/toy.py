"""Toy datasets for the course, generated deterministically from a seed."""
from __future__ import annotations

import numpy as np


def spiral(n_per_class: int = 100, n_classes: int = 3, noise: float = 0.2,
           seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Interleaved spiral arms in 2-D, one per class (CS231n's classic).

    Arm ``k`` sweeps the radius from 0 to 1 while its angle turns by 4 radians,
    starting at ``2*pi*k/n_classes``; ``noise`` jitters the angle.

    Returns:
        ``X`` of shape ``(n_per_class * n_classes, 2)`` (float64) and integer labels
        ``y`` of shape ``(n_per_class * n_classes,)``.
    """
    if n_per_class < 1 or n_classes < 1:
        raise ValueError(f"need n_per_class >= 1 and n_classes >= 1, got {n_per_class}, {n_classes}")
    rng = np.random.default_rng(seed)
    radius = np.tile(np.linspace(0.0, 1.0, n_per_class), n_classes)
    y = np.repeat(np.arange(n_classes), n_per_class)
    angle = (
        2 * np.pi * y / n_classes
        + 4 * radius
        + noise * rng.standard_normal(n_per_class * n_classes)
    )
    X = np.column_stack([radius * np.sin(angle), radius * np.cos(angle)])
    return X, y
