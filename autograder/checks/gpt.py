"""Checks of unit 16's ``GPT``: the forward pass, and the backward pass of every parameter but
the tied token table (its two uses are ``autograder.checks.gpt_tying``'s).

The student's model and ``minitorch_ref``'s ``GPT`` get the same weights: the grader draws
them, writes them into the reference and copies them into the student's model, whose names
map to the reference's (``blocks.<i>`` is ``h.<i>``, the block's ``feed_forward.linear1`` is
the reference layer's ``linear1``). The backward pass is judged after the grader has put the
model's layers into the state a right forward leaves (each layer's own ``forward``, called one
by one in the student's kernel, and ``head_input``), so that a wrong forward costs nothing
there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import minitorch_ref
from autograder.checks.transformer_block import PARAMETERS as BLOCK_PARAMETERS
from autograder.sandbox import call, construct
from autograder.registry import check
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import fail
from minitorch_ref.models.gpt import GPT as ReferenceGPT, GPTConfig

VOCAB, BLOCK, LAYERS, HEADS, WIDTH = 7, 6, 2, 2, 8


def parameter_names(n_layer: int = LAYERS) -> tuple[str, ...]:
    """The notebook's ``GPT``'s parameters, in ``named_parameters()`` order."""
    blocks = tuple(f"blocks.{i}.{name}" for i in range(n_layer) for name in BLOCK_PARAMETERS)
    return ("wte.weight", "wpe.weight") + blocks + ("ln_f.weight", "ln_f.bias")


def reference_name(name: str) -> str:
    """The name of the notebook's parameter ``name`` in ``minitorch_ref``'s ``GPT``."""
    return name.replace("blocks.", "h.", 1).replace("feed_forward.", "")


def reference_twin(seed: int, vocab: int = VOCAB) -> ReferenceGPT:
    """The reference model, float64, its LayerNorms' and biases' values drawn too (a model
    at its initial values would hide mistakes in them)."""
    rng = np.random.default_rng(seed)
    model = ReferenceGPT(GPTConfig(vocab, BLOCK, LAYERS, HEADS, WIDTH), rng=rng)
    for _, param in model.named_parameters():
        param.data[...] = param.data + 0.3 * rng.standard_normal(param.data.shape)
    return model


def student_twin(GPT, seed: int, vocab: int = VOCAB):
    """The student's model with the reference's weights, and the reference."""
    ref = reference_twin(seed, vocab)
    model = construct(GPT, vocab, BLOCK, n_layer=LAYERS, n_head=HEADS, n_embd=WIDTH)
    weights = dict(ref.named_parameters())
    for name in parameter_names():
        param = _path(model, name)
        expected = weights[reference_name(name)].data
        data = as_array(f"GPT.{name}.data", call(f"GPT.{name}.data", getattr, param, "data"))
        if data.shape != expected.shape:
            fail(f"GPT.{name} has shape {data.shape}, expected {expected.shape}.")
        param.data = expected.copy()
    return model, ref


def _path(model, path: str):
    """``model.<path>`` (dotted), failing with the path when a layer is missing."""
    found = model
    for part in path.split("."):
        found = call(f"GPT.{path}", getattr, found, part)
    return found


def tokens(seed: int, batch: int, length: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, size=(batch, length))


def reference_logits(ref: ReferenceGPT, idx: np.ndarray, positions: bool = True,
                     final_norm: bool = True, causal: bool = True) -> np.ndarray:
    """The reference's logits, or those of a model that skips the position table, ``ln_f`` or
    the causal mask."""
    x = ref.wte.weight.data[idx] + positions * ref.wpe.weight.data[:idx.shape[1]]
    for block in ref.h:
        x = block.forward(x, is_causal=causal)
    if final_norm:
        x = ref.ln_f.forward(x)
    return x @ ref.wte.weight.data.T


@check
def gpt_forward(GPT):
    """forward(idx) of (B, T) tokens, T up to block_size, gives the logits (B, T, V) of
    minitorch_ref's GPT on the same weights: W_te[idx] + W_pe[0..T-1], the blocks, ln_f and
    the head tied to W_te."""
    for seed, (batch, length) in ((0, (3, BLOCK)), (1, (2, 4)), (2, (1, 1))):
        model, ref = student_twin(GPT, seed)
        idx = tokens(seed, batch, length)
        got = as_array("GPT.forward output", call("GPT.forward", model.forward, idx.copy()))
        expected = ref.forward(idx)
        signatures = (
            when("no_positions", lambda g, e: close(g, reference_logits(ref, idx, positions=False)),
                 "the position embeddings are missing: X0 = wte(idx) + wpe(np.arange(T)); "
                 "without them the blocks cannot tell the order of the tokens."),
            when("no_final_norm", lambda g, e: close(g, reference_logits(ref, idx, final_norm=False)),
                 "the final LayerNorm is missing: the head reads ln_f(blocks(X0))."),
            when("not_causal", lambda g, e: length > 1 and close(g, reference_logits(ref, idx, causal=False)),
                 "the attention is not causal: position t reads the tokens after it, so in training "
                 "it reads its own target. Call the blocks, whose attention is causal."),
        )
        expect_close("GPT.forward logits", got, expected,
                     f"tokens of shape {idx.shape}, the reference GPT's weights", signatures)


def _forward(model, layer: str, x: np.ndarray) -> np.ndarray:
    """One layer's ``forward``, called in the student's kernel."""
    what = f"GPT.{layer}.forward"
    return as_array(what, call(what, _path(model, layer).forward, x))


def right_state(model, idx: np.ndarray) -> None:
    """The layers' saved state after a right forward on ``idx``, from their own forwards."""
    x = _forward(model, "wte", idx) + _forward(model, "wpe", np.arange(idx.shape[1]))
    for i in range(LAYERS):
        x = _forward(model, f"blocks.{i}", x)
    model.head_input = _forward(model, "ln_f", x)


