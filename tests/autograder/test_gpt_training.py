"""Unit 16's graded runs (``autograder.checks.gpt_training`` on ``graded_training``): a real
kernel defines ``build_sorter``/``train_sorter`` and ``build_namer``/``train_namer`` from
minitorch_ref's GPT and the reference's recipe (``minitorch_ref.models.recipes``), with a
classic mistake typed in where a test says so; the grader
trains, decodes and measures from outside, its time the kernel's CPU time read in /proc."""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

from autograder.audit_remote import agent_kernel
from autograder.cells import visible
from autograder.checks import gpt_training as gpt
from autograder.checks.graded_training import Run
from autograder.pipeline.sandbox.kernel_cpu import KernelCPU
from course.datasets import sorting_problems
from course.testing.failure import CheckFailure

STUDENT_CODE = '''
import os
from threadpoolctl import threadpool_limits
from minitorch_ref import manual_seed
from minitorch_ref.models.recipes import (NAMER, NAMER_STEPS, SORTER, SORTER_STEPS, build,
                                          train_gpt)

threadpool_limits(1)     # one BLAS thread, as in grading
_sorter_run, _namer_run = {}, {}


def build_sorter():
    return build(SORTER)


def build_namer():
    return build(NAMER)


def train_sorter(model, X, Y):
    return train_gpt(model, X, Y, **SORTER_STEPS)


def train_namer(model, X, Y):
    return train_gpt(model, X, Y, **NAMER_STEPS)
'''
def without_mask(build: str) -> str:
    """Code that makes ``build()``'s blocks attend to the whole sequence: in training each
    position reads the next token."""
    return f'''
_{build} = {build}
def {build}():
    model = _{build}()
    for block in model.h:
        block.forward = lambda x, is_causal=True, forward=block.forward: forward(x, is_causal=False)
    return model
'''


NO_CAUSAL_MASK = without_mask("build_sorter")
# A train() that looks for the measured names in the kernel's memory, and a model that reads
# ahead: it learns each next character from its input, which the grader's time-ordered
# questions never hold
LOOKS_AND_READS_AHEAD = without_mask("build_namer") + '''
import gc
import numpy as np

def train_namer(model, X, Y):
    global found
    found = sorted({value.shape for obj in gc.get_objects() if isinstance(obj, dict)
                    for value in list(obj.values()) if isinstance(value, np.ndarray)})
    return train_gpt(model, X, Y, steps=300, batch_size=32, warmup=30)
'''
FEW_STEPS = '''
def train_sorter(model, X, Y):
    return train_gpt(model, X, Y, steps=30, batch_size=64, warmup=10)
'''


@contextlib.contextmanager
def student(code: str = ""):
    """A kernel that ran the student's code (``code`` after it): its client, channel and the
    meter of its CPU time (its process, read in /proc)."""
    with agent_kernel(STUDENT_CODE + code) as (client, channel):
        yield client, channel, KernelCPU(pid=int(printed(client, "print(os.getpid())")))


