"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""
from __future__ import annotations

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
        fused: update in place through preallocated buffers (the same numbers, fewer
            temporary arrays: faster on large layers; the plain path is the one to read).
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

    Every ``out=`` writes into an existing array, so no temporary is allocated:
    for large layers the allocations (and page faults) of the plain path cost
    more than the arithmetic. A weight whose gradient stays 0 (a dead ReLU's) has
    its first moment shrink by beta1 per step into subnormal floats, which x86
    computes 10-100x slower; they are flushed to 0, a change below 1e-38.
    """
    beta1, beta2 = group["betas"]
    m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    scratch = state.setdefault("scratch", np.empty_like(weight))
    m *= beta1
    np.multiply(grad, 1 - beta1, out=scratch)
    m += scratch
    np.abs(m, out=scratch)
    m[scratch < np.finfo(m.dtype).tiny] = 0
    v *= beta2
    np.multiply(grad, grad, out=scratch)
    scratch *= 1 - beta2
    v += scratch
    np.sqrt(v, out=scratch)
    scratch *= 1 / math.sqrt(1 - beta2**t)
    scratch += group["eps"]
    np.divide(m, scratch, out=scratch)
    scratch *= group["lr"] / (1 - beta1**t)
    weight -= scratch


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
