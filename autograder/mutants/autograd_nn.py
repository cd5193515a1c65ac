"""The bonus unit's ``cross_entropy`` and ``TensorMLP`` with one classic bug each; ``TensorMLP``
mutants subclass the source notebook's own solution (``_solutions``), so each differs from it
in one place. Every one works on any Tensor class, as a student's does on theirs."""
from __future__ import annotations

import numpy as np

from autograder.mutants import Mutant
from autograder.mutants._solutions import solution


def _cross_entropy(shift_axis: int | None = 1, reduce: str = "mean", pick: bool = True,
                   log_of_mean: bool = False, sign: float = 1.0):
    """A cross_entropy with one step changed: the shift's axis (None: no shift), the batch
    reduction, whether the true class's score is subtracted, log of the mean of exp."""
    def cross_entropy(logits, target):
        scores = np.asarray(logits.data)
        shifted = logits if shift_axis is None else \
            logits - scores.max(axis=shift_axis, keepdims=True)
        exps = shifted.exp()
        log_sum_exp = (exps.mean(axis=1) if log_of_mean else exps.sum(axis=1)).log()
        losses = log_sum_exp
        if pick:
            losses = losses - (shifted * np.eye(scores.shape[1])[target]).sum(axis=1)
        losses = losses * sign
        return losses.sum() if reduce == "sum" else losses.mean()
    return cross_entropy


def _mlp(relu_last: bool = False, relu_between: bool = True, bias: bool = True,
         relu_input: bool = False, detached: bool = False) -> type:
    """The notebook's TensorMLP with one classic mistake in ``__call__``."""
    class TensorMLP(solution("TensorMLP")):
        def __call__(self, X):
            Tensor = type(self.layers[0][0])
            h = Tensor(X)
            if relu_input:
                h = h.relu()
            for i, (W, b) in enumerate(self.layers):
                if detached:
                    W, b = Tensor(W.data), Tensor(b.data)
                h = h @ W + b if bias else h @ W
                if relu_last or (relu_between and i < len(self.layers) - 1):
                    h = h.relu()
            return h
    return TensorMLP


MUTANTS = [
    Mutant("cross_entropy_summed", "cross_entropy", _cross_entropy(reduce="sum"),
           "summed over the batch", "sum instead of mean over the batch"),
    Mutant("cross_entropy_no_shift", "cross_entropy", _cross_entropy(shift_axis=None),
           "exp overflows", "no max subtraction: inf for logits of 1000"),
    Mutant("cross_entropy_column_shift", "cross_entropy", _cross_entropy(shift_axis=0),
           "constant within a row", "max over axis 0"),
    Mutant("cross_entropy_no_target", "cross_entropy", _cross_entropy(pick=False),
           "true class", "the target's score never subtracted"),
    Mutant("cross_entropy_log_mean", "cross_entropy", _cross_entropy(log_of_mean=True),
           "mean of exp", "log(mean(exp)) instead of log(sum(exp))"),
    Mutant("cross_entropy_sign", "cross_entropy", _cross_entropy(sign=-1.0),
           "sign is flipped", "score - log-sum-exp"),
    Mutant("tensor_mlp_relu_last", "TensorMLP", _mlp(relu_last=True),
           "follows the last layer", "ReLU on the logits"),
    Mutant("tensor_mlp_no_relu", "TensorMLP", _mlp(relu_between=False),
           "no ReLU between", "a purely linear network"),
    Mutant("tensor_mlp_no_bias", "TensorMLP", _mlp(bias=False), "biases are left out",
           "h @ W without + b"),
    Mutant("tensor_mlp_relu_input", "TensorMLP", _mlp(relu_input=True),
           "before the first layer", "ReLU applied to X"),
    Mutant("tensor_mlp_detached", "TensorMLP", _mlp(detached=True), "no gradient reached",
           "new Tensors from W.data: the graph never reaches the parameters"),
]
