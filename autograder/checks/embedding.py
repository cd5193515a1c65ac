"""Checks of unit 14's ``Embedding``: the lookup of any integer shape, and its backward pass,
which adds every upstream row into the row it was read from (repeated indices accumulating,
the ``padding_idx`` row never), until ``zero_grad``.

Each builds the student's layer beside the reference's, copies the reference's table into
it, and compares; a wrong gradient is matched against the classic mistakes: ``grad[idx] +=
G`` (a repeated row counted once), a padding row that learns, ``=`` instead of ``+=``.
"""
from __future__ import annotations

import numpy as np

from autograder.checks._calls import method
from autograder.checks._modules import forward_pair, twins
from autograder.registry import check
from autograder.sandbox import call, construct
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import expect, fail
from minitorch_ref import nn

NUM, DIM = 7, 3
# Integer inputs of several shapes, each with repeated tokens.
INDICES = (np.array([4, 1, 4]), np.array([[0, 6, 2, 6], [2, 2, 5, 1]]),
           np.array([[[3, 3], [1, 0]], [[6, 3], [4, 4]]]), np.array([[5]]))
PADDING = 2


def _layers(Embedding, padding_idx: int | None = None):
    return twins("Embedding", Embedding, nn.Embedding, NUM, DIM, params=("weight",),
                 padding_idx=padding_idx)


def _fancy_added(indices: np.ndarray, grad_output: np.ndarray, padding_idx=None) -> np.ndarray:
    """The gradient ``weight.grad[indices] += grad_output`` leaves: one row per distinct token."""
    grad = np.zeros((NUM, DIM))
    rows, grads = indices.reshape(-1), grad_output.reshape(-1, DIM)
    if padding_idx is not None:
        rows, grads = rows[rows != padding_idx], grads[rows != padding_idx]
    grad[rows] += grads
    return grad


@check
def embedding_forward(Embedding):
    """Embedding(num_embeddings, embedding_dim, padding_idx): a table of shape
    (num_embeddings, embedding_dim) whose padding row starts at zero; forward maps integer
    inputs of shape (...) to (..., embedding_dim), row idx of the table for each index."""
    for indices in INDICES:
        student, reference = _layers(Embedding)
        got, expected = forward_pair("Embedding", student, reference, indices)
        signatures = (when("flattened", lambda g, e: g.shape == (e.size // DIM, DIM) != e.shape,
                           f"the output was flattened to (N, {DIM}): keep the input's shape, "
                           "weight[indices] has shape indices.shape + (embedding_dim,)."),)
        expect_close(f"Embedding({NUM}, {DIM}).forward(indices of shape {indices.shape})", got,
                     expected, f"indices {indices.tolist()}", signatures)
    student = construct(Embedding, NUM, DIM, padding_idx=PADDING)
    table = as_array("Embedding.weight.data", getattr(getattr(student, "weight", None), "data",
                                                      None))
    expect(table.shape == (NUM, DIM), f"Embedding({NUM}, {DIM}).weight has shape {table.shape}, "
           f"expected (num_embeddings, embedding_dim) = ({NUM}, {DIM}), PyTorch's layout.")
    expect(not table[PADDING].any(), f"Embedding({NUM}, {DIM}, padding_idx={PADDING}): row "
           f"{PADDING} of the table should start at zero, got {table[PADDING].tolist()}. Set "
           "weight.data[padding_idx] = 0 after drawing the table.")
    expect(table[np.arange(NUM) != PADDING].any(), "Embedding's table is all zeros: draw it "
           "from N(0, 1) with the generator.")


def _backward(Embedding, indices: np.ndarray, grad_output: np.ndarray,
              padding_idx: int | None = None, passes: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The student's weight.grad after ``passes`` forward/backward passes, and the reference's."""
    student, reference = _layers(Embedding, padding_idx)
    for _ in range(passes):
        forward_pair("Embedding", student, reference, indices, in_place=False)
        call("Embedding.backward", method(student, "backward"), grad_output.copy())
        reference.backward(grad_output.copy())
    got = as_array("Embedding.weight.grad", getattr(student.weight, "grad", None))
    return got, reference.weight.grad


@check
def embedding_backward(Embedding):
    """backward(grad_output) adds each row of grad_output (..., embedding_dim) into
    weight.grad at the row its index read: repeated indices accumulate (np.add.at), the
    padding_idx row gets nothing, and two passes without zero_grad add up."""
    rng = np.random.default_rng(14)
    for indices in INDICES:
        grad_output = rng.standard_normal(indices.shape + (DIM,))
        got, expected = _backward(Embedding, indices, grad_output)
        fancy = _fancy_added(indices, grad_output)
        signatures = (when("fancy_add", lambda g, e: close(g, fancy),
                           "a token that occurs more than once got the gradient of only one of "
                           "its occurrences: weight.grad[indices] += grad_output writes each "
                           "repeated row once. Use np.add.at(weight.grad, indices, grad_output), "
                           "which adds every row."),)
        expect_close("Embedding.weight.grad (dL/dW)", got, expected,
                     f"indices {indices.tolist()}", signatures)
    indices = np.array([[PADDING, 1, PADDING], [4, 1, 0]])
    grad_output = rng.standard_normal(indices.shape + (DIM,))
    got, expected = _backward(Embedding, indices, grad_output, padding_idx=PADDING)
    padded = expected.copy()
    padded[PADDING] = grad_output[indices == PADDING].sum(axis=0)
    expect_close(f"Embedding(padding_idx={PADDING}).weight.grad", got, expected,
                 f"indices {indices.tolist()}",
                 (when("padding_learns", lambda g, e: close(g, padded),
                       f"the padding row {PADDING} got a gradient: padding_idx's row must stay "
                       "fixed, so drop its rows before adding (or zero its gradient after)."),))
    grad_output = rng.standard_normal(INDICES[1].shape + (DIM,))
    once, _ = _backward(Embedding, INDICES[1], grad_output)
    twice, _ = _backward(Embedding, INDICES[1], grad_output, passes=2)
    if close(twice, once) and once.any():
        fail("Embedding.weight.grad after two backward passes equals one pass's gradient.\n"
             "  Likely mistake: `=` instead of adding: gradients must accumulate until "
             "zero_grad(), as in PyTorch.")
    expect_close("Embedding.weight.grad after two backward passes", twice, 2 * once,
                 "the same input twice: twice your own gradient of one pass")
