"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from minitorch_ref.optim.optimizer import Optimizer


class SGD(Optimizer):
    r"""SGD as in PyTorch: with :math:`g = \nabla_w L + \lambda w`,

    - no momentum: :math:`w \leftarrow w - \eta g`;
    - momentum :math:`\mu`: :math:`b \leftarrow \mu b + (1 - \tau) g` (:math:`b = g` on the
      first step), then :math:`w \leftarrow w - \eta b`, or with Nesterov
      :math:`w \leftarrow w - \eta (g + \mu b)`.

    The buffer :math:`b` persists between steps in ``state[param]['momentum_buffer']``.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\eta`.
        momentum: :math:`\mu`.
        dampening: :math:`\tau`.
        weight_decay: L2 penalty :math:`\lambda`.
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
    """

    def __init__(self, params, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)

    def _update(self, param, group, state):
        grad = self._with_l2(param, group["weight_decay"])
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.copy()
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param.data -= group["lr"] * grad