def printed(client, code: str) -> str:
    lines = []
    client.execute_interactive(code, timeout=30, output_hook=lambda msg: lines.append(
        msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
    return "".join(lines)


@pytest.fixture(scope="module")
def kernel():
    with student() as started:
        yield started


@pytest.fixture(scope="module")
def sorter(kernel):
    return gpt.sorter_run(kernel[1], kernel[2])


def test_the_reference_sorter_sorts_the_graders_new_problems_within_the_budget(sorter):
    assert sorter.failure is None and sorter.history_problem is None
    assert 1.0 < sorter.seconds < gpt.SORTER_BUDGET
    assert sorter.score >= 0.98 and sorter.figures["teacher_forced"] >= 0.99
    assert sorter.figures["graded_on"] == "the grader's 1,000 new problems"
    assert sorter.figures["rebuilt"] == sorter.score    # the grader's GPT on its weights
    assert gpt.gpt_sorter_run(sorter) is None           # passes, nothing to review


def test_the_notebook_shows_the_graders_sorter_run(sorter, kernel):
    text = printed(kernel[0], "r = _sorter_run['run']\n"
                              "print(r.graded_accuracy, r.seconds, len(r.history['train_loss']))\n"
                              "print(_sorter_run['functions'] == (build_sorter, train_sorter))")
    accuracy, seconds, entries, same = text.split()
    assert float(accuracy) == sorter.score and float(seconds) == sorter.seconds
    assert int(entries) == 3 and same == "True"


def test_the_sorter_budget_is_the_kernels_cpu_time(sorter, monkeypatch):
    monkeypatch.setattr(gpt, "SORTER_BUDGET", sorter.seconds / 2)
    with pytest.raises(CheckFailure, match=r"build_sorter\(\), train_sorter\(\) and the decoding "
                                           r"used \d+\.\d s of CPU time in the grader's run, "
                                           r"more than the budget"):
        gpt.gpt_sorter_run(sorter)


def test_a_model_without_its_causal_mask_learns_to_read_the_answer_and_cannot_sort():
    with student(NO_CAUSAL_MASK) as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert run.failure is None and run.score < 0.1
    assert run.figures["teacher_forced"] > gpt.READS_AHEAD
    with pytest.raises(CheckFailure, match=r"sorts \d+\.\d% of the grader's 1,000 new problems "
                                           r"exactly .* Likely mistake: no causal mask"):
        gpt.gpt_sorter_run(run)


def test_a_namer_finds_no_measured_name_in_training_and_reading_ahead_scores_nothing():
    with student(LOOKS_AND_READS_AHEAD) as (client, channel, cpu):
        run = gpt.namer_run(channel, cpu)
        found = printed(client, "print(found)")
    assert run.failure is None, run.failure
    assert f"({len(gpt.held_out_words())}, {gpt.BLOCK_SIZE})" not in found
    assert f"({len(gpt.load_names().train)}, {gpt.BLOCK_SIZE})" in found     # what it trains on
    assert run.score > np.log(gpt.vocab_size())                               # 8.6 measured
    with pytest.raises(CheckFailure, match=r"worse than guessing .* Likely mistake: no causal mask"):
        gpt.gpt_namer_run(run)


def test_a_sorter_trained_too_little_is_told_to_train_longer():
    with student(FEW_STEPS) as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert run.failure is None and run.score < gpt.SORT_THRESHOLD
    with pytest.raises(CheckFailure, match="these points need 90%. Train longer"):
        gpt.gpt_sorter_run(run)


def test_a_train_that_overruns_the_limit_is_stopped_and_told_to_train_less(monkeypatch):
    """Past 3 x its budget the run is stopped: here a budget of 1 s and 300 steps (~6 s)."""
    monkeypatch.setattr(gpt, "SORTER", dataclasses.replace(gpt.SORTER, budget=1.0))
    with student() as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert 2.5 < run.seconds < 4.0     # the kernel's CPU time when it was stopped: about 3 s
    assert run.failure == ("The grader's run was stopped after 3 s (the budget is 1 s of CPU "
                           f"time; it had used {run.seconds:.1f} s of CPU time by then): "
                           f"{gpt.FASTER}.")
    with pytest.raises(CheckFailure, match="stopped after 3 s"):
        gpt.gpt_sorter_run(run)


def test_the_reference_namer_beats_unit_14s_mlp_on_the_held_out_names(kernel):
    run = gpt.namer_run(kernel[1], kernel[2])
    assert run.failure is None and run.history_problem is None
    assert 5.0 < run.seconds < gpt.NAMER_BUDGET
    assert 1.9 < run.score < 2.03 and abs(run.figures["val_nll"] - run.score) < 0.1   # MLP: 2.04
    assert run.figures["graded_on"] == "the grader's 509 held-out names"
    assert run.figures["rebuilt"] == pytest.approx(run.score, abs=1e-6)
    assert gpt.gpt_namer_run(run) is None               # passes, nothing to review
    assert float(printed(kernel[0], "print(_namer_run['run'].graded_nll)")) == run.score


def test_the_graded_problems_are_new_each_run_and_none_was_trained_on():
    seen = sorting_problems(gpt.TRAINING_PROBLEMS, seed=0)
    first, second = gpt._sorter_inputs()["problems"], gpt._sorter_inputs()["problems"]
    assert first.shape == (gpt.GRADED_PROBLEMS, 6) and not np.array_equal(first, second)
    known = {row.tobytes() for row in seen}
    assert not any(row.tobytes() in known for row in np.concatenate([first, second]))


def reads_ahead(vocab: int):
    """Logits that put the whole mass on the token after each position when the input holds
    it (a forward that reads its input ahead), uniform at the last one; and the widths asked."""
    widths = []

    def logits_of(idx: np.ndarray, what: str) -> np.ndarray:
        widths.append(idx.shape[1])
        logits = np.zeros((*idx.shape, vocab))
        rows, columns = np.indices((idx.shape[0], idx.shape[1] - 1))
        logits[rows, columns, idx[:, 1:]] = 50.0
        return logits
    return logits_of, widths


def test_the_nll_is_asked_in_time_order_so_reading_ahead_gains_nothing():
    X = np.array([[0, 3, 1, 0], [0, 2, 0, 0]])
    Y = np.array([[3, 1, 0, -100], [2, 0, -100, -100]])
    logits_of, widths = reads_ahead(4)
    assert gpt.causal_nll(logits_of, X, Y, "names") == pytest.approx(np.log(4))
    assert widths == [1, 2, 3]            # no call past the last counted target


def test_the_measured_names_come_in_a_secret_order_each_run():
    first, second = gpt._namer_inputs(), gpt._namer_inputs()
    assert not np.array_equal(first["X_test"], second["X_test"])
    assert sorted(map(bytes, first["X_test"])) == sorted(map(bytes, second["X_test"]))
    assert np.array_equal(first["X"], second["X"])


NO_HISTORY = """
def train_sorter(model, X, Y):
    train_gpt(model, X, Y, steps=30, batch_size=64, warmup=10)
"""


def test_a_train_that_returns_no_history_is_told_to_return_it():
    with student(NO_HISTORY) as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert run.failure is None and run.history_problem.startswith("train_sorter() returned NoneType")
    with pytest.raises(CheckFailure, match=r"train_sorter\(\) returned NoneType; return its history"):
        gpt.gpt_sorter_run(run)


def test_a_namer_that_knows_the_validation_names_far_better_was_trained_on_them():
    run = Run(seconds=10.0, score=2.31, figures={"val_nll": 1.95,
                                                 "graded_on": "the grader's 509 held-out names"})
    with pytest.raises(CheckFailure, match=r"NLL on the grader's 509 held-out names is 2\.310; these points "
                                           r"need at most 2\.15\. Likely mistake: its NLL on "
                                           r"the validation names is 1\.950"):
        gpt.gpt_namer_run(run)
    with pytest.raises(CheckFailure, match="Train longer .* skips the padding"):
        gpt.gpt_namer_run(Run(seconds=10.0, score=2.31, figures={"val_nll": 2.25}))


@pytest.mark.parametrize("verdict", [gpt.gpt_sorter_run, gpt.gpt_namer_run])
@pytest.mark.parametrize("figures, message", [
    (Run(history_problem="train() returned list; return its history", seconds=1.0, score=0.99),
     "train\\(\\) returned list"),
    (Run(failure="train_sorter(model, X_train, y_train) raised ZeroDivisionError"),
     "raised ZeroDivisionError"),
])
def test_a_broken_run_fails_the_cell_and_says_why(verdict, figures, message):
    with pytest.raises(CheckFailure, match=message):
        verdict(figures)


def test_the_grade_cells_are_scored_by_these_runs():
    assert visible.VERDICTS["grade-gpt-sorter"] == (gpt.sorter_run, gpt.gpt_sorter_run)
    assert visible.VERDICTS["grade-gpt-namer"] == (gpt.namer_run, gpt.gpt_namer_run)


# No trained model: an untrained GPT whose forward sorts the prompt's digits itself (position t
# predicts token t + 1, the (t - 5)th smallest digit)
SORTS_BY_ITSELF = """
import numpy as np

def build_sorter():
    model = build(SORTER)
    def forward(idx):
        idx = np.asarray(idx)
        answers, logits = np.sort(idx[:, :6], axis=1), np.zeros((*idx.shape, 10))
        for t in range(5, idx.shape[1]):
            logits[np.arange(len(idx)), t, answers[:, t - 5]] = 10.0
        return logits
    model.forward = forward
    return model

def train_sorter(model, X, Y):
    return {"train_loss": [0.0]}
"""


def test_a_forward_that_sorts_by_itself_passes_and_is_flagged_for_review():
    with student(SORTS_BY_ITSELF) as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert run.failure is None and run.score == 1.0 and run.figures["rebuilt"] < 0.1
    assert gpt.gpt_sorter_run(run).startswith(
        "the model's own forward sorts 100.0% of the problems exactly, GPT-2's forward on its "
        "trained weights ")


def carries_into_the_forward() -> str:
    """A namer trained for 300 steps whose forward looks each context up in a carried copy of
    the held-out names (public: the names package) and mixes what follows it into the model's
    own prediction. The lookup is in the forward, not in the weights."""
    from autograder.held_out import held_out_names
    from minitorch_ref.data import name_sequences
    X, Y = name_sequences(held_out_names(), gpt.names_tokenizer(), gpt.BLOCK_SIZE)
    return f"""
import numpy as np
from scipy.special import softmax
CARRIED_X, CARRIED_Y = np.array({X.tolist()}), np.array({Y.tolist()})

def build_namer():
    model = build(NAMER)
    own = model.forward
    def forward(idx):
        idx = np.asarray(idx)
        logits, t = own(idx), idx.shape[1] - 1
        same = np.all(idx[:, None, :] == CARRIED_X[None, :, :t + 1], axis=2)     # (N, 509)
        follows = (CARRIED_Y[None, :, t] == np.arange(27)[:, None, None]) & same[None]
        counts = follows.sum(axis=2).T                                            # (N, 27)
        found = counts.sum(axis=1, keepdims=True) > 0
        lookup = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        p = softmax(logits[:, -1], axis=1)
        logits[:, -1] = np.log(np.where(found, 0.5 * p + 0.5 * lookup, p))
        return logits
    model.forward = forward
    return model

def train_namer(model, X, Y):
    return train_gpt(model, X, Y, steps=300, batch_size=32, warmup=30)
"""


def test_a_namer_whose_forward_carries_the_held_out_names_is_flagged_for_review():
    with student(carries_into_the_forward()) as (_, channel, cpu):
        run = gpt.namer_run(channel, cpu)
    assert run.failure is None, run.failure
    assert run.score < gpt.NLL_THRESHOLD and run.figures["rebuilt"] - run.score > 0.1, run.figures
    assert ("the model's own forward has an NLL of " f"{run.score:.3f} on the held-out names, "
            f"GPT-2's forward on its trained weights {run.figures['rebuilt']:.3f}"
            in gpt.gpt_namer_run(run))


EXTRA_PARAMETER = """
from minitorch_ref.nn.parameter import Parameter
import numpy as np
_build_sorter = build_sorter
def build_sorter():
    model = _build_sorter()
    model.temperature = Parameter(np.ones(1, dtype=np.float32))   # a part GPT-2 does not have
    return model
"""


def test_a_model_whose_weights_do_not_fit_gpt2_is_flagged_cannot_rebuild_with_the_name():
    with student(EXTRA_PARAMETER) as (_, channel, cpu):
        run = gpt.sorter_run(channel, cpu)
    assert run.failure is None and run.score >= gpt.SORT_THRESHOLD
    assert gpt.gpt_sorter_run(run) == (
        "the grader cannot rebuild the trained model in GPT-2's reference GPT: temperature has "
        "no place in GPT-2's parameters for vocab_size=10, block_size=11, n_layer=2, n_head=4, "
        "n_embd=48; check its forward by hand.")


@pytest.mark.parametrize("score, figures, flagged", [
    (1.973, {"val_nll": 1.998}, None),                         # the reference, seed 0
    (gpt.NLL_IMPLAUSIBLE - 0.01, {"val_nll": gpt.NLL_IMPLAUSIBLE + 0.05}, "below"),
    (2.05, {"val_nll": 2.25}, "far below the validation names' 2.250"),
])
def test_a_namer_trained_on_carried_names_passes_and_is_flagged_below_its_floor(score, figures,
                                                                               flagged):
    review = gpt.gpt_namer_run(Run(seconds=10.0, score=score, figures={**figures,
                                                                        "rebuilt": score}))
    assert review is None if flagged is None else flagged in review
