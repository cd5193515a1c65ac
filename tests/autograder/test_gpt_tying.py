"""Unit 16's weight-tying cell: it passes the reference and a model whose other parts are
wrong, and it names each way a tie breaks (a head of its own, a copy of the table, one of
the gradient's two parts missing)."""
from __future__ import annotations

import numpy as np
import pytest

from autograder import audit
from autograder.mutants import gpt as mutants
from autograder.mutants._solutions import solution
from autograder.registry import CHECKS
from minitorch_ref.nn import Parameter

GPT = solution("GPT")


class OwnHead(GPT):
    """A head of its own, started as a copy of the table."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lm_head = Parameter(self.wte.weight.data.copy())

    def forward(self, idx):
        super().forward(idx)
        return self.head_input @ self.lm_head.data.T


class CopiedTable(GPT):
    """The head reads an array copied from the table in ``__init__``: no second Parameter."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_table = self.wte.weight.data.copy()

    def forward(self, idx):
        super().forward(idx)
        return self.head_input @ self.head_table.T


class LookupOnly(GPT):
    """The head's G^T X never added: only the lookup's gradient reaches the table."""

    def backward(self, grad_logits):
        grad = self.blocks.backward(self.ln_f.backward(grad_logits @ self.wte.weight.data))
        self.wte.backward(grad)
        self.wpe.backward(grad.sum(axis=0))


def failure(model) -> str | None:
    """The weight-tying cell's message for a notebook whose GPT is ``model``, or None."""
    return audit.run(CHECKS["gpt_weight_tying"], {"GPT": model})


@pytest.mark.parametrize("model", [GPT, mutants.NoPositions, mutants.NotCausal],
                         ids=["reference", "no-positions", "not-causal"])
def test_a_tied_model_passes_whatever_else_its_forward_gets_wrong(model):
    assert failure(model) is None


def test_a_head_of_its_own_is_named():
    assert "parameters of its own beyond its layers': lm_head" in failure(OwnHead)


def test_a_copy_of_the_table_is_caught_by_the_logits_not_following_it():
    assert "their logits did not follow" in failure(CopiedTable)


@pytest.mark.parametrize("model, says", [
    (mutants.TiedGradientNotSummed, "holds only the head's G^T X: the lookup's gradient was written over"),
    (LookupOnly, "holds only the lookup's gradient (wte.backward)"),
])
def test_the_missing_part_of_the_tied_gradient_is_named(model, says):
    assert says in failure(model)
