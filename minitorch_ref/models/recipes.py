"""Unit 16's two GPTs: their sizes, their steps and one training loop.

``SORTER`` sorts six digits (vocabulary 10, context 11) and ``NAMER`` models first names
(unit 14's 27 tokens, context 16): the reference's own runs, larger and longer than the
notebook's, the figures the grader's thresholds are set against
(``autograder.checks.gpt_training``). ``GRADED_SORTER`` and ``GRADED_NAMER`` (and their ``_STEPS``) are the sizes and
steps of the notebook's solution (``build_sorter``/``train_sorter``, ``build_namer``/
``train_namer``), the runs a student who writes the solution hands in. All train with
``train_gpt``: AdamW over ``weight_decay_groups``, linear warm-up then cosine decay,
``clip_grad_norm_`` at 1, random mini-batches.
"""
from __future__ import annotations

import numpy as np

from minitorch_ref.models.gpt import GPT, GPTConfig
from minitorch_ref.nn.loss import CrossEntropyLoss
from minitorch_ref.nn.utils.clip_grad import clip_grad_norm_
from minitorch_ref.optim.adam import AdamW
from minitorch_ref.optim.groups import weight_decay_groups
from minitorch_ref.optim.lr_scheduler import WarmupCosineLR

SORTER = GPTConfig(vocab_size=10, block_size=11, n_layer=2, n_head=4, n_embd=48)
NAMER = GPTConfig(vocab_size=27, block_size=16, n_layer=2, n_head=4, n_embd=64)
SORTER_STEPS = dict(steps=300, batch_size=64, warmup=50)
NAMER_STEPS = dict(steps=1500, batch_size=32, warmup=100)
GRADED_SORTER = GPTConfig(vocab_size=10, block_size=11, n_layer=2, n_head=4, n_embd=32)
GRADED_NAMER = GPTConfig(vocab_size=27, block_size=16, n_layer=2, n_head=4, n_embd=48)
GRADED_SORTER_STEPS = dict(steps=200, batch_size=64, lr=1e-2, warmup=20)
GRADED_NAMER_STEPS = dict(steps=800, batch_size=32, warmup=100)
LOG_EVERY = 100      # steps per entry of the history


def build(config: GPTConfig) -> GPT:
    """The untrained GPT of ``config``, in float32 (half the time of float64, the same losses
    to three decimals on these tasks)."""
    return GPT(config, dtype=np.float32)


def train_gpt(model: GPT, X: np.ndarray, Y: np.ndarray, steps: int, batch_size: int,
              lr: float = 3e-3, warmup: int = 50, val: tuple | None = None) -> dict:
    """Train ``model`` in place on token sequences and their targets (-100: not counted).

    Args:
        model: a module mapping ``(B, T)`` tokens to ``(B, T, V)`` logits, with ``backward``.
        X, Y: the inputs and targets, ``(N, T)`` each.
        steps: optimizer steps, each on ``batch_size`` rows drawn at random.
        lr, warmup: the peak learning rate and the steps of linear warm-up before the cosine.
        val: ``(X_val, Y_val)`` to measure the loss on at every entry of the history.

    Returns:
        The history, a dict of lists with ``train_loss``, the mean loss of every
        ``LOG_EVERY`` steps (and of the last few), and with ``val`` the validation loss at the
        same steps (``val_loss``).
    """
    optimizer = AdamW(weight_decay_groups(model, 0.1), lr=lr, betas=(0.9, 0.99))
    scheduler = WarmupCosineLR(optimizer, warmup_steps=warmup, total_steps=steps)
    criterion = CrossEntropyLoss()
    rng = np.random.default_rng(0)
    history = {"train_loss": []} if val is None else {"train_loss": [], "val_loss": []}
    losses = []
    model.train()
    for step in range(steps):
        rows = rng.integers(0, len(X), batch_size)
        losses.append(criterion(model(X[rows]), Y[rows]))
        optimizer.zero_grad()
        model.backward(criterion.backward())
        clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if (step + 1) % LOG_EVERY == 0 or step + 1 == steps:
            history["train_loss"].append(float(np.mean(losses)))
            losses = []
            if val is not None:
                history["val_loss"].append(_loss(model, criterion, *val))
    return history


def _loss(model: GPT, criterion: CrossEntropyLoss, X: np.ndarray, Y: np.ndarray) -> float:
    model.eval()
    loss = float(criterion(model(X), Y))
    model.train()
    return loss
