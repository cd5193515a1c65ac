"""Benchmark 5: every widget notebook executed headless N times in a row with plain
``jupyter nbconvert --execute`` (default settings: no timeout), stalls counted.

nbclient's executor can miss a cell's reply and wait forever (nbclient issue #312) when it
sends on the kernel's shell channel during a cell, which it does for an ipywidgets ``Output``
widget; the course's widgets give it nothing to send. A run that has not finished after
``--stall`` seconds (normally 5-20 s) is counted as a stall and killed. The race is likelier
on a busy machine, so ``--busy N`` keeps N extra processes spinning while the notebooks run.
Release notebooks run with ``--allow-errors`` (their stubs raise by design).

    python -m bench.headless [--runs 20] [--busy 1] [--units 03_module_linear ...] [--release]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.notebooks.units import read, units, uses_widgets
from bench._timing import machine, table

JUPYTER = Path(sys.executable).with_name("jupyter")


def spin() -> None:
    while True:
        pass


def execute(notebook: Path, allow_errors: bool, stall: float) -> float | str | None:
    """Seconds ``jupyter nbconvert --execute`` took on a copy of ``notebook``'s folder, None
    if it had not finished after ``stall`` seconds, or the end of its error output if it
    failed."""
    with tempfile.TemporaryDirectory(prefix="headless-") as scratch:
        folder = shutil.copytree(notebook.parent, Path(scratch) / notebook.parent.name)
        command = [str(JUPYTER), "nbconvert", "--to", "notebook", "--execute", "--stdout",
                   str(folder / notebook.name)] + (["--allow-errors"] if allow_errors else [])
        start = time.perf_counter()
        try:
            subprocess.run(command, cwd=folder, check=True, timeout=stall,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except subprocess.TimeoutExpired:
            return None
        except subprocess.CalledProcessError as error:
            return error.stderr.decode(errors="replace").strip().splitlines()[-1]
        return time.perf_counter() - start


def row(notebook: Path, args: argparse.Namespace, allow_errors: bool) -> tuple:
    name = f"{notebook.parent.parent.name}/{notebook.name}"
    times = [execute(notebook, allow_errors, args.stall) for _ in range(args.runs)]
    done = [t for t in times if isinstance(t, float)]
    errors = [t for t in times if isinstance(t, str)]
    stalls = times.count(None)
    print(f"  {name}: {stalls} stall(s), {len(errors)} failed run(s) {errors[:1]}", flush=True)
    return (name, args.runs, stalls, len(errors),
            f"{statistics.median(done):.1f}" if done else "-", f"{max(done):.1f}" if done else "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each notebook")
    parser.add_argument("--busy", type=int, default=1, help="spinning processes meanwhile")
    parser.add_argument("--stall", type=float, default=120.0, help="seconds that mean a stall")
    parser.add_argument("--units", nargs="*", help="unit names (default: every widget unit)")
    parser.add_argument("--release", action="store_true", help="the release notebooks too")
    args = parser.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    chosen = [u for u in units() if uses_widgets(read(u.source))
              and (not args.units or u.name in args.units)]
    notebooks = [(u.source, False) for u in chosen]
    notebooks += [(u.release, True) for u in chosen] if args.release else []
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for spinner in spinners:
        spinner.start()
    try:
        rows = [row(path, args, allow_errors) for path, allow_errors in notebooks]
    finally:
        for spinner in spinners:
            spinner.terminate()
    print(f"Widget notebooks under `jupyter nbconvert --execute` (no timeout), {args.runs} runs "
          f"each, {args.busy} busy process(es), a stall = not done after {args.stall:.0f} s. "
          f"{machine()}")
    print(table(("notebook", "runs", "stalls", "failed", "median s", "slowest s"), rows))


if __name__ == "__main__":
    main()
