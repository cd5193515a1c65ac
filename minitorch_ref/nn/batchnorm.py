"""BatchNorm1d: normalise each feature over the batch."""
from __future__ import annotations

import numpy as np

from minitorch_ref.nn._checks import check_features, check_same_shape
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.parameter import Parameter


class BatchNorm1d(Module):
    r"""Batch normalisation over a batch of row vectors.

    Training: with the batch mean :math:`\mu` and *biased* variance
    :math:`\sigma^2` of each feature,
    :math:`\hat X = (X - \mu) / \sqrt{\sigma^2 + \epsilon}`, :math:`Y = \gamma \hat X + \beta`,
    and the running estimates move towards the batch's:
    ``running = (1 - momentum) * running + momentum * batch``, using the *unbiased*
    variance :math:`\sigma^2 N/(N-1)` (``momentum=None``: a cumulative average).
    Eval: the running estimates replace the batch statistics.

    Backward in training (the batch statistics depend on every row), with
    :math:`G = \partial L/\partial \hat X = \gamma \, \partial L/\partial Y`:
    :math:`\partial L/\partial X = \frac{1}{N\sqrt{\sigma^2+\epsilon}}
    (N G - \sum_n G_n - \hat X \sum_n G_n \odot \hat X_n)`.

    Args:
        num_features: number of features ``C``.
        eps: added to the variance for numerical stability.
        momentum: weight of the newest batch in the running estimates, or None.
        affine: whether to learn ``weight`` (gamma, ones) and ``bias`` (beta, zeros).
        track_running_stats: if False, batch statistics are used in eval too.

    Shape:
        - Input: ``(N, C)``; Output: ``(N, C)``.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: type = np.float64) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype=dtype)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", np.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.x_hat = self.inv_std = None
        self.used_batch_stats = None

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = check_features("BatchNorm1d", x, self.num_features)
        self.used_batch_stats = self.training or not self.track_running_stats
        if self.used_batch_stats:
            mean, var = self._batch_statistics(x)
        else:
            mean, var = self.running_mean, self.running_var
        self.inv_std = 1.0 / np.sqrt(var + self.eps)
        self.x_hat = (x - mean) * self.inv_std
        if not self.affine:
            return self.x_hat
        return self.x_hat * self.weight.data + self.bias.data

    def _batch_statistics(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(x)
        if n < 2:
            fix = "call model.eval()" if self.track_running_stats else "use track_running_stats=True"
            raise ValueError(
                f"BatchNorm1d expected more than 1 value per channel to compute batch "
                f"statistics, got input of shape {x.shape}. Use a batch of 2 or more, or {fix}."
            )
        mean, var = x.mean(axis=0), x.var(axis=0)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var * n / (n - 1))
        return mean, var

    def _update_running_stats(self, mean: np.ndarray, unbiased_var: np.ndarray) -> None:
        self.num_batches_tracked = self.num_batches_tracked + 1
        m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean
        self.running_var = (1 - m) * self.running_var + m * unbiased_var

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        self._require_forward(self.x_hat)
        check_same_shape("BatchNorm1d.backward", "grad_output", grad_output, self.x_hat.shape)
        g = grad_output
        if self.affine:
            self.weight.grad += np.sum(grad_output * self.x_hat, axis=0)
            self.bias.grad += np.sum(grad_output, axis=0)
            g = grad_output * self.weight.data
        if not self.used_batch_stats:
            return g * self.inv_std
        n = len(g)
        return (self.inv_std / n) * (
            n * g - g.sum(axis=0) - self.x_hat * np.sum(g * self.x_hat, axis=0)
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )
