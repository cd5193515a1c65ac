"""The benchmarks' own contenders compute what they claim to (bench/ is timed, not tested,
elsewhere): the numexpr Adam that bench/mlp.py times against the fused numpy step."""
from __future__ import annotations

import numpy as np
import pytest

from bench.numexpr_adam import numexpr_adam_step
from minitorch_ref import nn, optim


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_the_benchmarked_numexpr_adam_matches_the_plain_step(dtype, rtol):
    rng = np.random.default_rng(2)
    param = nn.Parameter(rng.standard_normal((5, 4)).astype(dtype))
    optimizer = optim.Adam([param], lr=0.1, betas=(0.5, 0.9), eps=1e-3)
    weight, state = param.data.copy(), {"step": 0, "exp_avg": 0 * param.data,
                                        "exp_avg_sq": 0 * param.data}
    for _ in range(12):
        param.grad[...] = rng.standard_normal(param.shape)
        optimizer.step()
        numexpr_adam_step(weight, param.grad, optimizer.param_groups[0], state)
    assert weight.dtype == dtype
    np.testing.assert_allclose(weight, param.data, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(state["exp_avg_sq"], optimizer.state[param]["exp_avg_sq"], rtol=rtol)
