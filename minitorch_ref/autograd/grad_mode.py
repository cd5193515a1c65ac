"""Whether operations record the graph: ``no_grad()`` switches it off, as in PyTorch.

Evaluation and hand-written parameter updates need no gradients; skipping the
graph saves the memory of every saved input.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

_enabled = True


def is_grad_enabled() -> bool:
    """True unless inside ``no_grad()``."""
    return _enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Operations inside compute values only: their results do not require grad.

    Usable as ``with no_grad(): ...`` or as a decorator.
    """
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous
