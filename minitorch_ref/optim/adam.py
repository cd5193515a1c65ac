"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""
from __future__ import annotations

import functools
import math

import numpy as np

from minitorch_ref.optim.optimizer import Optimizer


class Adam(Optimizer):
    r"""Adam (Kingma & Ba) as in PyTorch. At step :math:`t`, with :math:`g = \nabla_w L + \lambda w`:

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`,
    :math:`w \leftarrow w - \eta \frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon}`.

    The bias corrections undo the zero initialisation of :math:`m` and :math:`v`.
    ``weight_decay`` here is an L2 term added to the gradient; for decoupled decay
    use ``AdamW``.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\eta`.
        betas: :math:`(\beta_1, \beta_2)`.
        eps: :math:`\epsilon`, added to the denominator.
        weight_decay: L2 penalty :math:`\lambda`.
        fused: update in place through preallocated buffers (the same numbers up to
            rounding, no temporary arrays: faster on large layers; the plain path is
            the one to read).
            None (the default, as in PyTorch) means False.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, fused: bool | None = None) -> None:
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"Invalid betas {betas}: each must be in [0, 1)")
        if eps < 0 or weight_decay < 0:
            raise ValueError(f"Invalid eps={eps} or weight_decay={weight_decay} (must be >= 0)")
        super().__init__(params, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                         fused=fused)

    def _gradient(self, param, group) -> np.ndarray:
        """Adam folds weight decay into the gradient (L2 regularisation)."""
        return self._with_l2(param, group["weight_decay"])

    def _update(self, param, group, state):
        grad = self._gradient(param, group)
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param.data),
                         exp_avg_sq=np.zeros_like(param.data))
        state["step"] += 1
        step = _fused_step if group["fused"] else _plain_step
        step(param.data, grad, group, state)


def _plain_step(weight: np.ndarray, grad: np.ndarray, group: dict, state: dict) -> None:
    """The Adam update as the formulas read."""
    beta1, beta2 = group["betas"]
    m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    m *= beta1
    m += (1 - beta1) * grad
    v *= beta2
    v += (1 - beta2) * grad * grad
    step_size = group["lr"] / (1 - beta1**t)
    denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + group["eps"]
    weight -= step_size * m / denom


def _fused_step(weight: np.ndarray, grad: np.ndarray, group: dict, state: dict) -> None:
    """``_plain_step`` computed in place through one scratch buffer per parameter.

    Optional fast path, not the code to mirror. Every ``out=`` writes into an
    existing array, so no temporary is allocated (for large layers the allocations
    and page faults of the plain path cost more than the arithmetic), and the two
    bias corrections are folded into scalars, ``w -= s m / (sqrt(v) + eps')`` with
    ``s = lr sqrt(1-beta2^t) / (1-beta1^t)`` and ``eps' = eps sqrt(1-beta2^t)``: 12
    passes over the parameter, none allocating. Subnormal first moments are
    flushed to 0 (``_flush_subnormals``).
    """
    beta1, beta2 = group["betas"]
    m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    if "scratch" not in state:
        state["scratch"] = np.empty_like(weight)
    scratch = state["scratch"]
    m *= beta1
    np.multiply(grad, 1 - beta1, out=scratch)
    m += scratch
    v *= beta2
    np.multiply(grad, grad, out=scratch)
    scratch *= 1 - beta2
    v += scratch
    root_correction = math.sqrt(1 - beta2**t)
    np.sqrt(v, out=scratch)
    scratch += group["eps"] * root_correction
    np.divide(m, scratch, out=scratch)
    scratch *= group["lr"] * root_correction / (1 - beta1**t)
    weight -= scratch
    if t % _flush_interval(beta1) == 0:
        _flush_subnormals(m, scratch)


@functools.cache   # asked every step for every parameter: two logs each time otherwise
def _flush_interval(beta1: float) -> int:
    """Steps after which a first moment left alone has shrunk by at most 1e6 (beta1^k >= 1e-6)."""
    return max(1, int(math.log(1e-6) / math.log(beta1))) if beta1 > 0 else 1 << 62


def _flush_subnormals(m: np.ndarray, scratch: np.ndarray) -> None:
    """Set to 0 the entries of ``m`` that could turn subnormal before the next flush.

    A weight whose gradient stays 0 (a dead ReLU's, an always-blank pixel's) has its
    first moment shrink by beta1 per step into subnormal floats, which x86 computes
    10-100x slower. Every ``_flush_interval`` steps, entries below 1e6 times the
    smallest normal float (about 1e-32 in float32) are set to 0, which changes a
    weight's update by less than ``lr * 1e-22`` (with the default eps); an entry
    above that bound cannot decay past the smallest normal float before the next flush.
    """
    np.abs(m, out=scratch)
    m[scratch < np.finfo(m.dtype).tiny * 1e6] = 0


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): before the Adam step,
    :math:`w \leftarrow w (1 - \eta\lambda)`, and the gradient is left alone.

    Unlike L2 in Adam, the decay is not divided by :math:`\sqrt{v}`, so every weight
    shrinks at the same relative rate. Default ``weight_decay=1e-2`` as in PyTorch.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         fused=fused)

    def _gradient(self, param, group) -> np.ndarray:
        param.data *= 1 - group["lr"] * group["weight_decay"]
        return param.grad
