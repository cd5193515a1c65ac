"""Checks of the student's BatchNorm1d: the training forward, both backward passes, the
running statistics and eval mode.

BatchNorm1d is deterministic and compared with its ``minitorch_ref`` twin; wrong answers
are matched against the classic mistakes.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from autograder.checks._calls import method, set_mode, student_backward
from autograder.checks._modules import (
    Case, batch_signatures, copy_parameter, expect_accumulation, forward_pair, twins,
)
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, not_summed, when
from course.testing.failure import expect, fail
from minitorch_ref import nn as ref


# ---------------------------------------------------------------------------- BatchNorm1d
@dataclass(frozen=True)
class BatchCase(Case):
    """A batch whose features have their own means and spreads, optionally far from 0."""

    offset: float = 0.0

    def inputs(self, out_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        means = rng.normal(0, 2, self.features)
        spreads = rng.uniform(0.5, 3, self.features)
        noise = rng.standard_normal((self.batch, self.features))
        x = self.offset + self.scale * (means + spreads * noise)
        return x, rng.standard_normal((self.batch, self.features))

    def __str__(self) -> str:
        offset = f", values around {self.offset:g}" if self.offset else ""
        return super().__str__() + offset


# Batch of 2, one feature, a tiny variance (eps matters), values around 1e6 (precision).
BN_CASES = (BatchCase(4, 3, seed=0), BatchCase(2, 5, seed=1), BatchCase(7, 1, seed=2),
            BatchCase(6, 4, seed=3, scale=1e-3))


LARGE = BatchCase(16, 3, seed=4, offset=1e6)


EPS = 1e-5


GRAD_SYMBOLS = {"weight": "dL/dgamma", "bias": "dL/dbeta"}


def _batchnorm(BatchNorm1d: type, case: Case, **kwargs):
    """Student and reference BatchNorm1d with the same random gamma (weight) and beta (bias)."""
    student, reference = twins("BatchNorm1d", BatchNorm1d, ref.BatchNorm1d, case.features,
                               seed=case.seed, **kwargs)
    rng = np.random.default_rng(case.seed + 100)
    reference.weight.data = rng.uniform(0.5, 2.0, case.features)
    reference.bias.data = rng.normal(0.0, 1.0, case.features)
    for name in ("weight", "bias"):
        copy_parameter("BatchNorm1d", student, reference, name)
    return student, reference


def _normalised(x: np.ndarray, mean: np.ndarray, std: np.ndarray, reference) -> np.ndarray:
    return reference.weight.data * (x - mean) / std + reference.bias.data


def _forward_signatures(x: np.ndarray, reference, case: Case) -> tuple[Signature, ...]:
    n, mean, var = len(x), x.mean(axis=0), x.var(axis=0)
    wrong = (
        ("unbiased", np.sqrt(var * n / max(n - 1, 1) + EPS),
         "x is normalised with the unbiased variance (divided by N - 1). Normalise with the "
         "biased batch variance, x.var(axis=0) (divided by N); only running_var uses N/(N-1)."),
        ("eps_outside", np.sqrt(var) + EPS,
         "eps must be added to the variance inside the square root: (x - mean) / sqrt(var + eps)."),
        ("no_eps", np.sqrt(var), "eps is missing: divide by sqrt(var + eps), not sqrt(var)."),
    )
    signatures = [when(name, lambda g, e, s=std: close(g, _normalised(x, mean, s, reference)), text)
                  for name, std, text in wrong]
    x_hat = (x - mean) / np.sqrt(var + EPS)
    signatures.append(when(
        "no_affine", lambda g, e: close(g, x_hat),
        "the output is x_hat without the learnable scale and shift: y = weight * x_hat + bias."))
    if x.shape[1] > 1:
        rows = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + EPS)
        signatures.append(when(
            "rows", lambda g, e: close(g, reference.weight.data * rows + reference.bias.data),
            "the statistics are computed over the features of each row (axis=1); BatchNorm "
            "normalises each feature over the batch: mean and var with axis=0."))
    if getattr(case, "offset", 0):
        signatures.append(when(
            "precision", lambda g, e: True,
            "with values around 1e6 the result loses precision. Compute the variance as "
            "((x - mean)**2).mean(axis=0) (or x.var(axis=0)), not mean(x**2) - mean**2, "
            "which subtracts two huge, nearly equal numbers."))
    return tuple(signatures)


@check
def batchnorm_forward_train(BatchNorm1d):
    """Training forward: y = weight * (x - mean) / sqrt(var + eps) + bias with the batch's mean
    and biased variance; batches of 2, a tiny variance, and values around 1e6."""
    for case in BN_CASES + (LARGE,):
        student, reference = _batchnorm(BatchNorm1d, case)
        x, _ = case.inputs()
        got, expected = forward_pair("BatchNorm1d", student, reference, x)
        expect_close("BatchNorm1d.forward output (training mode)", got, expected, str(case),
                     _forward_signatures(x, reference, case))
        _expect_saved(student, reference, case)


SAVED = {"x_hat": "X_hat, the normalised input", "inv_std": "s = 1 / sqrt(var + eps)"}


def _expect_saved(student, reference, case: Case, missing_ok: bool = False) -> None:
    """What forward saves for backward, under the names the notebook gives (``missing_ok``:
    a name that is not there is batchnorm_forward_train's to judge)."""
    for name, meaning in SAVED.items():
        value = getattr(student, name, None)
        if value is None and missing_ok:
            continue
        expect(value is not None, f"BatchNorm1d.forward saved no self.{name} ({meaning}): save "
               "what backward needs as self.x_hat, self.inv_std and self.used_batch_stats.")
        expect_close(f"BatchNorm1d.{name} after forward", value, getattr(reference, name),
                     f"{meaning}; {case}")
    used = getattr(student, "used_batch_stats", None)
    expect(used is not None and bool(used) == reference.used_batch_stats,
           f"BatchNorm1d.used_batch_stats is {used!r} after a forward in "
           f"{'training' if reference.training else 'evaluation'} mode; save whether the batch "
           f"statistics were used ({reference.used_batch_stats}).")


def _backward_variants(reference, grad_output: np.ndarray) -> dict[str, object]:
    """dL/dx as the classic mistakes compute it, from the reference's saved x_hat and 1/std
    (read when a signature is matched, i.e. after the reference's forward)."""
    def g():
        return grad_output * reference.weight.data

    def full(g):
        n, x_hat = len(g), reference.x_hat
        return reference.inv_std / n * (n * g - g.sum(axis=0) - x_hat * (g * x_hat).sum(axis=0))
    return {
        "constant_stats": lambda: g() * reference.inv_std,
        "no_var_term": lambda: reference.inv_std * (g() - g().mean(axis=0)),
        "no_mean_term": lambda: reference.inv_std * (
            g() - reference.x_hat * (g() * reference.x_hat).mean(axis=0)),
        "no_gamma": lambda: full(grad_output),
        "training_formula": lambda: full(g()),
    }


FORMULA = ("dL/dx = (N*G - sum(G) - x_hat * sum(G * x_hat)) / (N * sqrt(var + eps)), with "
           "G = weight * grad_output and sums over the batch (axis=0).")


BACKWARD_MISTAKES = {
    "constant_stats": "dL/dx = weight * grad_output / sqrt(var + eps) treats the batch mean and "
                      f"variance as constants, but in training they are computed from x: {FORMULA}",
    "no_var_term": f"dL/dx misses the term that flows through the batch variance: {FORMULA}",
    "no_mean_term": f"dL/dx misses the term that flows through the batch mean: {FORMULA}",
    "no_gamma": f"grad_output is not multiplied by weight (gamma) first: {FORMULA}",
    "training_formula": "backward in eval mode uses the training formula. In eval the running "
                        "statistics are constants: dL/dx = weight * grad_output / "
                        "sqrt(running_var + eps).",
}


def _backward_signatures(reference, grad_output: np.ndarray,
                         names: tuple[str, ...]) -> tuple[Signature, ...]:
    variants = _backward_variants(reference, grad_output)
    return tuple(when(name, lambda got, e, v=variants[name]: close(got, v()),
                      BACKWARD_MISTAKES[name]) for name in names)


TRAINING_MISTAKES = ("constant_stats", "no_var_term", "no_mean_term", "no_gamma")


def _saved(student, reference) -> dict[str, np.ndarray] | None:
    """What the student's forward saved for backward (x_hat, inv_std), when it differs from
    the reference's: the forward's mistake (batchnorm_forward_train judges it), which the
    backward cells then take as given. None when it is right, or not there."""
    saved = {}
    for name in SAVED:
        value = getattr(student, name, None)
        if value is None:
            return None
        saved[name] = asarray(value, dtype=float)
    right = all(v.shape == np.shape(getattr(reference, k)) and close(v, getattr(reference, k))
                for k, v in saved.items())
    return None if right else saved


def _with_saved(reference, saved: dict[str, np.ndarray]):
    """A copy of ``reference`` whose saved x_hat and inv_std are the student's: its backward
    is the right one for what the student's forward computed."""
    twin = copy.deepcopy(reference)
    twin.x_hat, twin.inv_std = saved["x_hat"], saved["inv_std"].reshape(-1)
    return twin


@check
def batchnorm_backward_input(BatchNorm1d):
    """Training backward: dL/dx, including the terms through the batch mean and variance
    (from what forward saved: a wrong x_hat or inv_std is the forward cell's mistake)."""
    for case in BN_CASES:
        student, reference = _batchnorm(BatchNorm1d, case)
        x, grad_output = case.inputs()
        forward_pair("BatchNorm1d", student, reference, x, in_place=False)
        saved = _saved(student, reference)
        if saved is not None:
            reference = _with_saved(reference, saved)
        got = student_backward("BatchNorm1d", student, grad_output)
        expect_close("BatchNorm1d.backward: grad_input (dL/dx)", got,
                     reference.backward(grad_output.copy()), str(case) + (
                         ", from the x_hat and inv_std your forward saved" if saved else ""),
                     _backward_signatures(reference, grad_output, TRAINING_MISTAKES)
                     + batch_signatures(len(x), "dL/dx"))


def _param_signatures(name: str, x: np.ndarray, grad_output: np.ndarray) -> tuple[Signature, ...]:
    symbol = GRAD_SYMBOLS[name]
    summed = f"{symbol} = " + ("(grad_output * x_hat)" if name == "weight" else "grad_output") \
        + ".sum(axis=0)"
    signatures = (not_summed(f"{symbol} was not summed over the batch: {summed}, of shape (C,)."),)
    if name == "weight":
        signatures += (when("uses_x", lambda g, e: close(g, (grad_output * x).sum(axis=0)),
                            f"{symbol} uses the input x; it uses the normalised x_hat: {summed}."),)
    return signatures + batch_signatures(len(x), symbol)


@check
def batchnorm_backward_params(BatchNorm1d):
    """dL/dgamma = sum(grad_output * x_hat) and dL/dbeta = sum(grad_output), summed over the
    batch into weight.grad and bias.grad."""
    for case in BN_CASES:
        student, reference = _batchnorm(BatchNorm1d, case)
        x, grad_output = case.inputs()
        forward_pair("BatchNorm1d", student, reference, x, in_place=False)
        saved = _saved(student, reference)
        if saved is not None:
            reference = _with_saved(reference, saved)
        call("BatchNorm1d.backward", method(student, "backward"), grad_output.copy())
        reference.backward(grad_output.copy())
        for name, symbol in GRAD_SYMBOLS.items():
            expect_close(f"BatchNorm1d.{name}.grad ({symbol})",
                         getattr(getattr(student, name), "grad", None),
                         getattr(reference, name).grad, str(case),
                         _param_signatures(name, x, grad_output))
    case = BN_CASES[0]
    (student, _), (once, _) = _batchnorm(BatchNorm1d, case), _batchnorm(BatchNorm1d, case)
    expect_accumulation("BatchNorm1d", student, once, *case.inputs(), ("weight", "bias"),
                        "the gradients above")


RUNNING = ("running_mean", "running_var")


INITIAL = {"running_mean": 0.0, "running_var": 1.0}


def running_stat(what: str, module: object, name: str, features: int) -> np.ndarray:
    value = getattr(module, name, None)
    if value is None:
        fail(f"Your {what} has no attribute {name}: keep the running estimates in "
             "self.running_mean and self.running_var (PyTorch's names).")
    return as_array(f"{what}.{name}", value, (features,))


def _simulated(batches: list[np.ndarray], momentum: float | None, unbiased: bool = True,
               reverse: bool = False) -> dict[str, np.ndarray]:
    """Running statistics as a variant formula computes them (to name a student's mistake)."""
    stats = {name: np.full(batches[0].shape[1], value) for name, value in INITIAL.items()}
    for step, x in enumerate(batches, 1):
        m = 1 / step if momentum is None else momentum
        m = 1 - m if reverse else m
        n = len(x)
        batch = {"running_mean": x.mean(axis=0),
                 "running_var": x.var(axis=0) * (n / (n - 1) if unbiased else 1)}
        stats = {name: (1 - m) * stats[name] + m * batch[name] for name in stats}
    return stats


def _running_signatures(name: str, batches: list[np.ndarray],
                        momentum: float | None) -> tuple[Signature, ...]:
    def like(**variant):
        return lambda g, e: close(g, _simulated(batches, **variant)[name])
    signatures = [when("not_updated", lambda g, e: close(g, np.full(g.shape, INITIAL[name])),
                       f"{name} did not change: update the running estimates in every forward "
                       "in training mode.")]
    if name == "running_var":
        signatures.append(when(
            "biased", like(momentum=momentum, unbiased=False),
            "running_var is updated with the biased batch variance (divided by N). The running "
            "estimate uses the unbiased one, var * N / (N - 1), as PyTorch does (the "
            "normalisation itself uses the biased one)."))
    if momentum is None:
        signatures.append(when(
            "not_cumulative", like(momentum=0.1),
            "with momentum=None the running estimates are a cumulative average: use "
            "1 / (number of training batches so far) as the momentum."))
    else:
        signatures.append(when(
            "reversed", like(momentum=momentum, reverse=True),
            f"the momentum is applied the wrong way round: momentum={momentum} is the weight of "
            "the new batch, running = (1 - momentum) * running + momentum * batch_statistic "
            "(Keras's momentum=0.9 means the opposite)."))
    return tuple(signatures)


def _training_batches(features: int) -> list[np.ndarray]:
    rng = np.random.default_rng(40)
    return [3.0 + 2.0 * rng.standard_normal((n, features)) for n in (4, 2, 7, 3)]


@check
def batchnorm_running_stats(BatchNorm1d):
    """running_mean and running_var after each of 4 training batches: the default momentum 0.1
    with the unbiased variance, and momentum=None (a cumulative average)."""
    batches = _training_batches(3)
    for momentum, kwargs in ((0.1, {}), (None, {"momentum": None})):
        student, reference = twins("BatchNorm1d", BatchNorm1d, ref.BatchNorm1d, 3, **kwargs)
        for step, x in enumerate(batches, 1):
            call("BatchNorm1d.forward", method(student, "forward"), x.copy())
            reference.forward(x.copy())
            for name in RUNNING:
                expect_close(f"BatchNorm1d.{name}", running_stat("BatchNorm1d", student, name, 3),
                             getattr(reference, name),
                             f"after training batch {step}, momentum={momentum}",
                             _running_signatures(name, batches[:step], momentum))
            _expect_batches_tracked(student, step)


def _expect_batches_tracked(student, step: int) -> None:
    value = getattr(student, "num_batches_tracked", None)
    expect(value is not None, "BatchNorm1d has no attribute num_batches_tracked: count the "
           "training batches there (a buffer, PyTorch's name).")
    got = as_array("BatchNorm1d.num_batches_tracked", value, ())
    expect(int(got) == step, f"BatchNorm1d.num_batches_tracked is {got.item():g} after {step} "
           "training forward passes: add 1 in every forward in training mode, whatever the "
           "momentum.")


def _set_running_stats(student, reference, features: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    stats = {"running_mean": rng.normal(0, 2, features),
             "running_var": rng.uniform(0.5, 4, features)}
    for name, value in stats.items():
        setattr(reference, name, value.copy())
        call(f"setting BatchNorm1d.{name}", setattr, student, name, value.copy())
    return stats


def _expect_eval_step(student, reference, case: BatchCase, stats: dict[str, np.ndarray]) -> None:
    x, grad_output = case.inputs()
    got, expected = forward_pair("BatchNorm1d", student, reference, x)
    batch_std = np.sqrt(x.var(axis=0) + EPS)
    batch_stats = when(
        "batch_stats", lambda g, e: close(g, _normalised(x, x.mean(axis=0), batch_std, reference)),
        "in eval mode the output uses the batch's mean and variance. After eval(), normalise "
        "with running_mean and running_var, so that a prediction does not depend on the rest "
        "of the batch (and works for a single example).")
    expect_close("BatchNorm1d.forward output in eval mode", got, expected, str(case),
                 (batch_stats, _updated_first(x, stats, reference)))
    _expect_saved(student, reference, case, missing_ok=True)
    for name, value in stats.items():
        expect_close(f"BatchNorm1d.{name} after a forward in eval mode",
                     running_stat("BatchNorm1d", student, name, case.features), value,
                     "eval must not change the running estimates", (
                         when("changed", lambda g, e: True, "only training forward passes update "
                              "the running estimates; in eval mode leave them unchanged."),))
    got = student_backward("BatchNorm1d", student, grad_output)
    expect_close("BatchNorm1d.backward in eval mode: grad_input (dL/dx)", got,
                 reference.backward(grad_output.copy()), str(case),
                 _backward_signatures(reference, grad_output, ("training_formula",)))


def _updated_first(x: np.ndarray, stats: dict[str, np.ndarray], reference) -> Signature:
    """The output of an eval forward that first moved the running estimates towards the
    batch, as training does, then normalised with them."""
    n, m = len(x), reference.momentum
    if n < 2:
        return when("updated_first", lambda g, e: False, "")
    mean = (1 - m) * stats["running_mean"] + m * x.mean(axis=0)
    var = (1 - m) * stats["running_var"] + m * x.var(axis=0) * n / (n - 1)
    wrong = _normalised(x, mean, np.sqrt(var + EPS), reference)
    return when("updated_first", lambda g, e: close(g, wrong),
                "in eval mode the running estimates were updated with this batch before "
                "normalising with them. Only training forward passes update running_mean and "
                "running_var; in eval mode use them as they are, and leave them unchanged.")


@check
def batchnorm_eval(BatchNorm1d):
    """eval(): normalise with running_mean/running_var (also a batch of 1), leave them unchanged,
    and backpropagate with them as constants; train() goes back to batch statistics."""
    for case in (BatchCase(5, 3, seed=20), BatchCase(1, 3, seed=21)):
        student, reference = _batchnorm(BatchNorm1d, case)
        stats = _set_running_stats(student, reference, case.features, case.seed)
        set_mode("BatchNorm1d", student, False)
        reference.eval()
        _expect_eval_step(student, reference, case, stats)
    set_mode("BatchNorm1d", student, True)  # the last one, after two eval steps
    reference.train()
    x = BatchCase(4, 3, seed=22).inputs()[0]
    got, expected = forward_pair("BatchNorm1d", student, reference, x, in_place=False)
    fresh, _ = _batchnorm(BatchNorm1d, BatchCase(1, 3, seed=21))
    own, _ = forward_pair("BatchNorm1d", fresh, reference, x, in_place=False)
    expect_close("BatchNorm1d.forward output after eval() then train()", got,
                 expected if close(own, expected) else own,
                 "train() should switch back to the batch statistics" + (
                     "" if close(own, expected) else ": your own training forward of a new "
                     "layer (wrong too: batchnorm_forward_train)"))
