"""Benchmark 3: autograding on Dask against plain nbgrader, measured in one run.

    .venv/bin/python bench/autograde.py                  # both measurements, 24 students
    .venv/bin/python bench/autograde.py --students 0     # one student's course only
    .venv/bin/python bench/autograde.py --sandbox-cost   # also: bubblewrap on vs off
    .venv/bin/python bench/autograde.py --checks-cost    # also: checks in-process vs outside

Builds a scratch course with every unit (``autograder.pipeline.demo.scenario``),
then, in one run:

1. a class of N students on ``--unit`` (half hand in the reference solution, half the
   untouched release), graded by ``python -m autograder grade``'s code with
   ``--workers 2`` (the local Dask cluster's start-up included), against one plain
   serial ``nbgrader autograde UNIT`` over the same submissions in a copy of the course;
2. one student's whole course (the reference solutions of every unit) graded with 2
   workers, start-up included, against plain ``nbgrader autograde UNIT --student``
   unit after unit;
3. a projection from the measured cost per job (worker-seconds): a class of 500
   students handing in every unit, on 1, 8 and 64 workers;
4. with ``--sandbox-cost``, the class graded with and without the OS sandbox (only sandboxed
   kernels are forked from the worker's zygote, so this also shows what the zygote saves); with
   ``--checks-cost``, every check run on the reference in this process and from outside a
   kernel (as grading runs them), the difference set against the course's worker-seconds.

The machine's other load changes the numbers; the ratios are measured within one run.
"""
# Dask starts its local workers with multiprocessing's "spawn", which runs this file again in each
# of them: it imports nothing, so they load what the workers of `python -m autograder grade` load.
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._autograde import main
    main(__doc__)
