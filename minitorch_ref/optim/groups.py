"""Parameter groups: weight decay for the matrices only."""
from __future__ import annotations

from minitorch_ref.nn.module import Module


def weight_decay_groups(module: Module, weight_decay: float) -> list[dict]:
    """Two parameter groups for ``AdamW``: every matrix (Linear and attention weights,
    embedding tables: ``ndim >= 2``) decays by ``weight_decay``; biases and LayerNorm's
    weights (``ndim < 2``) do not, since shrinking a gain or an offset towards 0 is no
    regularisation. A tied table is one parameter, listed once.

    Returns:
        The two groups, the matrices (with ``weight_decay``) first, the others (with 0.0) next.
    """
    params = module.parameters()
    return [{"params": [p for p in params if p.data.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.data.ndim < 2], "weight_decay": 0.0}]
