"""Loss functions: a scalar from predictions and targets, and its gradient."""
from __future__ import annotations

import numpy as np
from scipy import special

from minitorch_ref.nn._checks import check_floating
from minitorch_ref.nn.module import Module


class Loss(Module):
    """Base of the losses: ``forward(pred, target) -> float``, ``backward() -> dL/dpred``.

    The per-element (or per-sample) losses are reduced by ``reduction``:
    ``'mean'`` (the default, as in PyTorch) or ``'sum'``. The mean's ``1/N`` is part
    of the loss's gradient, which is why layers never average over the batch.
    """

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum"):
            raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
        self.reduction = reduction
        self.pred = None

    def __call__(self, pred: np.ndarray, target: np.ndarray) -> float:
        return self.forward(pred, target)

    def backward(self) -> np.ndarray:  # type: ignore[override]
        raise NotImplementedError(f"{type(self).__name__} must implement backward()")

    def _reduce(self, losses: np.ndarray) -> float:
        return float(losses.mean() if self.reduction == "mean" else losses.sum())

    def _scale(self, count: int) -> float:
        """d(reduction)/d(each term): 1/count for the mean, 1 for the sum."""
        return 1.0 / count if self.reduction == "mean" else 1.0

    def _check_pair(self, pred: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Same-shape float prediction and target (no silent broadcasting of (N,1) vs (N,))."""
        pred, target = np.asarray(pred), np.asarray(target)
        check_floating(type(self).__name__, pred)
        if pred.shape != target.shape:
            raise ValueError(
                f"{type(self).__name__}: prediction shape {pred.shape} and target shape "
                f"{target.shape} differ; broadcasting them would compute the wrong loss. "
                "Reshape one of them (e.g. y.reshape(-1, 1))."
            )
        return pred, target.astype(pred.dtype, copy=False)

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction='{self.reduction}'"


class MSELoss(Loss):
    r"""Mean squared error :math:`\frac{1}{M}\sum (\hat y - y)^2` over all M elements.

    Gradient: :math:`\frac{2}{M} (\hat y - y)`.

    Shape:
        - pred and target: the same shape, any.
    """

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = self._check_pair(pred, target)
        self.pred, self.diff = pred, pred - target
        return self._reduce(self.diff**2)

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        return 2 * self.diff * self._scale(self.diff.size)


class BCELoss(Loss):
    r"""Binary cross-entropy on probabilities:
    :math:`-[y \log p + (1-y) \log(1-p)]`, each log clamped at -100 as in PyTorch.

    Gradient: :math:`(p - y) / \max(p(1-p), 10^{-12})`, scaled by the reduction.
    Prefer ``BCEWithLogitsLoss`` after a final ``Sigmoid``: it is exact for large logits.

    Shape:
        - pred: probabilities in [0, 1], any shape; target: the same shape.
    """

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = self._check_pair(pred, target)
        if np.any((pred < 0) | (pred > 1)) or np.any(np.isnan(pred)):
            raise ValueError(
                "BCELoss expects probabilities in [0, 1]; got values from "
                f"{np.nanmin(pred):.4g} to {np.nanmax(pred):.4g}. Apply a Sigmoid first, "
                "or use BCEWithLogitsLoss on raw scores."
            )
        self.pred, self.target = pred, target
        with np.errstate(divide="ignore"):
            log_p = np.maximum(np.log(pred), -100)
            log_1mp = np.maximum(np.log1p(-pred), -100)
        return self._reduce(-(target * log_p + (1 - target) * log_1mp))

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        p, y = self.pred, self.target
        return (p - y) / np.maximum(p * (1 - p), 1e-12) * self._scale(p.size)


class BCEWithLogitsLoss(Loss):
    r"""Sigmoid and binary cross-entropy in one stable step, on raw scores :math:`x`:
    :math:`\ell = (1-y)x + w\,[\log(1 + e^{-|x|}) + \max(-x, 0)]`, :math:`w = 1 + (\text{pos\_weight}-1)y`.

    Gradient: :math:`w\sigma(x) - \text{pos\_weight}\cdot y` (:math:`\sigma(x) - y` without pos_weight).

    Args:
        pos_weight: weight of the positive examples, a scalar or one per column.

    Shape:
        - pred: logits, any shape; target: the same shape, values in [0, 1].
    """

    def __init__(self, reduction: str = "mean", pos_weight: np.ndarray | float | None = None):
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = self._check_pair(pred, target)
        self.pred, self.target = pred, target
        pos_weight = 1.0 if self.pos_weight is None else np.asarray(self.pos_weight)
        self.log_weight = 1 + (pos_weight - 1) * target
        softplus_neg = np.logaddexp(0, -pred)  # log(1 + e^{-x}), stable
        return self._reduce((1 - target) * pred + self.log_weight * softplus_neg)

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        pos_weight = 1.0 if self.pos_weight is None else np.asarray(self.pos_weight)
        grad = self.log_weight * special.expit(self.pred) - pos_weight * self.target
        return grad * self._scale(self.pred.size)


def _check_class_scores(name: str, scores: np.ndarray, target: np.ndarray) -> tuple:
    """Scores of shape (N, C) and integer class targets of shape (N,) in [0, C)."""
    scores, target = np.asarray(scores), np.asarray(target)
    check_floating(name, scores)
    if scores.ndim != 2:
        raise ValueError(f"{name} expected scores of shape (N, C), got {scores.shape}.")
    if not np.issubdtype(target.dtype, np.integer):
        raise ValueError(
            f"{name} expected integer class indices as target, got dtype {target.dtype}. "
            "Use y.astype(int); one-hot targets are not supported."
        )
    if target.shape != (len(scores),):
        raise ValueError(
            f"{name} expected target of shape ({len(scores)},) for scores of shape "
            f"{scores.shape}, got {target.shape}."
        )
    n_classes = scores.shape[1]
    if target.size and (target.min() < 0 or target.max() >= n_classes):
        raise ValueError(
            f"{name}: target values must be class indices in [0, {n_classes}), "
            f"got values from {target.min()} to {target.max()}."
        )
    return scores, target


class CrossEntropyLoss(Loss):
    r"""Softmax and negative log-likelihood fused, on logits :math:`Z`:
    :math:`\ell_n = -\log \mathrm{softmax}(Z_n)_{y_n} = \log\sum_c e^{Z_{nc}} - Z_{n y_n}`.

    With ``label_smoothing`` :math:`\varepsilon`, the target is the mixture
    :math:`q = (1-\varepsilon)\,\mathrm{onehot}(y) + \varepsilon / C` and
    :math:`\ell_n = -\sum_c q_c \log \mathrm{softmax}(Z_n)_c`.
    Gradient: :math:`\mathrm{softmax}(Z) - q`, times 1/N for the mean: this is why
    the model's last layer outputs logits and no Softmax.

    Shape:
        - pred: logits ``(N, C)``; target: integer classes ``(N,)`` in ``[0, C)``.
    """

    def __init__(self, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        self.label_smoothing = label_smoothing

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = _check_class_scores("CrossEntropyLoss", pred, target)
        log_probs = special.log_softmax(pred, axis=1)
        self.pred, self.probs, self.target = pred, np.exp(log_probs), target
        self.q = self._smoothed_targets(target, pred.shape[1], pred.dtype)
        return self._reduce(-np.sum(self.q * log_probs, axis=1))

    def _smoothed_targets(self, target: np.ndarray, n_classes: int, dtype) -> np.ndarray:
        eps = self.label_smoothing
        q = np.full((len(target), n_classes), eps / n_classes, dtype=dtype)
        q[np.arange(len(target)), target] += 1 - eps
        return q

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        return (self.probs - self.q) * self._scale(len(self.pred))

    def extra_repr(self) -> str:
        parts = [super().extra_repr()]
        if self.label_smoothing:
            parts.append(f"label_smoothing={self.label_smoothing}")
        return ", ".join(p for p in parts if p)


class NLLLoss(Loss):
    r"""Negative log-likelihood of log-probabilities :math:`A` (e.g. from LogSoftmax):
    :math:`\ell_n = -A_{n y_n}`. Gradient: :math:`-\mathrm{onehot}(y)`, times 1/N for the mean.

    Shape:
        - pred: log-probabilities ``(N, C)``; target: integer classes ``(N,)``.
    """

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = _check_class_scores("NLLLoss", pred, target)
        self.pred, self.target = pred, target
        return self._reduce(-pred[np.arange(len(pred)), target])

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        grad = np.zeros_like(self.pred)
        grad[np.arange(len(self.pred)), self.target] = -self._scale(len(self.pred))
        return grad