def _prior(model, name: str, seed: int) -> np.ndarray:
    """Give ``name`` a gradient already accumulated (seed 4: nonzero), as a second
    mini-batch would find it; backward must add to it."""
    param = _path(model, name)
    shape = as_array(f"GPT.{name}.grad", param.grad).shape
    prior = (seed == 4) * np.random.default_rng(seed).standard_normal(shape)
    param.grad = prior.copy()
    return prior


@dataclass(frozen=True)
class Backward:
    """One backward pass of the student's model after the grader's forward, beside the
    reference's: what each ``.grad`` held before, and the reference's gradients."""

    before: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]      # before + the reference's gradient
    head: np.ndarray                     # the head's part of wte's gradient, G^T X (V, C)
    where: str

    def got(self, model, name: str) -> np.ndarray:
        return as_array(f"GPT.{name}.grad", _path(model, name).grad)


def backward_pass(model, ref: ReferenceGPT, seed: int, batch: int, length: int) -> Backward:
    """The student's ``backward`` on a random ``grad_logits``, judged after the layers were run
    forward by the grader (so a wrong forward costs nothing here), with a gradient already in
    every ``.grad`` when ``seed`` is 4."""
    idx = tokens(seed, batch, length)
    grad_logits = np.random.default_rng(seed + 10).standard_normal((batch, length, ref.config.vocab_size))
    right_state(model, idx)
    before = {name: _prior(model, name, seed) for name in parameter_names()}
    call("GPT.backward", model.backward, grad_logits.copy())
    ref.forward(idx)
    ref.backward(grad_logits)
    weights = dict(ref.named_parameters())
    expected = {name: before[name] + weights[reference_name(name)].grad for name in parameter_names()}
    head = grad_logits.reshape(batch * length, -1).T @ ref.head_input.reshape(-1, WIDTH)
    return Backward(before, expected, head, f"tokens of shape {idx.shape}, the reference GPT's weights")


def accumulated(name: str, before: np.ndarray):
    """The signature of a ``.grad`` written with ``=``: the gradient it held is lost."""
    return when("assigned", lambda g, e: bool(np.any(before)) and close(g, e - before),
                f"GPT.{name}.grad lost the gradient it held before backward: add into .grad "
                "with +=, never =, so that gradients accumulate.")


@check
def gpt_backward(GPT):
    """backward(grad_logits) adds to every parameter's .grad but the tied table's (graded by
    gpt_weight_tying) what minitorch_ref's GPT gets on the same weights: W_pe the gradient
    summed over the batch, the blocks' and ln_f's their own. Judged after the layers were run
    forward by the grader, one by one, so a wrong forward costs nothing here."""
    for seed, batch, length in ((3, 3, BLOCK), (4, 2, 4)):
        model, ref = student_twin(GPT, seed)
        result = backward_pass(model, ref, seed, batch, length)
        for name in parameter_names()[1:]:           # wte.weight: gpt_weight_tying
            expect_close(f"GPT.{name}.grad after one backward pass", result.got(model, name),
                         result.expected[name], result.where,
                         (accumulated(name, result.before[name]),))
