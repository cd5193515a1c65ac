"""Timing helpers for the benchmarks: alternate contenders, take medians, report ratios.

These machines are noisy, so every contender runs once per round, in turn, for
several rounds, and the median of each is compared. Ratios measured in one run
are what the benchmarks report; absolute seconds are printed for context only.
Wall time is the headline; CPU time (``time.process_time``, all of the process's
threads) is printed beside it because it moves less when other processes share
the cores.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Timing:
    """Median wall and CPU seconds of one contender, and what its last run returned."""
    wall: float
    cpu: float
    result: object = None


def median_times(contenders: dict[str, Callable[[], object]], rounds: int = 5,
                 warmup: bool = True) -> dict[str, Timing]:
    """Median wall and CPU time (s) of each contender over ``rounds`` alternating runs."""
    if warmup:
        for run in contenders.values():
            run()
    wall: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    results: dict[str, object] = {}
    for _ in range(rounds):
        for name, run in contenders.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            results[name] = run()
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start_wall)
    return {name: Timing(statistics.median(wall[name]), statistics.median(cpu[name]),
                         results[name]) for name in contenders}


def ratio(times: dict[str, Timing], numerator: str, denominator: str) -> str:
    """``a/b`` by wall time, with the CPU-time ratio in brackets: '0.62x (cpu 0.60x)'."""
    if numerator not in times or denominator not in times:
        return "n/a"
    a, b = times[numerator], times[denominator]
    return f"{a.wall / b.wall:.2f}x (cpu {a.cpu / b.cpu:.2f}x)"


def cell(times: dict[str, Timing], name: str, field: str = "wall", fmt: str = "{:.2f}") -> str:
    """A contender's median wall seconds (or ``field``) for a table, 'n/a' if it did not run."""
    return fmt.format(getattr(times[name], field)) if name in times else "n/a"


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def limit_threads(threads: int) -> str:
    """Use ``threads`` BLAS/OpenMP threads in numpy, numexpr and PyTorch; describe the setting.

    Set for every contender of a run, so that none has threads the others lack (on
    a busy 2-core machine spinning BLAS threads distort every ratio).
    """
    import numexpr
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    numexpr.set_num_threads(threads)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[variable] = str(threads)
    described = f"{threads} BLAS thread(s) (threadpoolctl; numexpr.set_num_threads({threads})"
    if torch_available():
        import torch

        torch.set_num_threads(threads)
        described += f"; torch.set_num_threads({threads})"
    return described + ")"


def peak_memory_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_child_memory_mib() -> float:
    """Peak resident memory of the largest finished child process (kernels, nbgrader), MiB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            names = [line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or platform.machine()


def load_average() -> str:
    """``uptime``'s three load averages (1, 5 and 15 minutes)."""
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def machine() -> str:
    cores = len(os.sched_getaffinity(0))
    return (f"{cpu_model()}, {cores} cores, Python {sys.version.split()[0]}, numpy "
            f"{np.__version__}; {load_average()}")


def table(header: tuple[str, ...], rows: list[tuple]) -> str:
    """A Markdown table, so results paste straight into README."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def against_pytorch_by_dtype(contenders_for: Callable[[type], dict[str, Callable[[], object]]],
                             rounds: int) -> str:
    """A table of the reference against PyTorch in float32 and float64 (target <= 1.5x):
    ``contenders_for(dtype)`` gives ``{'reference': run, 'pytorch': run}``, without
    ``'pytorch'`` where torch is not installed."""
    rows = []
    for dtype in (np.float32, np.float64):
        t = median_times(contenders_for(dtype), rounds)
        rows.append((np.dtype(dtype).name, cell(t, "reference", fmt="{:.4f}"),
                     cell(t, "pytorch", fmt="{:.4f}"), ratio(t, "reference", "pytorch")))
    return table(("dtype", "reference s", "pytorch s", "reference / pytorch (target <= 1.5x)"),
                 rows)


def arguments(doc: str) -> argparse.ArgumentParser:
    """A benchmark's command line: ``--rounds`` and ``--threads``, described by the first line
    of its docstring; a script adds its own options before ``parse_args()``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for every contender")
    return parser
