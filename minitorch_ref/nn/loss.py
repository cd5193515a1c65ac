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


def _check_class_scores(name: str, scores: np.ndarray, target: np.ndarray,
                        ignore_index: int | None = None) -> tuple:
    """Scores of shape (N, C) and integer class targets of shape (N,) in [0, C); a target
    equal to ``ignore_index`` (when given) is allowed anywhere."""
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
    classes = target if ignore_index is None else target[target != ignore_index]
    if classes.size and (classes.min() < 0 or classes.max() >= n_classes):
        ignored = "" if ignore_index is None else f" (or ignore_index={ignore_index})"
        raise ValueError(
            f"{name}: target values must be class indices in [0, {n_classes}){ignored}, "
            f"got values from {classes.min()} to {classes.max()}."
        )
    return scores, target


def _as_rows(name: str, scores: np.ndarray, target: np.ndarray) -> tuple:
    """Scores ``(*, C)`` with targets ``(*)`` as rows ``(M, C)`` and ``(M,)``: every position
    of a batch of sequences is one more sample. Scores of 2 dimensions or fewer pass as they
    are (``_check_class_scores`` judges them)."""
    scores, target = np.asarray(scores), np.asarray(target)
    if scores.ndim <= 2:
        return scores, target
    if target.shape != scores.shape[:-1]:
        raise ValueError(
            f"{name} expected target of shape {scores.shape[:-1]} for scores of shape "
            f"{scores.shape}: scores are (N, C) or (B, T, C), classes last, and the target "
            f"has their shape without the class axis; got {target.shape}."
        )
    return scores.reshape(-1, scores.shape[-1]), target.reshape(-1)


class ClassLoss(Loss):
    """Base of the losses over class scores: the shape mapping, ``ignore_index`` and the
    mean over the targets that count."""

    def __init__(self, reduction: str = "mean", ignore_index: int = -100) -> None:
        super().__init__(reduction)
        self.ignore_index = ignore_index
        self.input_shape = None

    def _rows(self, pred: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Checked ``(M, C)`` scores and ``(M,)`` targets; remembers the input's shape and
        which targets count."""
        self.input_shape = np.shape(pred)
        name = type(self).__name__
        pred, target = _check_class_scores(name, *_as_rows(name, pred, target), self.ignore_index)
        self.kept = target != self.ignore_index
        self.count = int(self.kept.sum())
        return pred, np.where(self.kept, target, 0)   # ignored rows read class 0, then masked

    def _reduce_kept(self, losses: np.ndarray) -> float:
        """The sum, or the mean over the targets that are not ignored (nan if none is)."""
        total = float((losses * self.kept).sum())
        if self.reduction == "sum":
            return total
        return total / self.count if self.count else float("nan")

    def _grad_rows(self, grad: np.ndarray) -> np.ndarray:
        """Per-row gradients scaled by the reduction, ignored rows zeroed, in the input's shape."""
        grad *= self.kept[:, None] * (1.0 if self.reduction == "sum" else 1.0 / max(self.count, 1))
        return grad.reshape(self.input_shape)

    def extra_repr(self) -> str:
        parts = [super().extra_repr()]
        if self.ignore_index != -100:
            parts.append(f"ignore_index={self.ignore_index}")
        return ", ".join(p for p in parts if p)


class CrossEntropyLoss(ClassLoss):
    r"""Softmax and negative log-likelihood fused, on logits :math:`Z`:
    :math:`\ell_n = -\log \mathrm{softmax}(Z_n)_{y_n} = \log\sum_c e^{Z_{nc}} - Z_{n y_n}`.

    With ``label_smoothing`` :math:`\varepsilon`, the target is the mixture
    :math:`q = (1-\varepsilon)\,\mathrm{onehot}(y) + \varepsilon / C` and
    :math:`\ell_n = -\sum_c q_c \log \mathrm{softmax}(Z_n)_c`.
    Gradient: :math:`\mathrm{softmax}(Z) - q`, times 1/N for the mean: this is why
    the model's last layer outputs logits and no Softmax.

    Sequences: logits ``(B, T, C)`` with targets ``(B, T)`` are ``B*T`` samples, each
    position's scores a row, the classes **last** (the course is batch-first). This is
    not PyTorch's ``(N, C, d1)`` layout (classes second): the PyTorch twin is
    ``F.cross_entropy(logits.reshape(-1, C), y.reshape(-1))``, or
    ``F.cross_entropy(logits.transpose(1, 2), y)``.

    Args:
        reduction: ``'mean'`` over the targets that count, or ``'sum'``.
        label_smoothing: :math:`\varepsilon` in ``[0, 1]``.
        ignore_index: a target value that contributes neither loss nor gradient (e.g. a
            padding token); the mean divides by the number of other targets.

    Shape:
        - pred: logits ``(N, C)`` or ``(B, T, C)`` (any leading dimensions)
        - target: integer classes ``(N,)`` or ``(B, T)`` in ``[0, C)`` (or ``ignore_index``)
        - backward: the shape of pred
    """

    def __init__(self, reduction: str = "mean", label_smoothing: float = 0.0,
                 ignore_index: int = -100) -> None:
        super().__init__(reduction, ignore_index)
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        self.label_smoothing = label_smoothing

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = self._rows(pred, target)
        log_probs = special.log_softmax(pred, axis=1)
        self.pred, self.probs, self.target = pred, np.exp(log_probs), target
        self.q = self._smoothed_targets(target, pred.shape[1], pred.dtype)
        return self._reduce_kept(-np.sum(self.q * log_probs, axis=1))

    def _smoothed_targets(self, target: np.ndarray, n_classes: int, dtype) -> np.ndarray:
        eps = self.label_smoothing
        q = np.full((len(target), n_classes), eps / n_classes, dtype=dtype)
        q[np.arange(len(target)), target] += 1 - eps
        return q

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        return self._grad_rows(self.probs - self.q)

    def extra_repr(self) -> str:
        parts = [super().extra_repr()]
        if self.label_smoothing:
            parts.append(f"label_smoothing={self.label_smoothing}")
        return ", ".join(p for p in parts if p)


class NLLLoss(ClassLoss):
    r"""Negative log-likelihood of log-probabilities :math:`A` (e.g. from LogSoftmax):
    :math:`\ell_n = -A_{n y_n}`. Gradient: :math:`-\mathrm{onehot}(y)`, times 1/N for the mean.

    Sequences ``(B, T, C)`` are ``B*T`` rows, classes last, as in ``CrossEntropyLoss``.

    Args:
        reduction: ``'mean'`` over the targets that count, or ``'sum'``.
        ignore_index: a target value that contributes neither loss nor gradient.

    Shape:
        - pred: log-probabilities ``(N, C)`` or ``(B, T, C)``; target: integer classes
          ``(N,)`` or ``(B, T)``.
    """

    def forward(self, pred: np.ndarray, target: np.ndarray) -> float:
        pred, target = self._rows(pred, target)
        self.pred, self.target = pred, target
        return self._reduce_kept(-pred[np.arange(len(pred)), target])

    def backward(self) -> np.ndarray:
        self._require_forward(self.pred)
        grad = np.zeros_like(self.pred)
        grad[np.arange(len(self.pred)), self.target] = -1.0
        return self._grad_rows(grad)
