"""Layout mistakes of a Conv2d, and the student's own layout kept through the backward cells.

A layer whose output is laid out another way (channels last, ``np.squeeze`` of a batch of one,
the product reshaped without moving the channels) or a weight in PyTorch's ``(O, C, k, k)``
layout has the right numbers in other places: the forward cell costs it. The backward cells
then give the student's backward its upstream gradient in the layout its own forward returned,
and the stride and padding cells compare each output in the layout the student's own stride-1
(unpadded) layer shows: what the graded calls returned decides the layout, no other call.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from course.testing._trusted import asarray
from course.testing.diagnose import Signature, close, when

Layout = Callable[[np.ndarray], np.ndarray]
LAYOUTS: dict[str, Layout] = {
    "channels_last": lambda a: a.transpose(0, 2, 3, 1),
    "squeezed": lambda a: a.reshape(tuple(n for n in a.shape if n != 1)),
    "channels_not_moved": lambda a: a.transpose(0, 2, 3, 1).reshape(a.shape),
}
CHANNELS_LAST = ("the channels are last: the output is (N, OH, OW, O). PyTorch's and the course's "
                 "layout is (N, O, OH, OW): reshape the (N*OH*OW, O) product to (N, OH, OW, O), "
                 "then move the channels, .transpose(0, 3, 1, 2) (and backward takes its "
                 "gradient in that layout too).")
SQUEEZED = ("np.squeeze removed the axes of length 1 (a batch of one, a single filter or "
            "position): the output keeps all four axes, (N, O, OH, OW), whatever their sizes. "
            "Reshape to the shape you mean instead of squeezing.")


def laid_out(got: np.ndarray, expected: np.ndarray) -> Layout | None:
    """The layout mistake (not the identity) that turns ``expected`` into ``got``, if any."""
    got, expected = asarray(got, dtype=float), asarray(expected, dtype=float)
    for layout in LAYOUTS.values():
        moved = layout(expected)
        if moved.shape == got.shape and close(got, moved) \
                and not (moved.shape == expected.shape and close(moved, expected)):
            return layout
    return None


def layout_signatures() -> tuple[Signature, ...]:
    """The forward's channels last or squeezed (``channels_not_moved`` has its own words)."""
    def is_(name: str):
        return lambda g, e: laid_out(g, e) is LAYOUTS[name]
    return (when("channels_last", is_("channels_last"), CHANNELS_LAST),
            when("squeezed", is_("squeezed"), SQUEEZED))


# ---------------------------------------------------------------------------- the weight
def torch_weight(shape: tuple[int, ...], expected: tuple[int, ...]) -> bool:
    """A weight of shape ``(O, C, k, k)`` where the course's is ``(C, O, k, k)``."""
    return tuple(shape) != tuple(expected) and tuple(shape) == (expected[1], expected[0],
                                                                *expected[2:])


def torch_weight_message(expected: tuple[int, ...]) -> str:
    c, o = expected[:2]
    return (f"Conv2d.weight has shape {(o, c, *expected[2:])}: that is PyTorch's layout "
            f"(out_channels, in_channels, K, K). The course keeps (in_channels, out_channels, "
            f"K, K) = {tuple(expected)}, as Linear keeps (in, out); the filter matrix is then "
            "weight.transpose(0, 2, 3, 1).reshape(-1, out_channels). (Your layer computes the "
            "right values in its own layout: fix the shape and the filter matrix.)")
