"""One mistake costs one cell: every catalogued bug, graded as its own notebook grades it
(``autograder.audit_cells``: only its unit's hidden cells, with the notebook's other code built
on it), fails the one cell of its part, and the cells it lists in ``Mutant.also``, each with
its reason; no other."""
from __future__ import annotations

import re

import pytest

from autograder import audit_cells
from autograder.mutants import catalogue
from autograder.notebooks.units import Unit, read

MUTANTS = catalogue()


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_mistake_costs_the_cell_of_its_part(mutant):
    failed = set(audit_cells.cells(mutant))
    listed = {cell for cell, _ in mutant.also}
    assert listed <= failed, (f"{mutant.name} lists {sorted(listed - failed)} in also, and passes "
                              "them: take them out")
    assert len(failed - listed) == 1, (
        f"{mutant.name} ({mutant.bug}) fails {sorted(failed)}: one mistake should cost one "
        "cell. Judge the other cells on their own part (against the student's own work where "
        "they need it), or list them in Mutant.also with the reason.")


def test_every_exception_names_a_cell_of_its_unit_and_a_reason():
    for mutant in MUTANTS:
        cells = audit_cells.hidden_calls()[audit_cells.unit_of(mutant.target)]
        for cell, reason in mutant.also:
            assert cell in cells and len(reason.split()) >= 6, (mutant.name, cell, reason)


@pytest.mark.parametrize("target", sorted(audit_cells.BUILT_ON))
def test_the_notebook_view_rebuilds_what_the_notebook_builds_on_a_target(target):
    """``audit_cells.BUILT_ON`` holds what the notebooks say: a subclass of the target, or a
    function (or class) whose code calls it, or calls a class of the notebook that does (unit
    15's block builds the read-only MultiheadAttention, which calls the student's attention)."""
    source = "\n".join(cell.source for cell in read(Unit(audit_cells.unit_of(target)).source).cells
                       if cell.cell_type == "code")
    bodies = dict(re.findall(r"^(?:def|class) (\w+)\b(.*?)(?=^\S)", source, re.MULTILINE | re.DOTALL))
    callers = {target} | {name for name, body in bodies.items() if re.search(rf"\b{target}\(", body)}
    for name in audit_cells.BUILT_ON[target]:
        subclass = re.search(rf"^class {name}\({target}\)", source, re.MULTILINE)
        calls = any(re.search(rf"\b{caller}\(", bodies.get(name, "")) for caller in callers)
        assert subclass or calls, (target, name)


def test_a_notebook_that_builds_on_a_buggy_part_is_judged_on_its_own_part():
    """The issue's examples: an Adam bug costs adam_step only (AdamW is judged against the
    student's own Adam), a train_epoch bug train_epoch's cells only (fit runs with stand-ins),
    a Sum bug tensor_reductions only (the MLP gets its loss's gradient as data, cross_entropy
    is judged against the course's composition on the student's own Tensor), a wrong bias
    gradient linear_backward_params only."""
    expected = {"adam_no_bias_correction": {"adam_step"},
                "train_epoch_no_zero_grad": {"train_epoch_steps"},
                "tensor_sum_grad_wrong_axis": {"tensor_reductions"},
                "linear_bias_grad_wrong_axis": {"linear_backward_params"},
                "cross_entropy_one_hot_columns": {"cross_entropy_loss_forward",
                                                  "cross_entropy_loss_backward"}}
    found = {m.name: set(audit_cells.cells(m)) for m in MUTANTS if m.name in expected}
    assert found == expected
