"""Checks of unit 15's ``TransformerBlock``: the wiring of a pre-norm residual block,
``h = x + Dropout(SA(LN1(x)))`` and ``y = h + Dropout(FF(LN2(h)))``, forward and backward.

The block's layers are the student's own (their ``LayerNorm``, the notebook's
``MultiheadAttention`` on their attention and heads): each check computes what the block should
give by calling those very layers one by one in the student's kernel, and compares the block's
own ``forward`` and ``backward`` with that. A wrong layer is its own cell's to judge and costs
nothing here; what is judged is the order of the layers, the two residual additions and their
gradients, and the evaluation mode.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._modules import _fd_verdict
from autograder.sandbox import call, construct
from autograder.registry import check
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import CheckFailure, expect

WIDTH, HEADS, HIDDEN = 8, 2, 16
PARAMETERS = ("norm1.weight", "norm1.bias", "self_attn.in_proj_weight", "self_attn.in_proj_bias",
              "self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm2.weight", "norm2.bias",
              "feed_forward.linear1.weight", "feed_forward.linear1.bias",
              "feed_forward.linear2.weight", "feed_forward.linear2.bias")


def _attribute(block, path: str):
    """``block.<path>`` (dotted), failing with the path when a layer is missing."""
    found = block
    for name in path.split("."):
        found = call(f"TransformerBlock.{path}", getattr, found, name)
    return found


def _step(block, layer: str, method: str, *args, **kwargs) -> np.ndarray:
    """One layer's ``forward`` or ``backward``, called in the student's kernel."""
    function = getattr(_attribute(block, layer), method)
    return as_array(f"TransformerBlock.{layer}.{method}",
                    call(f"TransformerBlock.{layer}.{method}", function, *args, **kwargs))


def _layers_forward(block, x: np.ndarray, is_causal: bool = True) -> np.ndarray:
    """What the block should return, from its own layers (``is_causal=False``: what a block
    that forgets the mask returns)."""
    attended = _step(block, "self_attn", "forward", _step(block, "norm1", "forward", x),
                     is_causal=is_causal)
    h = x + _step(block, "dropout1", "forward", attended)
    branch = _step(block, "feed_forward", "forward", _step(block, "norm2", "forward", h))
    return h + _step(block, "dropout2", "forward", branch)


def _attention_branch_backward(block, grad_h: np.ndarray) -> np.ndarray:
    grad = _step(block, "self_attn", "backward", _step(block, "dropout1", "backward", grad_h))
    return _step(block, "norm1", "backward", grad)


def _layers_backward(block, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dL/dx from the block's own layers' backward passes (after ``_layers_forward``), and the
    dL/dh of the feed-forward branch alone (what a block that drops its residual gets)."""
    branch = _step(block, "feed_forward", "backward", _step(block, "dropout2", "backward",
                                                               grad_output))
    from_norm2 = _step(block, "norm2", "backward", branch)
    grad_h = grad_output + from_norm2
    return grad_h + _attention_branch_backward(block, grad_h), from_norm2


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 5, WIDTH)), rng.standard_normal((2, 5, WIDTH))


@check
def block_forward(TransformerBlock):
    """forward(x) of (B, T, C) gives h = x + dropout1(self_attn(norm1(x), causal)) and
    y = h + dropout2(feed_forward(norm2(h))), computed with the block's own layers; after eval(),
    with dropout 0.5, the same (no dropout) on every call."""
    for seed, dropout in ((0, 0.0), (1, 0.0), (2, 0.5)):
        block = construct(TransformerBlock, WIDTH, HEADS, HIDDEN, dropout=dropout)
        x, _ = _inputs(seed)
        if dropout:
            call("TransformerBlock.eval", block.eval)
        got = as_array("TransformerBlock.forward output", call("TransformerBlock.forward",
                                                                block.forward, x.copy()))
        where = "the block's own layers" + (f", after eval() with dropout={dropout}" * bool(dropout))
        if dropout:
            again = as_array("TransformerBlock.forward output", block.forward(x.copy()))
            expect(close(got, again), "TransformerBlock.forward gave two different outputs for "
                   "the same input after eval(): dropout was kept in eval mode. Call the block's "
                   "Dropout layers, which do nothing after eval().")
        expected = _layers_forward(block, x)
        expect_close("TransformerBlock.forward output", got, expected, where,
                     (when("post_norm", lambda g, e, b=block: close(g, _post_norm(b, x)),
                           "the block normalises after the residual additions (post-norm): this "
                           "block is pre-norm, h = x + SA(LN1(x)), y = h + FF(LN2(h))."),
                      when("not_causal", lambda g, e, b=block: close(g, _layers_forward(b, x, False)),
                           "the self-attention is not causal: call self_attn.forward(..., "
                           "is_causal=True), so that no token reads a later one.")))


def _post_norm(block, x: np.ndarray) -> np.ndarray:
    h = _step(block, "norm1", "forward",
              x + _step(block, "self_attn", "forward", x, is_causal=True))
    return _step(block, "norm2", "forward", h + _step(block, "feed_forward", "forward", h))


def _gradients(block) -> list[np.ndarray]:
    return [as_array(f"TransformerBlock.{path}.grad", _attribute(block, path).grad)
            for path in PARAMETERS]


def _zero(block) -> None:
    for path in PARAMETERS:
        call(f"TransformerBlock.{path}.zero_grad", _attribute(block, path).zero_grad)


@check
def block_backward(TransformerBlock):
    """backward(grad_output) returns dL/dx = dL/dh + norm1.backward(self_attn.backward(...)) with
    dL/dh = grad_output + norm2.backward(feed_forward.backward(...)): each residual adds the
    gradient of its output to its input's, against the block's own layers' backward passes;
    every parameter of the block gets the same gradient as there. The layers are run forward
    one by one first, as a right forward runs them, so that a wrong forward costs nothing here."""
    for seed in (3, 4):
        block = construct(TransformerBlock, WIDTH, HEADS, HIDDEN, dropout=0.0)
        x, grad_output = _inputs(seed)
        _layers_forward(block, x)   # the layers' state of a right forward: forward is judged above
        got = as_array("TransformerBlock.backward return value (dL/dx)",
                       call("TransformerBlock.backward", block.backward, grad_output.copy()))
        grads = _gradients(block)
        _zero(block)
        _layers_forward(block, x)
        expected, from_norm2 = _layers_backward(block, grad_output.copy())
        params = _gradients(block)
        no_ff_residual = from_norm2 + _attention_branch_backward(block, from_norm2)
        signatures = (
            when("no_residual", lambda g, e: close(g, e - grad_output - from_norm2),
                 "dL/dx misses the residual's gradient: for x + f(x), dL/dx = dL/d(out) + "
                 "f's backward of it; add the gradient that came in to what the branch returns."),
            when("no_ff_residual", lambda g, e: close(g, no_ff_residual),
                 "dL/dh misses the feed-forward residual's gradient: dL/dh = grad_output + "
                 "norm2.backward(...), and it is dL/dh that goes into the attention branch."))
        try:
            expect_close("TransformerBlock.backward: dL/dx", got, expected, "the block's own layers",
                         signatures)
        except CheckFailure as failure:
            raise CheckFailure(str(failure) + _fd_verdict("TransformerBlock", block, x, grad_output,
                                                          got)) from None
        for path, mine, theirs in zip(PARAMETERS, grads, params):
            expect_close(f"TransformerBlock.{path}.grad after one backward pass", mine, theirs,
                         "the block's own layers' backward passes")
