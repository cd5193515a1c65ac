r"""Gradient clipping: bound the step a single bad batch can take.

``clip_grad_norm_`` treats every gradient of the model as one long vector :math:`g` and, when
its norm exceeds ``max_norm``, scales all of them by the same factor, so the direction of the
step is kept and only its length is cut: :math:`g \leftarrow g \cdot \min(1,
\tfrac{\text{max\_norm}}{\lVert g \rVert + 10^{-6}})`.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minitorch_ref.nn.parameter import Parameter


def _listed(parameters: Parameter | Iterable[Parameter]) -> list[Parameter]:
    return [parameters] if isinstance(parameters, Parameter) else list(parameters)


def clip_grad_norm_(parameters: Parameter | Iterable[Parameter], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> float:
    """Scale every gradient in place so that their total norm is at most ``max_norm``.

    As PyTorch's: the total norm is the ``norm_type``-norm of the per-parameter norms (for
    ``inf``, the largest absolute entry), the factor ``max_norm / (total + 1e-6)`` is capped
    at 1 and applied to every gradient, even when it is 1; a parameter whose ``grad`` is None
    (one no loss reached) is skipped.

    Args:
        parameters: a parameter or an iterable of them (e.g. ``model.parameters()``).
        max_norm: the largest total norm allowed.
        norm_type: the p of the p-norm (``float('inf')`` for the largest entry).
        error_if_nonfinite: raise instead of clipping when the total norm is NaN or infinite.

    Returns:
        The total norm of the gradients *before* clipping, a float.
    """
    params = [p for p in _listed(parameters) if p.grad is not None]
    if not params:
        return 0.0
    norm_type = float(norm_type)
    if norm_type == np.inf:
        total = max(float(np.max(np.abs(p.grad))) if p.grad.size else 0.0 for p in params)
    else:
        norms = [np.linalg.norm(p.grad.reshape(-1), norm_type) for p in params]
        total = float(np.linalg.norm(np.array(norms, dtype=np.float64), norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            f"non-finite ({total}), so it cannot be clipped. Set error_if_nonfinite=False "
            "to clip anyway (the gradients then become NaN).")
    factor = min(1.0, float(max_norm) / (total + 1e-6))
    for param in params:
        param.grad *= np.asarray(factor, dtype=param.grad.dtype)
    return total


def clip_grad_value_(parameters: Parameter | Iterable[Parameter], clip_value: float) -> None:
    """Clip every gradient entry into ``[-clip_value, clip_value]``, in place."""
    for param in _listed(parameters):
        np.clip(param.grad, -clip_value, clip_value, out=param.grad)
