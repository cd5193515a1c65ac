"""How long one job may hold a grading worker: a time budget per unit, from what its
reference needs.

A submission can make every wait of the grader as long as its own limit allows: a cell
that sleeps just under the cell time limit, a check answered just before the check's, and a
notebook has dozens of each. One unit-04 submission doing both held a worker for 692.8 s
where the honest job takes 2.5 s, and a class of them would delay grading by hours. So
each job gets a budget on the clock, ``seconds(unit, limits)``:

- ``FACTOR`` times what the unit's reference job took (``REFERENCE_SECONDS``), room for slow
  but honest code. The table is the median of six reference jobs per unit, three students
  handing in the source notebooks, graded in two runs with two workers on a two-core machine
  that other work kept busy (one-minute load average 8 to 26, median 14 and 20 in the two
  runs), so it is already what a busy worker needs: unit 04 took 11.2 s there, 2.5 s on a
  quiet machine. ``python -m autograder.pipeline.job.budget COURSE STUDENT`` prints the
  table from a graded course;
- at least ``FLOOR_SECONDS``: a cell stopped at the course's 30 s limit and a check at its
  own 20 s still leave time for the rest of the notebook;
- plus what a unit's rules allow beyond its reference (``ALLOWED_SECONDS``): unit 11's graded
  run may use 20 s of CPU time and is stopped at 60 s on the clock, where its reference's
  training takes one; unit 14's the same, where its reference's takes 3 to 5; unit 16's two
  runs 15 s and 60 s, stopped at 45 s and 180 s, where the reference's take about 4 and 20;
- a unit without a measurement, ``Limits.job_seconds``, if it is set, for every unit (an
  instructor's ``--job-seconds``), or ``UNMEASURED_SECONDS``.

Where the job has a control group (``autograder.pipeline.sandbox.cgroups``, made by the
grading station), the budget is the group's CPU time: every process of the kernel counted by
the OS, the ended, re-parented and nested ones too, and at most one core of it a second, so
an honest job's CPU seconds do not depend on its neighbours (96 busy processes beside it
stretched its time on the clock threefold). A job that sleeps uses none, so it also has a
ceiling on the clock, ``WALL_FACTOR`` times the budget. Where no group can be made (no root,
no delegation) the budget is on the clock alone, as the budget in CPU seconds would be.

Past the budget the job's kernel is killed, what finished is graded (the cells that did not
score zero, ``autograder.pipeline.job.execute``) and the submission is flagged for review; the
last ``FINISH_SECONDS`` of the budget are kept for that (no check waits past the kill), so the
job ends within it.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.checks import capstone, gpt_training, language_training
from autograder.pipeline.course import RECORD
from autograder.remote.channel import GRACE_SECONDS

FACTOR = 5
FLOOR_SECONDS = 90.0
UNMEASURED_SECONDS = 1200.0
# After the kernel is killed: a check's wait may still end with the channel's grace for an
# interrupted kernel (5 s); then nbgrader scores and the job collects (a second or two).
FINISH_SECONDS = GRACE_SECONDS + 5.0
# The seconds each unit's reference job took (median of six, 2026-11-27, with every unit's
# questions to think with; see above)
REFERENCE_SECONDS = {
    "01_setup": 5.2, "02_gradients": 4.7, "03_module_linear": 12.0, "04_activations": 11.2,
    "05_losses": 13.6, "06_sequential": 11.1, "07_optimizers": 15.5, "08_data": 18.1,
    "09_training": 41.4, "10_regularization": 28.0, "11_capstone": 30.5, "12_autograd": 11.3,
    # the same median of six, measured alone for the unit (three students, two runs, two
    # workers) with twelve busy processes keeping the load average at 9.5-13.5; quiet: 17.4
    "13_conv": 20.9,
    # one reference job, not yet the median of six: unit 14 alone with its graded training run
    # (one worker, sandboxed, beside a test run: load average 6-9, 2026-12-02); 8.5 s before it
    "14_language": 26.4,
    # units 15 and 16: the median of six reference jobs, three students handing in the source
    # notebooks, graded twice through the sandboxed pipeline with two workers (the graded runs
    # included), the two units alone on the machine (one-minute load average 3.5-4.7, median
    # 4.3, 2026-12-02); unit 15's six took 5.4-10.6 s, unit 16's 37.5-67.1 s. Measured again
    # on unit 16's final notebook (its live plot, ablations, samples and comparison added,
    # 2026-12-03): alone on the machine (load 1.8-1.9) unit 16's six took 41.9-49.2 s, median
    # 46.5, unit 15's median 4.0; beside the test suite (load 4.8-7.4) 93.7-125.6 s, median
    # 110.3, unit 15's 8.8. The figures below stand: 5 x 57.9 s + 225 s is 4.7 times the busy
    # job's clock and over 10 times the quiet one's CPU time
    "15_attention": 7.0,
    "16_gpt": 57.9,
}
ALLOWED_SECONDS = {"11_capstone": capstone.TRAINING_LIMIT,
                   "14_language": language_training.TRAINING_LIMIT,
                   "16_gpt": gpt_training.TRAINING_LIMIT}
WALL_FACTOR = 2.0


@dataclass(frozen=True)
class Budget:
    """A job's time budget: ``cpu`` seconds of its control group's CPU time (None: it has no
    group) and ``wall`` seconds on the clock, whichever runs out first."""

    cpu: float | None
    wall: float

    def describe(self) -> str:
        """For the notes: ``90 s of CPU time (180 s on the clock)``, or ``90 s``."""
        if self.cpu is None or self.cpu == self.wall:
            return f"{self.wall:g} s"
        return f"{self.cpu:g} s of CPU time ({self.wall:g} s on the clock)"


def seconds(unit: str, limits) -> float:
    """The time budget of a job of ``unit`` under ``limits`` (a ``job.Limits``)."""
    if limits.job_seconds is not None:
        return float(limits.job_seconds)
    if unit not in REFERENCE_SECONDS:
        return UNMEASURED_SECONDS
    return max(FLOOR_SECONDS, FACTOR * REFERENCE_SECONDS[unit]) + ALLOWED_SECONDS.get(unit, 0.0)


def of(unit: str, limits, cgroup: bool) -> Budget:
    """The budget of a job of ``unit`` under ``limits``, in CPU time if the job has a control
    group (``cgroup``); an instructor's ``Limits.job_seconds`` bounds the clock too."""
    budget = seconds(unit, limits)
    if not cgroup:
        return Budget(None, budget)
    return Budget(budget, budget if limits.job_seconds is not None else WALL_FACTOR * budget)


def measured(course: Path, student: str) -> dict[str, float]:
    """The seconds each of ``student``'s jobs took, from the graded course's records."""
    records = sorted((course / "autograded" / student).glob(f"*/{RECORD}"))
    return {path.parent.name: json.loads(path.read_text(encoding="utf-8"))["seconds"]
            for path in records}


def main(argv: list[str]) -> int:
    """``python -m autograder.pipeline.job.budget COURSE STUDENT``: the ``REFERENCE_SECONDS`` table
    of a graded course where STUDENT handed in the reference solutions."""
    if len(argv) != 2:
        print(main.__doc__, file=sys.stderr)
        return 2
    table = measured(Path(argv[0]), argv[1])
    if not table:
        print(f"no graded unit of {argv[1]} in {argv[0]}/autograded", file=sys.stderr)
        return 1
    print("REFERENCE_SECONDS = {\n" + "".join(f"    {unit!r}: {value},\n"
                                              for unit, value in table.items()) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
