"""Visible test cells that carry points, scored by the grader's process.

Such a cell (unit 11's ``grade-budget`` and ``grade-accuracy``, unit 14's
``grade-language-model``, unit 16's ``grade-gpt-sorter`` and ``grade-gpt-namer``) is the
student's own view of the graded run: it still runs in the kernel and its printed output reaches the graded notebook and the feedback. Its score does not come from that run. Before the cell runs, the
grader runs the check of ``VERDICTS`` from outside (once per notebook: the run is shared by
the cells), and the cell's outputs are the kernel's text and pictures followed by the
verdict: nothing when it passes, a ``CheckFailure`` error when it fails, the grader's fault
(``hidden.fault_output``) when the grader's side failed. What the kernel
raised or returned is dropped, as is what it wrote on stderr: nbgrader scores a cell from
errors, stderr and a numeric result, and all three are the student's process to forge.
"""
from __future__ import annotations

from typing import Callable

from nbformat import NotebookNode

from autograder.checks import capstone, gpt_training, language_training
from autograder.remote.channel import Channel
from autograder.remote.errors import GraderFault
from autograder.cells.hidden import failure_output, fault_output
from course.testing.failure import CheckFailure

# The CPU seconds the kernel has used so far, read from outside it (kernel_cpu.KernelCPU)
CPU = Callable[[], float]
# grade id -> (the grader's run of the notebook, the verdict of this cell on that run)
VERDICTS: dict[str, tuple[Callable[[Channel, CPU, float], object], Callable[[object], None]]] = {
    "grade-budget": (capstone.graded_run, capstone.budget),
    "grade-accuracy": (capstone.graded_run, capstone.accuracy),
    "grade-language-model": (language_training.graded_run, language_training.language_model),
    "grade-gpt-sorter": (gpt_training.sorter_run, gpt_training.gpt_sorter_run),
    "grade-gpt-namer": (gpt_training.namer_run, gpt_training.gpt_namer_run),
}
KEPT = {"stream", "display_data"}


class Verdicts:
    """The visible graded cells of one notebook: each run done once, each cell judged on it;
    ``cpu`` reads the notebook's kernel's CPU time."""

    def __init__(self, cpu: CPU) -> None:
        self.cpu = cpu
        self.runs: dict[Callable, object] = {}

    def judge(self, channel: Channel, grade_id: str, wall: float) -> list[NotebookNode]:
        """The outputs the grader adds to cell ``grade_id``: none if it passes, one error if it
        fails, or the grader's fault (the run or the verdict failed on the grader's side). A run
        not done yet waits ``wall`` seconds at most."""
        run_of, verdict = VERDICTS[grade_id]
        if run_of not in self.runs:
            try:
                self.runs[run_of] = run_of(channel, self.cpu, wall)
            except GraderFault as fault:      # every cell of this run: no score
                self.runs[run_of] = fault
        run = self.runs[run_of]
        if isinstance(run, GraderFault):
            return [fault_output(str(run))]
        try:
            verdict(run)
        except CheckFailure as failure:
            return [failure_output(str(failure))]
        except Exception as error:  # noqa: BLE001 - a verdict reads the grader's own run
            return [fault_output(f"{type(error).__name__}: {error}")]
        return []


def scored(kernel_outputs: list[NotebookNode], verdict: list[NotebookNode]) -> list[NotebookNode]:
    """The kernel's text and pictures (its stderr shown as ordinary text), then the verdict."""
    kept = [output for output in kernel_outputs if output.output_type in KEPT]
    for output in kept:
        if output.output_type == "stream":
            output.name = "stdout"
    return kept + verdict
