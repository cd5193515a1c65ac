"""The optional fused optimizer path gives the plain path's numbers."""
from __future__ import annotations

import numpy as np
import pytest

from minitorch_ref import nn, optim


def trajectory(cls, fused: bool, dtype, steps: int = 12, groups=list,
               **options) -> list[np.ndarray]:
    """The weights after ``steps`` random gradients; ``groups`` makes the param groups."""
    rng = np.random.default_rng(0)
    params = [nn.Parameter(rng.standard_normal(shape).astype(dtype))
              for shape in ((5, 4), (4,), (2, 2))]
    optimizer = cls(groups(params), fused=fused, **options)
    for _ in range(steps):
        for p in params:
            p.grad[...] = rng.standard_normal(p.shape)
        optimizer.step()
    return [p.data for p in params]


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
@pytest.mark.parametrize("options", [{}, {"lr": 0.1, "weight_decay": 0.05},
                                     {"betas": (0.5, 0.9), "eps": 1e-3}])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_fused_matches_plain(cls, options, dtype, rtol):
    plain = trajectory(cls, False, dtype, **options)
    fused = trajectory(cls, True, dtype, **options)
    for a, b in zip(plain, fused):
        assert b.dtype == dtype
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol)


def test_fused_is_off_by_default_and_recorded_in_the_group():
    param = nn.Parameter(np.zeros(3))
    assert optim.Adam([param]).param_groups[0]["fused"] is None  # PyTorch's default: not fused
    assert optim.AdamW([param], fused=True).param_groups[0]["fused"] is True


def first_moment_after_silence(fused: bool, steps: int) -> tuple[np.ndarray, list[bool]]:
    """Adam on float32 weights whose gradient is nonzero once, then 0 (a dead unit's).

    Returns the final weights and, per step, whether exp_avg held a subnormal float.
    """
    param = nn.Parameter(np.linspace(-1, 1, 6, dtype=np.float32))
    optimizer = optim.Adam([param], fused=fused)
    param.grad[...] = np.linspace(-1e-3, 1e-3, 6)
    subnormal = []
    for _ in range(steps):
        optimizer.step()
        param.grad[...] = 0
        m = optimizer.state[param]["exp_avg"]
        subnormal.append(bool(np.any((m != 0) & (np.abs(m) < np.finfo(np.float32).tiny))))
    return param.data, subnormal


def test_fused_adam_flushes_decaying_first_moments_before_they_turn_subnormal():
    plain_weights, plain_subnormal = first_moment_after_silence(False, 900)
    fused_weights, fused_subnormal = first_moment_after_silence(True, 900)
    assert any(plain_subnormal), "the plain path should reach subnormal first moments here"
    assert not any(fused_subnormal)
    np.testing.assert_allclose(fused_weights, plain_weights, rtol=1e-6, atol=1e-7)


def three_groups(params: list) -> list[dict]:
    """One parameter group each, with its own lr, betas, weight decay and eps."""
    return [{"params": params[:1]},
            {"params": params[1:2], "lr": 0.05, "betas": (0.8, 0.99)},
            {"params": params[2:], "weight_decay": 0.1, "eps": 1e-4}]


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_fused_matches_plain_with_several_parameter_groups(cls, dtype, rtol):
    plain = trajectory(cls, False, dtype, groups=three_groups, lr=0.01)
    for a, b in zip(plain, trajectory(cls, True, dtype, groups=three_groups, lr=0.01)):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_there_is_no_amsgrad_variant_to_fuse(cls):
    with pytest.raises(TypeError, match="amsgrad"):
        cls([nn.Parameter(np.zeros(2))], amsgrad=True, fused=True)
