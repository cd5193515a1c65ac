"""Check of unit 16's ``weight_decay_groups``: AdamW's parameter groups, decay on matrices only.

The groups hold the student's model's own ``Parameter`` objects; the check compares them, by
identity, with the model's ``named_parameters()``, and names each parameter in the wrong group.
"""
from __future__ import annotations

from autograder.checks.gpt import HEADS, LAYERS, VOCAB, BLOCK, WIDTH
from autograder.sandbox import call, construct
from autograder.registry import check
from course.testing.failure import expect, fail

DECAY = 0.1


def _group(groups, index: int, decay: float) -> list:
    """The ``params`` of group ``index``, after checking its ``weight_decay``."""
    group = groups[index]
    expect(isinstance(group, dict) and "params" in group,
           f"group {index} should be a dict with the keys 'params' and 'weight_decay', got {group!r}.")
    given = group.get("weight_decay")
    expect(isinstance(given, (int, float)) and abs(float(given) - decay) < 1e-12,
           f"group {index} should have 'weight_decay': {decay}, got {given!r}.")
    return list(group["params"])


def _misplaced(params: list, named: list, decayed: bool) -> list[str]:
    """The names of the model's parameters that belong in this group and are missing."""
    return [name for name, param in named
            if (param.data.ndim >= 2) == decayed and not any(p is param for p in params)]


@check
def gpt_weight_decay_groups(weight_decay_groups, GPT):
    """weight_decay_groups(model, 0.1) on a GPT gives two groups: every parameter with ndim >= 2
    (the matrices, both embedding tables) with weight_decay 0.1, then every other one (biases,
    LayerNorm weights) with 0.0; each parameter exactly once."""
    model = construct(GPT, VOCAB, BLOCK, n_layer=LAYERS, n_head=HEADS, n_embd=WIDTH)
    named = list(call("GPT.named_parameters", model.named_parameters))
    groups = call(f"weight_decay_groups(model, {DECAY})", weight_decay_groups, model, DECAY)
    expect(isinstance(groups, (list, tuple)) and len(groups) == 2,
           f"weight_decay_groups should return a list of two groups, got {groups!r}.")
    decayed, kept = _group(groups, 0, DECAY), _group(groups, 1, 0.0)
    for params, is_decayed, where in ((decayed, True, "first"), (kept, False, "second")):
        missing = _misplaced(params, named, is_decayed)
        if missing:
            kind = "matrices and tables (ndim >= 2)" if is_decayed else "biases and LayerNorm weights (ndim < 2)"
            fail(f"the {where} group should hold every one of the {kind}; missing: "
                 f"{', '.join(missing)}." + ("" if is_decayed else " Decaying a gain or an offset "
                                             "towards 0 is no regularisation."))
    expect(len(decayed) + len(kept) == len(named),
           f"the groups hold {len(decayed) + len(kept)} parameters, the model has {len(named)}: "
           "list each parameter exactly once.")
