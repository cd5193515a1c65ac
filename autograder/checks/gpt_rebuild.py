"""The grader's own forward on a trained GPT's weights: unit 16's graded runs checked against
what the trained model's parameters compute (a review flag, never a point).

The kernel's ``model(idx)`` is the student's code, so a forward that sorts its input by itself
(no trained model) or treats the batch of held-out contexts as data scores what it likes. After
``train_sorter()`` or ``train_namer()`` has returned and the run's CPU time is read, the grader
asks the kernel for the trained model's ``state_dict()`` (arrays: data) and its attention
modules' ``num_heads``, loads them into ``minitorch_ref``'s ``GPT`` in its own process (sizes
inferred from the shapes: ``wte.weight`` (V, C), ``wpe.weight`` (T, C), the blocks' count) in
the dtype of the student's token table, and scores the same problems or names with that forward.
The points stay what the student's own forward earned; the cell is flagged for review when the
own forward does clearly better than the rebuilt one, or when the weights cannot be rebuilt.

Names: the notebook's ``GPT`` keeps its blocks in ``blocks`` and each block's feed-forward in
``feed_forward``; the reference's in ``h`` and in the block itself (``NAME_FORMS``), the rest
(``wte``, ``wpe``, ``norm1``, ``self_attn.in_proj_weight``, ``ln_f``, ...) is the same, weights in
the course's ``(in, out)`` convention in both.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.remote.channel import ChannelError
from autograder.remote.errors import TimeLimitExceeded
from autograder.remote.proxy import Remote, RemoteError
from minitorch_ref.models.gpt import GPT, GPTConfig

# the notebook's parts of a name -> the reference GPT's
NAME_FORMS = ((re.compile(r"^blocks\."), "h."), (re.compile(r"\.feed_forward\."), "."))
SHOWN = 3   # names listed in a message, at most


class CannotRebuild(Exception):
    """The trained model's weights do not fit the reference GPT; the message says which."""


@dataclass(frozen=True)
class Trained:
    """What the kernel said its trained model is: ``state`` (name: array) and ``n_head``, or
    ``problem``, why it said nothing usable."""

    state: dict[str, np.ndarray]
    n_head: int | None
    problem: str | None = None


def fetch(model: Remote) -> Trained:
    """The trained model's ``state_dict()`` and head count, asked in the kernel (its weights
    copied here as data; whatever the kernel does wrong is a reason for review, never a crash)."""
    try:
        state = model.state_dict()
        if isinstance(state, Remote):        # a dict of its own kind (OrderedDict): its items
            state = dict(state.items())
        heads = {module.num_heads for name, module in model.named_modules()
                 if isinstance(name, str) and name.split(".")[-1] == "self_attn"}
    except RemoteError as error:
        return Trained({}, None, f"the trained model's state_dict() or named_modules() raised "
                                 f"{error.type_name}: {error.message}")
    except (TypeError, ValueError):     # not (name, module) pairs, or heads not hashable
        return Trained({}, None, "the trained model's named_modules() are not (name, module) "
                                 "pairs with a number of heads")
    except (TimeLimitExceeded, ChannelError) as error:
        return Trained({}, None, f"the kernel did not give the trained model's weights "
                                 f"({type(error).__name__})")
    if not isinstance(state, dict) or not all(isinstance(key, str) and isinstance(value, np.ndarray)
                                              for key, value in state.items()):
        return Trained({}, None, "the trained model's state_dict() is not a dict of arrays")
    n_head = heads.pop() if len(heads) == 1 and isinstance(next(iter(heads)), int) else None
    return Trained(state, n_head)


def reference_name(name: str) -> str:
    """The reference GPT's name of the notebook's parameter ``name``."""
    for pattern, replacement in NAME_FORMS:
        name = pattern.sub(replacement, name)
    return name


def rebuild(trained: Trained) -> GPT:
    """The reference GPT holding ``trained``'s weights, in evaluation mode.

    Raises:
        CannotRebuild: naming the parameter (the student's name) or size that does not fit.
    """
    if trained.problem is not None:
        raise CannotRebuild(trained.problem)
    state = {reference_name(name): (name, value) for name, value in trained.state.items()}
    for table in ("wte.weight", "wpe.weight"):
        if table not in state or state[table][1].ndim != 2:
            raise CannotRebuild(f"it has no {table} of shape (rows, n_embd): the token and "
                                "position tables GPT-2 names wte and wpe")
    (vocab, width), block = state["wte.weight"][1].shape, state["wpe.weight"][1].shape[0]
    layers = {int(match[1]) for key in state if (match := re.match(r"h\.(\d+)\.", key))}
    if trained.n_head is None or trained.n_head < 1 or width % trained.n_head:
        raise CannotRebuild(f"its attention modules (self_attn) do not give one num_heads that "
                            f"divides n_embd={width}")
    config = GPTConfig(vocab, block, n_layer=len(layers), n_head=trained.n_head, n_embd=width,
                       tie_weights="lm_head.weight" not in state)
    dtype = state["wte.weight"][1].dtype
    model = GPT(config, dtype=dtype if np.issubdtype(dtype, np.floating) else np.float64)
    _check_fits(state, model.state_dict(), config)
    model.load_state_dict({key: value for key, (_, value) in state.items()})
    return model.eval()


def _check_fits(state: dict[str, tuple[str, np.ndarray]], targets: dict[str, np.ndarray],
                config: GPTConfig) -> None:
    """Every name of ``state`` is a parameter of the reference GPT of ``config``, with its
    shape, and none is missing."""
    unexpected = [name for key, (name, _) in state.items() if key not in targets]
    misshaped = [f"{name} {value.shape} (GPT-2's {targets[key].shape})"
                 for key, (name, value) in state.items()
                 if key in targets and value.shape != targets[key].shape]
    missing = [key for key in targets if key not in state]
    sizes = (f"vocab_size={config.vocab_size}, block_size={config.block_size}, "
             f"n_layer={config.n_layer}, n_head={config.n_head}, n_embd={config.n_embd}")
    for problems, what in ((unexpected, "has no place in GPT-2's parameters"),
                           (misshaped, "does not have GPT-2's shape"),
                           (missing, "is missing (the reference GPT's name)")):
        if problems:
            raise CannotRebuild(f"{', '.join(problems[:SHOWN])}{' ...' * (len(problems) > SHOWN)} "
                                f"{what} for {sizes}")


def rebuilt_score(trained: Trained, score: Callable[[Callable[[np.ndarray, str], np.ndarray]],
                                                    float]) -> dict:
    """``score(logits_of)`` with the reference GPT on ``trained``'s weights as ``logits_of``:
    ``{"rebuilt": the score}``, or ``{"not_rebuilt": why}``."""
    try:
        model = rebuild(trained)
    except CannotRebuild as why:
        return {"not_rebuilt": str(why)}
    with np.errstate(all="ignore"):
        return {"rebuilt": score(lambda idx, what: model(idx))}


def review(run, better_by: float, margin: float, scores: str) -> str | None:
    """Why the run's own forward should be looked at, if it should: its weights could not be
    rebuilt, or its own forward scores ``better_by`` (NaN: the rebuilt one scored nothing) more
    than ``margin`` better than the reference forward on them; ``scores`` states both."""
    if "not_rebuilt" in run.figures:
        return (f"the grader cannot rebuild the trained model in GPT-2's reference GPT: "
                f"{run.figures['not_rebuilt']}; check its forward by hand.")
    if better_by <= margin:
        return None
    return (f"the model's own forward {scores}: check whether its forward uses its weights, "
            "or its input or the batch instead (e.g. sorts the digits itself).")
