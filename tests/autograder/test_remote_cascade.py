"""One mistake costs one cell from outside the kernel too: a notebook whose other code is
built on a buggy part (AdamW on the student's Adam, the schedules on their LRScheduler, fit on
their train_epoch and evaluate, TensorMLP on their Tensor) loses, graded as a submission is,
exactly the cells the in-process view says (``autograder.audit_cells``). The isolation these
cells use runs in the kernel through the grader's doubles (fit's stand-ins, a schedule's test
subclasses) and the agent (an optimizer's own twin, a Tensor graph replayed from outside).
The kernel takes the notebook once per bug and grades its cells in order, as a submission's
kernel does. A cell whose check takes none of the buggy names gets the reference alone,
which test_remote_audit.py grades from outside once: it is not run again for each bug (314
of 776 checks; with one set-up per bug instead of one per check, the file's CPU time went
from 40.6 s to 27.6 s)."""
from __future__ import annotations

import pytest

from autograder import audit_cells
from autograder.audit_remote import SETUP, agent_kernel, graded_from_outside
from autograder.mutants import catalogue
from autograder.registry import CHECKS

BUILT_ON = [m for m in catalogue() if m.target in audit_cells.BUILT_ON]
# In the kernel: a unit's names, the mutant and what the notebook builds on it.
CELLS_SETUP = SETUP + '''
from autograder.audit_cells import replaced as _replaced


def _use_notebook(names, mutant):
    globals().update({name: _reference(name) for name in names})
    chosen = next(m for m in _catalogue() if m.name == mutant)
    globals().update(_replaced(chosen))
'''


@pytest.fixture(scope="module")
def kernel():
    with agent_kernel(CELLS_SETUP) as started:
        yield started


@pytest.mark.parametrize("mutant", BUILT_ON, ids=[m.name for m in BUILT_ON])
def test_a_notebook_built_on_a_bug_loses_the_same_cells_from_outside(kernel, mutant):
    client, channel = kernel
    expected = set(audit_cells.cells(mutant))
    built = set(audit_cells.replaced(mutant))
    unit = audit_cells.unit_of(mutant.target)
    checks = [CHECKS[name] for name in audit_cells.hidden_calls()[unit]
              if built & set(CHECKS[name].targets)]
    names = sorted({name for check in checks for name in check.targets})
    reply = client.execute_interactive(f"_use_notebook({names!r}, {mutant.name!r})", timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
    failed = {check.name for check in checks if graded_from_outside(channel, check) is not None}
    assert failed == expected
