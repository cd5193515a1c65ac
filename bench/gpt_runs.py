"""Benchmark: unit 16's two graded runs, the reference's recipes against PyTorch's same model.

Two recipes of ``minitorch_ref.models.recipes`` (``--recipe``): ``graded``, the notebook's
solution (the sorter, 2 layers of width 32, 200 steps of 64 at 1e-2; the namer, 2 layers of
width 48, 800 steps of 32), and ``reference``, the reference's longer runs (width 48, 300 steps;
width 64, 1,500 steps). Both use AdamW over ``weight_decay_groups``, warm-up then cosine,
``clip_grad_norm_`` at 1, trained on the grader's samples, then measured as the grader measures
(``autograder.checks.gpt_training``): the exact match of greedy decoding on 1,000 new problems,
the NLL per character on the grader's held-out names. PyTorch trains its twin from the same
initial weights on the same batches. Printed: the figures of both, the CPU seconds of build +
training + measuring, and their ratio (the graded budgets: ``gpt_training.SORTER_BUDGET`` and
``NAMER_BUDGET``, 15 s and 60 s).

    python -m bench.gpt_runs [--recipe graded reference] [--seeds 0 1 2] [--threads 1]
                             [--dtype float32]
"""
from __future__ import annotations

import time

import numpy as np

from autograder.checks import gpt_training as graded
from bench._timing import arguments, limit_threads, machine, table, torch_available
from bench._twins import torch_gpt
from minitorch_ref import manual_seed
from minitorch_ref.models import GPT
from minitorch_ref.models.recipes import (GRADED_NAMER, GRADED_NAMER_STEPS, GRADED_SORTER,
                                         GRADED_SORTER_STEPS, NAMER, NAMER_STEPS, SORTER,
                                         SORTER_STEPS, train_gpt)
from minitorch_ref.nn import Parameter
from minitorch_ref.optim import AdamW, weight_decay_groups
from minitorch_ref.optim.lr_scheduler import WarmupCosineLR

RECIPES = {"graded": {"sorter": (GRADED_SORTER, GRADED_SORTER_STEPS),
                      "namer": (GRADED_NAMER, GRADED_NAMER_STEPS)},
           "reference": {"sorter": (SORTER, SORTER_STEPS), "namer": (NAMER, NAMER_STEPS)}}
TASKS = ("sorter", "namer")


def samples(task: str) -> dict[str, np.ndarray]:
    """The grader's arrays for ``task``: ``X``, ``y`` to train on, and what it measures on."""
    return graded._sorter_inputs() if task == "sorter" else graded._namer_inputs()


def score(task: str, logits_of, arrays: dict[str, np.ndarray]) -> float:
    """The grader's score of a trained model, ``logits_of(idx)`` its logits."""
    if task == "sorter":
        return graded.exact_match(lambda idx, _: logits_of(idx), arrays["problems"])
    return graded.causal_nll(lambda idx, _: logits_of(idx), arrays["X_test"], arrays["y_test"], "")


def reference_run(task: str, recipe: tuple, seed: int, dtype: type,
                  arrays: dict) -> tuple[float, float]:
    """(score, CPU seconds) of the reference trained by ``recipe``, ``(config, steps)``."""
    config, steps = recipe
    start = time.process_time()
    manual_seed(seed)
    model = GPT(config, dtype=dtype)
    train_gpt(model, arrays["X"], arrays["y"], **steps)
    model.eval()
    result = score(task, model, arrays)
    return result, time.process_time() - start


def torch_run(task: str, recipe: tuple, seed: int, dtype: type,
              arrays: dict) -> tuple[float, float]:
    """(score, CPU seconds) of PyTorch's twin, from the reference's initial weights, on the
    same batches with the same optimizer, schedule and clipping."""
    import torch

    config, steps = recipe
    manual_seed(seed)
    model = GPT(config, dtype=dtype)
    start = time.process_time()
    twin = torch_gpt(model, torch.from_numpy(model.wte.weight.data).dtype)
    optimizer = torch.optim.AdamW(_torch_groups(model, twin), lr=steps.get("lr", 3e-3),
                                  betas=(0.9, 0.99))
    schedule = _schedule(steps["steps"], steps["warmup"])
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: schedule.lr_at(1.0, step))
    X, Y = torch.from_numpy(arrays["X"]), torch.from_numpy(arrays["y"])
    rng = np.random.default_rng(0)
    for _ in range(steps["steps"]):
        rows = torch.from_numpy(rng.integers(0, len(X), steps["batch_size"]))
        logits = twin(X[rows])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, config.vocab_size),
                                                 Y[rows].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    twin.eval()
    with torch.no_grad():
        result = score(task, lambda idx: twin(torch.from_numpy(idx)).numpy(), arrays)
    return result, time.process_time() - start


def _torch_groups(model: GPT, twin) -> list[dict]:
    """``weight_decay_groups`` of the reference, as the twin's parameters."""
    return [{"params": [twin.get_parameter(name) for name, param in model.named_parameters()
                        if any(param is p for p in group["params"])],
             "weight_decay": group["weight_decay"]} for group in weight_decay_groups(model, 0.1)]


def _schedule(steps: int, warmup: int) -> WarmupCosineLR:
    """The recipe's schedule, whose ``lr_at`` gives PyTorch's LambdaLR the same factors."""
    return WarmupCosineLR(AdamW([Parameter(np.zeros(1))]), warmup_steps=warmup,
                          total_steps=steps)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--recipe", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()
    threads, dtype = limit_threads(args.threads), np.dtype(args.dtype).type
    print(f"Unit 16's graded runs, {args.dtype}, {threads}; score: exact match (sorter), NLL "
          f"per character on the grader's held-out names (namer). {machine()}")
    rows = []
    arrays = {task: samples(task) for task in TASKS}
    for recipe in args.recipe:
        rows += [(recipe, task, seed, *_measured(task, RECIPES[recipe][task], seed, dtype,
                                                 arrays[task]))
                 for task in TASKS for seed in args.seeds]
    print(table(("recipe", "task", "seed", "reference", "pytorch", "reference CPU s",
                 "pytorch CPU s", "reference / pytorch"), rows))


def _measured(task: str, recipe: tuple, seed: int, dtype: type, arrays: dict) -> tuple[str, ...]:
    """One row's figures: both scores, both CPU times and their ratio."""
    ours, ours_s = reference_run(task, recipe, seed, dtype, arrays)
    theirs, theirs_s = torch_run(task, recipe, seed, dtype, arrays) if torch_available() \
        else (float("nan"), float("nan"))
    return (f"{ours:.4f}", f"{theirs:.4f}", f"{ours_s:.1f}", f"{theirs_s:.1f}",
            f"{ours_s / theirs_s:.2f}x")


if __name__ == "__main__":
    main()
