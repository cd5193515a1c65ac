"""An Adam step evaluated by numexpr: three one-pass expressions instead of 12 numpy passes.

Measured by ``bench.mlp`` (the ``Adam numexpr`` column) against the fused numpy
step it would replace, ``optim.Adam(fused=True)``. Not used by ``minitorch_ref``:
on the benchmark machine numexpr (2.14, no VML) evaluates each operation 2-4x
slower than numpy's SIMD ufuncs, so the three expressions cost more than the 12
passes they replace (see bench/README.md).
"""
from __future__ import annotations

import math

import numexpr
import numpy as np

UPDATE_MOMENTS = ("beta1 * m + (1 - beta1) * g", "beta2 * v + (1 - beta2) * g * g")
UPDATE_WEIGHT = "w - step_size * m / (sqrt(v) + eps)"


def numexpr_adam_step(weight: np.ndarray, grad: np.ndarray, group: dict, state: dict) -> None:
    """One Adam step on ``weight``, in place; ``state`` as ``optim.Adam`` keeps it.

    The bias corrections are folded into two scalars, as in the fused numpy step.
    Scalars are passed in the weight's dtype: numexpr treats Python floats as
    float64 and would compute a float32 update in float64.
    """
    state["step"] += 1
    t, (beta1, beta2), scalar = state["step"], group["betas"], weight.dtype.type
    root_correction = math.sqrt(1 - beta2**t)
    names = {"m": state["exp_avg"], "v": state["exp_avg_sq"], "g": grad, "w": weight,
             "beta1": scalar(beta1), "beta2": scalar(beta2),
             "eps": scalar(group["eps"] * root_correction),
             "step_size": scalar(group["lr"] * root_correction / (1 - beta1**t))}
    for expression, out in zip(UPDATE_MOMENTS, ("m", "v")):
        numexpr.evaluate(expression, local_dict=names, out=names[out])
    numexpr.evaluate(UPDATE_WEIGHT, local_dict=names, out=weight)
