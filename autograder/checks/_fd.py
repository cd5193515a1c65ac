"""Finite differences as a second opinion: is a wrong gradient the forward's fault or the
backward's? Used by every check that compares a gradient (layers, losses, the autograd engine)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from minitorch_ref.gradcheck import numerical_gradient, rel_error


def fd_verdict(loss: Callable[[], float], array: np.ndarray, got: np.ndarray, subject: str,
               if_agrees: str, if_disagrees: str, floor: float = 1e-300) -> str:
    """A line saying whether ``got`` agrees with central differences of ``loss()`` with
    respect to ``array`` (perturbed in place and restored), followed by ``if_agrees`` or
    ``if_disagrees``; "" when the student's forward cannot even be differentiated."""
    try:
        with np.errstate(all="ignore"):  # a broken forward may overflow
            numeric = numerical_gradient(loss, array)
        error = rel_error(numeric, got, floor)
    except Exception:  # noqa: BLE001 - a broken forward or a wrong shape: nothing to compare
        return ""
    if error < 1e-5:
        return (f"\n  {subject} agrees with finite differences of your own forward "
                f"(rel. error {error:.1e}){if_agrees}")
    return (f"\n  {subject} also disagrees with finite differences of your own forward "
            f"(rel. error {error:.1e}){if_disagrees}")
