"""Check of unit 16's weight tying: the head is the token table itself, and the table's
gradient is the sum of its two uses.

**The head reads the table.** The grader builds a GPT with more tokens than the input uses
(rows ``READ`` of the table are looked up, the other ``WIDTH`` rows are not), so that the rows
nobody looks up reach the logits through the head alone. It writes the identity into those
rows: with a tied head their logits are then the head's input ``X`` itself, read from the
logits and not from what the kernel says it saved. It then writes random rows there: every
logit must be ``X W_te^T`` for the table as it now is, so a head with a table of its own (a
copy made in ``__init__``, a ``Linear``) does not follow, and the message says so. The model
must also list the table once among its parameters, and hold no second one.

**Its gradient is the sum of both uses**, the head's ``G^T X`` and the lookup's scatter, added
to what ``.grad`` held: judged after the grader has run the layers forward itself, against
``minitorch_ref``'s ``GPT`` on the same weights (whose gradient agrees with finite differences:
tests/minitorch_ref/test_gpt.py), and the message names the part that is missing.
"""
from __future__ import annotations

import numpy as np

from autograder.checks.gpt import (
    BLOCK, WIDTH, accumulated, backward_pass, parameter_names, student_twin, _path,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close
from course.testing.failure import expect, fail
from course.testing.tying import tied_gradient_signatures

READ = 4                       # the input's tokens are 0..READ-1
TIED_VOCAB = READ + WIDTH      # the rows nobody looks up: one per dimension of X


def _logits(model, table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The student's logits once the grader has written ``table`` into ``wte.weight.data``."""
    _path(model, "wte.weight").data = table.copy()
    return as_array("GPT.forward output", call("GPT.forward", model.forward, idx.copy()))


def _one_table(model) -> None:
    """``wte.weight`` once among the parameters, and no parameter beyond the GPT's own."""
    table = _path(model, "wte.weight")
    named = list(call("GPT.named_parameters", model.named_parameters))
    extra = sorted(set(name for name, _ in named) - set(parameter_names()))
    if extra:
        fail(f"GPT has parameters of its own beyond its layers': {', '.join(extra)}. The head is "
             "the token table itself (logits = X @ wte.weight.data.T): no copy, no Linear.")
    listed = list(call("GPT.parameters", model.parameters))
    times = sum(p is table for p in listed)
    expect(times == 1 and len(listed) == len(parameter_names()),
           f"GPT.parameters() lists wte.weight {times} times among {len(listed)} parameters "
           f"(expected once among {len(parameter_names())}): the tied table is one parameter.")


def _head_reads_the_table(model, ref) -> None:
    """Every logit is ``X W_te^T`` for the table as the grader last wrote it."""
    idx = np.random.default_rng(5).integers(0, READ, size=(2, BLOCK))
    table = ref.wte.weight.data.copy()
    table[READ:] = np.eye(WIDTH)
    X = _logits(model, table, idx)[..., READ:]          # the head's input, as the logits show it
    table[READ:] = np.random.default_rng(6).standard_normal((WIDTH, WIDTH))
    logits = _logits(model, table, idx)
    if not close(logits[..., READ:], X @ table[READ:].T):
        fail("after the grader changed rows of wte.weight.data that the input does not look up, "
             "their logits did not follow: the head must compute X @ self.wte.weight.data.T with "
             "the table as it is now, not a copy taken in __init__ or a head of its own.")
    expect_close("GPT.forward logits of the tokens the input looks up", logits[..., :READ],
                 X @ table[:READ].T, "the head is X @ wte.weight.data.T, X the head's input")


@check
def gpt_weight_tying(GPT):
    """The head is wte.weight itself (one Parameter, listed once; the logits follow a change to
    wte.weight.data), and backward adds to wte.weight.grad the sum of its two uses: the head's
    G^T X and the lookup's scatter of dL/dX0, as minitorch_ref's GPT on the same weights."""
    model, ref = student_twin(GPT, 5, vocab=TIED_VOCAB)
    _one_table(model)
    _head_reads_the_table(model, ref)
    for seed, batch, length in ((3, 3, BLOCK), (4, 2, 4)):
        model, ref = student_twin(GPT, seed)
        result = backward_pass(model, ref, seed, batch, length)
        before, head = result.before["wte.weight"], result.head
        signatures = (accumulated("wte.weight", before),
                      *tied_gradient_signatures(head, result.expected["wte.weight"] - before - head, before))
        expect_close("GPT.wte.weight.grad after one backward pass", result.got(model, "wte.weight"),
                     result.expected["wte.weight"], result.where, signatures)
