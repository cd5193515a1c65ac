"""Timing helpers for the benchmarks: alternate contenders, take medians, report ratios.

These machines are noisy, so every contender runs once per round, in turn, for
several rounds, and the median of each is compared. Ratios measured in one run
are what the benchmarks report; absolute seconds are printed for context only.
"""
from __future__ import annotations

import platform
import resource
import statistics
import sys
import time
from typing import Callable

import numpy as np


def median_times(contenders: dict[str, Callable[[], None]], rounds: int = 5,
                 warmup: bool = True) -> dict[str, float]:
    """Median wall time (s) of each contender over ``rounds`` alternating runs."""
    if warmup:
        for run in contenders.values():
            run()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def peak_memory_mib() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    cores = len(__import__("os").sched_getaffinity(0))
    return (f"{platform.processor() or platform.machine()}, {cores} cores, Python "
            f"{sys.version.split()[0]}, numpy {np.__version__}")


def table(header: tuple[str, ...], rows: list[tuple]) -> str:
    """A Markdown table, so results paste straight into README."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
