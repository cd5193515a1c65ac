"""The benchmarks' own contenders compute what they claim to (bench/ is timed, not tested,
elsewhere): the numexpr Adam that bench/mlp.py times against the fused numpy step."""
from __future__ import annotations

import numpy as np
import pytest

from bench.numexpr_adam import numexpr_adam_step
from minitorch_ref import nn, optim


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_the_benchmarked_numexpr_adam_matches_the_plain_step(dtype, rtol):
    rng = np.random.default_rng(2)
    param = nn.Parameter(rng.standard_normal((5, 4)).astype(dtype))
    optimizer = optim.Adam([param], lr=0.1, betas=(0.5, 0.9), eps=1e-3)
    weight, state = param.data.copy(), {"step": 0, "exp_avg": 0 * param.data,
                                        "exp_avg_sq": 0 * param.data}
    for _ in range(12):
        param.grad[...] = rng.standard_normal(param.shape)
        optimizer.step()
        numexpr_adam_step(weight, param.grad, optimizer.param_groups[0], state)
    assert weight.dtype == dtype
    np.testing.assert_allclose(weight, param.data, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(state["exp_avg_sq"], optimizer.state[param]["exp_avg_sq"], rtol=rtol)


def test_a_jobs_phases_add_up_to_its_seconds(tmp_path):
    """Two cells of 1 s and 2 s, 0.5 s apart, in a 10 s job that ended 1.5 s after them."""
    import json

    import nbformat

    from bench._phases import PHASES, phases

    def stamp(second: float) -> str:
        return f"2026-11-26T05:00:{second:06.3f}Z"

    nb = nbformat.v4.new_notebook()
    for start, stop in ((5.0, 6.0), (6.5, 8.5)):
        cell = nbformat.v4.new_code_cell("pass")
        cell.metadata["execution"] = {"iopub.status.busy": stamp(start),
                                      "shell.execute_reply": stamp(stop)}
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_code_cell("# a hidden cell, graded outside: no stamps"))
    nbformat.write(nb, str(tmp_path / "unit.ipynb"))
    (tmp_path / ".grading.json").write_text(json.dumps({"seconds": 10.0, "graded_at": stamp(10.0)}))
    split = phases(tmp_path, "unit")
    assert [round(split[p], 3) for p in PHASES] == [5.0, 3.0, 0.5, 1.5]


def test_the_convolution_benchmarks_contenders_compute_the_same():
    """bench/conv.py: the notebook's loops and its vectorised Conv2d give one output, and
    PyTorch (when installed) the reference's dL/dx."""
    from bench import conv
    from bench._timing import torch_available

    x, layers = conv.digits(np.float64), conv.reference_layers(np.float64)
    runs = conv.notebook_runs(x, layers)
    np.testing.assert_allclose(runs["naive loops"](), runs["vectorised"](), rtol=1e-10, atol=1e-12)
    if torch_available():
        grad_output = np.random.default_rng(1).standard_normal((conv.BATCH, 32, 8, 8))
        np.testing.assert_allclose(conv.torch_run(x, layers, grad_output)(),
                                   conv.reference_run(x, layers, grad_output)(), rtol=1e-9,
                                   atol=1e-12)


def test_the_transformer_benchmarks_contenders_compute_the_same():
    """bench/transformer.py: PyTorch's block, given the reference's weights, returns the
    reference's dL/dx in float64 (so the two time the same computation)."""
    from bench import transformer
    from bench._timing import torch_available

    if not torch_available():
        pytest.skip("PyTorch is not installed (the parity extra)")
    block = transformer.reference_block(np.float64)
    x, grad_output = transformer.inputs(np.float64)
    np.testing.assert_allclose(transformer.torch_run(block, x, grad_output)(),
                               transformer.reference_run(block, x, grad_output)(), rtol=1e-9,
                               atol=1e-12)


def test_the_language_model_benchmarks_contenders_train_the_same_model():
    """bench/lm.py: the plain and fused epochs give one loss; training to a lax target stops
    after one epoch with the NLL it reports; the bigram beats the uniform ln 27."""
    from bench import lm

    corpus = lm.Corpus()
    plain = lm.minitorch_epoch(corpus, np.float64, fused=False)()
    assert np.isclose(lm.minitorch_epoch(corpus, np.float64, fused=True)(), plain, rtol=1e-9)
    assert plain < np.log(27)
    model, epochs, _, val_nll = lm.train_to_target(corpus, np.float64, target=3.0)
    assert epochs == 1 and val_nll <= 3.0
    assert lm.bigram_nll(corpus) < np.log(27)


def test_the_gpt_benchmarks_steps_follow_the_same_trajectory():
    """bench/gpt.py: two AdamW steps of the reference GPT and of its PyTorch twin from the same
    weights give the same losses in float64 (so the two time the same computation)."""
    from bench import gpt
    from bench._timing import torch_available
    from minitorch_ref.models import GPT

    if not torch_available():
        pytest.skip("PyTorch is not installed (the parity extra)")
    idx, targets = gpt.batch()
    ours, theirs = (step(GPT(gpt.CONFIG, rng=np.random.default_rng(0)), idx, targets)
                    for step in (gpt.reference_step, gpt.torch_step))
    np.testing.assert_allclose([ours(), ours()], [theirs(), theirs()], rtol=1e-10)


@pytest.mark.parametrize("recipe", ["graded", "reference"])
def test_the_gpt_runs_benchmarks_contenders_train_the_same_model(recipe):
    """bench/gpt_runs.py: the reference and PyTorch's twin, 40 steps of either recipe's model
    at a learning rate other than the default (so the twin must take the recipe's) from the
    same weights on the same batches with the same schedule and clipping, reach the same NLL on
    the test names in float64 (so the two time the same training)."""
    from bench import gpt_runs
    from bench._timing import torch_available

    if not torch_available():
        pytest.skip("PyTorch is not installed (the parity extra)")
    config, steps = gpt_runs.RECIPES[recipe]["namer"]
    short = (config, {**steps, "steps": 40, "batch_size": 16, "warmup": 10, "lr": 1e-2})
    arrays = gpt_runs.samples("namer")
    ours, _ = gpt_runs.reference_run("namer", short, 0, np.float64, arrays)
    theirs, _ = gpt_runs.torch_run("namer", short, 0, np.float64, arrays)
    assert 2.3 < ours < np.log(27) and theirs == pytest.approx(ours, rel=1e-9)
