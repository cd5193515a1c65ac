"""Benchmark 4: execution time of every source notebook (solutions in), unit by unit.

Each notebook runs top to bottom in a fresh kernel started in its own folder,
as nbval and nbgrader run it; the budget is 30 s per unit and 5 minutes in all.

    python -m bench.notebooks [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import nbformat
from nbclient import NotebookClient

from autograder.notebooks.units import units
from bench._timing import machine, peak_child_memory_mib, peak_memory_mib, table

BUDGET_PER_UNIT, BUDGET_TOTAL = 30.0, 300.0


def execute(path) -> float:
    """Seconds to run the notebook at ``path`` in a fresh kernel."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads in the kernels")
    args = parser.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))
    rows, total = [], 0.0
    for unit in units():
        seconds = execute(unit.source)
        total += seconds
        verdict = "ok" if seconds <= BUDGET_PER_UNIT else "OVER BUDGET"
        rows.append((unit.name, f"{seconds:.1f}", verdict))
    rows.append(("all units", f"{total:.1f}", "ok" if total <= BUDGET_TOTAL else "OVER BUDGET"))
    print(f"Source notebooks executed top to bottom (kernel start included), {args.threads} BLAS "
          f"thread(s) in the kernels. {machine()}")
    print(table(("unit", "seconds", f"budget {BUDGET_PER_UNIT:.0f} s / {BUDGET_TOTAL:.0f} s"), rows))
    print(f"peak memory: this process {peak_memory_mib():.0f} MiB, largest kernel "
          f"{peak_child_memory_mib():.0f} MiB")


if __name__ == "__main__":
    main()
