"""Check of unit 15's ``split_heads`` and ``merge_heads``: the reshapes and transposes between a
sequence ``(B, T, H * D)`` and its heads ``(B, H, T, D)``, against ``minitorch_ref``'s, with the
classic orders that numpy accepts and that mix tokens with heads."""
from __future__ import annotations

import numpy as np

from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import expect_close
from course.testing.diagnose import close, when
from minitorch_ref import nn

SHAPES = ((2, 3, 4, 5), (1, 4, 1, 3), (3, 1, 6, 2))    # (B, H, T, D)


def _split_signatures(x: np.ndarray, heads: int):
    batch, length, width = x.shape
    depth = width // heads
    plain = x.reshape(batch, heads, length, depth)
    interleaved = x.reshape(batch, length, depth, heads).transpose(0, 3, 1, 2)
    return (when("no_transpose", lambda g, e: close(g, plain),
                 "split_heads reshaped (B, T, C) straight to (B, H, T, D): numpy accepts it, but "
                 "it mixes tokens with heads. Reshape to (B, T, H, D), then transpose(0, 2, 1, 3)."),
            when("interleaved", lambda g, e: close(g, interleaved),
                 "split_heads gave head h every H-th feature (h, h + H, ...): head h gets the "
                 "contiguous features h * D to (h + 1) * D - 1, reshape to (B, T, H, D)."))


def _merge_signatures(x: np.ndarray):
    batch, heads, length, depth = x.shape
    plain = x.reshape(batch, length, heads * depth)
    interleaved = x.transpose(0, 2, 3, 1).reshape(batch, length, heads * depth)
    return (when("no_transpose", lambda g, e: close(g, plain),
                 "merge_heads reshaped (B, H, T, D) straight to (B, T, C): the heads are merged in "
                 "the wrong order, tokens mixed with heads. Transpose to (B, T, H, D) first."),
            when("interleaved", lambda g, e: close(g, interleaved),
                 "merge_heads interleaved the heads' features in the wrong order (transpose(0, 2, 3, "
                 "1)): token t's features are head 0's D features, then head 1's, ..."))


@check
def heads_split_merge(split_heads, merge_heads):
    """split_heads(x, num_heads) maps (B, T, H*D) to (B, H, T, D), head h taking features h*D to
    (h+1)*D - 1; merge_heads maps (B, H, T, D) back to (B, T, H*D); merge_heads(split_heads(x))
    gives x back. One head, one token and one feature per head included."""
    rng = np.random.default_rng(15)
    for batch, heads, length, depth in SHAPES:
        x = rng.standard_normal((batch, length, heads * depth))
        expect_close(f"split_heads(x of shape {x.shape}, num_heads={heads})",
                     call("split_heads", split_heads, x.copy(), heads), nn.split_heads(x, heads),
                     "", _split_signatures(x, heads))
        y = rng.standard_normal((batch, heads, length, depth))
        expect_close(f"merge_heads(x of shape {y.shape})", call("merge_heads", merge_heads, y.copy()),
                     nn.merge_heads(y), "", _merge_signatures(y))
        back = call("merge_heads", merge_heads, call("split_heads", split_heads, x.copy(), heads))
        expect_close("merge_heads(split_heads(x))", back, x, "merging undoes the split")
