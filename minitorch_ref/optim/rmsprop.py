"""RMSprop: divide the gradient by a running root-mean-square of its history."""
from __future__ import annotations

import numpy as np

from minitorch_ref.optim.optimizer import Optimizer


class RMSprop(Optimizer):
    r"""RMSprop (Hinton) as in PyTorch, with :math:`g = \nabla_w L + \lambda w`:

    :math:`s \leftarrow \alpha s + (1-\alpha) g^2`; the denominator is
    :math:`d = \sqrt{s} + \epsilon`, or when ``centered``
    :math:`d = \sqrt{s - \bar g^2} + \epsilon` with :math:`\bar g \leftarrow \alpha \bar g + (1-\alpha) g`.
    Then :math:`w \leftarrow w - \eta g / d`, or with momentum
    :math:`b \leftarrow \mu b + g/d`, :math:`w \leftarrow w - \eta b`.

    Args:
        params: parameters or parameter groups.
        lr: learning rate :math:`\eta` (PyTorch's default 1e-2).
        alpha: smoothing constant :math:`\alpha`.
        eps: :math:`\epsilon`.
        weight_decay: L2 penalty :math:`\lambda`.
        momentum: :math:`\mu`.
        centered: normalise by the estimated variance instead of the second moment.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False) -> None:
        if not 0 <= alpha <= 1:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                         momentum=momentum, centered=centered)

    def _update(self, param, group, state):
        grad = self._with_l2(param, group["weight_decay"])
        alpha = group["alpha"]
        if not state:
            state.update(square_avg=np.zeros_like(param.data),
                         grad_avg=np.zeros_like(param.data),
                         momentum_buffer=np.zeros_like(param.data))
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        mean_square = square_avg
        if group["centered"]:
            state["grad_avg"] *= alpha
            state["grad_avg"] += (1 - alpha) * grad
            mean_square = square_avg - state["grad_avg"] ** 2
        scaled = grad / (np.sqrt(mean_square) + group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += scaled
            scaled = buf
        param.data -= group["lr"] * scaled
