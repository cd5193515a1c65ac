"""The functions and classes that only a notebook defines, taken from its solution cells.

Unit 1's ``affine``, unit 9's ``train_epoch``, unit 11's ``confusion_matrix``, unit
12's ``cross_entropy`` and ``TensorMLP``, unit 13's ``conv2d_naive``, unit 14's bigram and sampler
unit 15's ``TransformerBlock`` (on the notebook's read-only ``MultiheadAttention`` and
``FeedForward``, run from their cells) and unit 16's ``GPT`` (on that ``TransformerBlock``,
with the notebook's names) and generation have no twin in
``minitorch_ref``: the audit
grades the source notebook's own solution (every solution cell that defines one of them,
run together with numpy and, for unit 12, the reference ``Tensor``), so the checks are
proved on the code students are compared with, never a copy. Unit 6's read-only
``GaussianNoise`` and ``Standardize``, which its checks take, come from their provided
cells, on the reference's ``Module``. Unit 13's ``Conv2d`` is run from its solution only to
be rebuilt on a buggy ``im2col`` or ``col2im`` (``solution_with``), as a notebook's is; its
read-only input checks (``GIVEN``) run first.
"""
from __future__ import annotations

import functools
import re

import numpy as np
from scipy import special

from numpy.lib.stride_tricks import sliding_window_view

from minitorch_ref import nn
from minitorch_ref.optim import lr_scheduler
from minitorch_ref.autograd import Tensor
from autograder.notebooks.sync import reference_code
from autograder.notebooks.units import Unit, is_solution, nbgrader, read

FUNCTIONS = {
    "01_setup": ("affine", "standardize", "pairwise_sq_distances"),
    "06_sequential": ("GaussianNoise", "Standardize"),
    "09_training": ("train_epoch", "evaluate", "fit", "StepLR", "ExponentialLR", "LambdaLR",
                    "LinearLR", "CosineAnnealingLR", "WarmupCosineLR"),
    "11_capstone": ("confusion_matrix",),
    "12_autograd": ("cross_entropy", "TensorMLP"),
    "13_conv": ("conv2d_naive", "im2col", "col2im", "Conv2d"),
    "14_language": ("bigram_counts", "bigram_nll", "next_token_probabilities", "sample"),
    "15_attention": ("TransformerBlock",),
    "16_gpt": ("GPT", "next_token_distribution", "generate"),
}
# What a unit's solution cells use from its earlier, unsolved cells.
GLOBALS = {"06_sequential": {"Module": nn.Module, "Parameter": nn.Parameter,
                             "default_rng": np.random.default_rng},
           "09_training": {"LRScheduler": lr_scheduler.LRScheduler},
           "12_autograd": {"Tensor": Tensor},
           "13_conv": {"Module": nn.Module, "Parameter": nn.Parameter,
                       "default_rng": np.random.default_rng,
                       "sliding_window_view": sliding_window_view},
           "14_language": {"default_rng": np.random.default_rng},
           "15_attention": {"Module": nn.Module, "Parameter": nn.Parameter, "Linear": nn.Linear,
                            "GELU": nn.GELU, "Dropout": nn.Dropout, "LayerNorm": nn.LayerNorm,
                            "ScaledDotProductAttention": nn.ScaledDotProductAttention,
                            "split_heads": nn.split_heads, "merge_heads": nn.merge_heads,
                            "default_rng": np.random.default_rng},
           "16_gpt": {"Module": nn.Module, "Embedding": nn.Embedding, "Sequential": nn.Sequential,
                      "LayerNorm": nn.LayerNorm, "default_rng": np.random.default_rng,
                      "softmax": special.softmax}}
# The read-only cells (grade ids) a unit's solutions call: run before them.
GIVEN = {"13_conv": ("conv-helpers",), "15_attention": ("multihead", "feed-forward"),
         "16_gpt": ("gpt2-init",)}
# Units whose classes above are given, read-only, rather than written by the student.
PROVIDED = ("06_sequential",)
# Units whose solutions use an earlier unit's classes above (unit 16's GPT is built of unit
# 15's TransformerBlock, provided there from unit 15's source).
BUILDS_ON = {"16_gpt": "15_attention"}


@functools.cache
def _namespace(unit: str) -> dict[str, object]:
    return _executed(unit, {})


def _executed(unit: str, given: dict[str, object]) -> dict[str, object]:
    """The unit's solution (or, in ``PROVIDED`` units, read-only) cells that define its graded
    functions, run in one namespace holding ``given`` (a base class they subclass), which
    stays there (what their code looks up when called, e.g. the ``train_epoch`` that ``fit``
    calls, over the cells' own)."""
    defines = re.compile(rf"^(def|class) ({'|'.join(FUNCTIONS[unit])})\b", re.MULTILINE)
    namespace: dict[str, object] = {"np": np, "__name__": f"solutions_{unit}",
                                    **GLOBALS.get(unit, {}), **_built_on(unit), **given}
    given_cells = GIVEN.get(unit, ())
    for cell in read(Unit(unit).source).cells:
        if (cell.cell_type == "code" and (is_solution(cell) or unit in PROVIDED)
                and defines.search(cell.source)) or nbgrader(cell).get("grade_id") in given_cells:
            exec(compile(reference_code(cell.source), f"<{unit} solution>", "exec"), namespace)
    namespace.update(given)
    return namespace


def _built_on(unit: str) -> dict[str, object]:
    """The earlier unit's classes that ``unit``'s solutions use (``BUILDS_ON``)."""
    if unit not in BUILDS_ON:
        return {}
    earlier = BUILDS_ON[unit]
    return {name: _namespace(earlier)[name] for name in FUNCTIONS[earlier]}


def _unit_of(name: str) -> str:
    for unit, names in FUNCTIONS.items():
        if name in names:
            return unit
    raise LookupError(f"no notebook solution named {name!r}")


def solution(name: str) -> object:
    """The source notebook's solution of the function (or class) ``name``; LookupError if none."""
    return _namespace(_unit_of(name))[name]


def solution_with(name: str, **given: object) -> object:
    """The solution of ``name`` from a fresh run of its unit's cells in which the names
    ``given`` are replaced: ``solution_with("fit", train_epoch=buggy)`` is a ``fit`` that
    calls ``buggy``, as a notebook's fit calls the notebook's own train_epoch."""
    return _executed(_unit_of(name), given)[name]
