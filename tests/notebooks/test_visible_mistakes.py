"""Visible tests that tell a mistake by its real cause (issue 34): each runs its notebook up to
the visible test with one classic mistake typed into the solution, and reads what the test
says. A visible test passes the notebook's own solution."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.notebooks.units import Unit, read

pytestmark = pytest.mark.notebooks

RUNNER = Path(__file__).with_name("visible_cells.py")


@pytest.fixture(scope="module")
def said():
    """What a visible test cell says when its notebook runs with ``edits`` (tests/notebooks/
    visible_cells.py, each run in a fresh child of one warm server)."""
    server = subprocess.Popen([sys.executable, str(RUNNER), "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)

    def ask(unit: str, cell: str, *edits: tuple[str, str, str]) -> str:
        server.stdin.write(json.dumps([unit, cell, edits]) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
        assert line, f"the visible-cells server died (exit code {server.wait(timeout=60)})"
        reply = json.loads(line)
        assert reply["status"] == 0, f"{unit} up to {cell} failed:\n{reply['out']}"
        return reply["out"]
    yield ask
    server.stdin.close()
    server.wait(timeout=60)


BIAS_AXIS = ("linear", "self.bias.grad += grad_output.sum(axis=0)",
             "self.bias.grad += grad_output.sum(axis=1)")


@pytest.mark.parametrize("name, cell", [("03_module_linear", "linear-tests"),
                                        ("07_optimizers", "adam-tests"),
                                        ("07_optimizers", "rmsprop-tests"),
                                        ("10_regularization", "batchnorm-forward-tests")])
def test_the_solution_passes_the_visible_test(name, cell, said):
    assert said(name, cell).endswith("OK\n")


def test_a_bias_summed_over_the_wrong_axis_fails_unit_3s_visible_test_readably(said):
    """N, in_features and out_features differ: before (N = out_features = 2, G the identity)
    the visible test printed 'Linear passes the visible tests'."""
    out = said("03_module_linear", "linear-tests", BIAS_AXIS)
    assert "Linear passes the visible tests" not in out
    assert "Linear.backward(G) raised ValueError" in out and "summed over the batch (axis=0)" in out


def test_lost_adam_moments_are_named_by_unit_7s_visible_test(said):
    """Before, step 2's failure repeated step 1's hint: 'moves 3.2 times too far'."""
    lost = ("adam", '        state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad\n'
                    '        state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * grad**2\n'
                    '        m_hat = state["exp_avg"] / (1 - beta1**t)\n'
                    '        v_hat = state["exp_avg_sq"] / (1 - beta2**t)',
            '        m = (1 - beta1) * grad\n        v = (1 - beta2) * grad**2\n'
            '        m_hat = m / (1 - beta1**t)\n        v_hat = v / (1 - beta2**t)')
    out = said("07_optimizers", "adam-tests", lost)
    assert "step 2 of Adam(lr=0.1)" in out and "moments are lost between steps" in out
    assert "3.2 times too far" not in out


@pytest.mark.parametrize("corrected, says", [
    ('v_hat = state["exp_avg_sq"] / (1 - beta2**t)', "31.6 times when v is not corrected"),
    ('m_hat = state["exp_avg"] / (1 - beta1**t)', "a tenth of lr when m is not"),
], ids=["v_uncorrected", "m_uncorrected"])
def test_a_missing_moment_correction_is_named_by_unit_7s_visible_test(corrected, says, said):
    """Before, the hint described only the Adam without any correction (3.2 times too far):
    v left uncorrected moves 31.6 times too far and got numbers only (issue 48)."""
    out = said("07_optimizers", "adam-tests", ("adam", corrected, corrected.split(" / ")[0]))
    assert "step 1 of Adam(lr=0.1)" in out and says in out, out


def test_a_centered_rmsprop_without_the_square_is_told_of_the_variance(said):
    out = said("07_optimizers", "rmsprop-tests",
               ("rmsprop", 'mean_square - state["grad_avg"] ** 2', 'mean_square - state["grad_avg"]'))
    assert "Subtract g_avg**2" in out and "numerically unstable formula" not in out


def test_batchnorm_counts_every_training_batch_in_unit_10s_visible_test(said):
    """PyTorch counts every training forward; the hidden check does, and now so do the text
    and the visible test (before, only momentum=None's count was shown)."""
    out = said("10_regularization", "batchnorm-forward-tests",
               ("batchnorm", "            self.num_batches_tracked += 1\n",
                "            if self.momentum is None:\n"
                "                self.num_batches_tracked += 1\n"))
    assert "num_batches_tracked should be 1 after one training batch, got 0" in out


@pytest.mark.parametrize("cell", ["conv2d-naive-tests", "im2col-tests", "col2im-tests",
                                  "conv2d-tests", "maxpool2d-tests", "avgpool2d-tests"])
def test_unit_13s_solution_passes_its_visible_tests(cell, said):
    assert said("13_conv", cell).endswith("OK\n")


@pytest.mark.parametrize("edit, says", [
    (("conv2d-naive", "np.sum(window * weight[:, f])", "np.sum(window * weight[:, f, ::-1, ::-1])"),
     "conv2d_naive flips the kernel"),
    (("col2im", "np.add.at(windows, (slice(None),), grads)", "windows += grads"),
     "received one value instead of four"),
    (("maxpool2d", "chosen = self.argmax[..., None] == np.arange(k * k)",
      "chosen = (windows_of_x := sliding_window_view(self.x, (k, k), axis=(2, 3))[:, :, ::s, ::s]"
      ".reshape(n, c, oh, ow, k * k)) == windows_of_x.max(axis=-1, keepdims=True)"),
     "With ties (the window of zeros, the two 5s) send it to the first maximum only"),
], ids=["flipped_kernel", "overlaps_overwritten", "gradient_to_every_tie"])
def test_unit_13s_visible_tests_name_the_classic_mistakes(edit, says, said):
    cell, passed = {"conv2d-naive": ("conv2d-naive-tests", "conv2d_naive passes"),
                    "col2im": ("col2im-tests", "col2im passes"),
                    "maxpool2d": ("maxpool2d-tests", "MaxPool2d passes")}[edit[0]]
    edits = [edit]
    if edit[0] == "maxpool2d":     # the mistaken backward reads the input forward saved
        edits.append(("maxpool2d", "        self.input_shape = x.shape\n",
                      "        self.input_shape, self.x = x.shape, x\n"))
    out = said("13_conv", cell, *edits)
    assert passed not in out and says in out, out


@pytest.mark.parametrize("cell", ["im2col-tests", "conv2d-tests"])
def test_unit_13s_visible_tests_do_not_rest_on_the_students_own_conv2d_naive(cell):
    """They compare with fixed values: a flipped conv2d_naive failed these two correct
    exercises ('is wrong (your conv2d_naive on the same input)')."""
    source = next(c.source for c in read(Unit("13_conv").source).cells if c.get("id") == cell)
    assert "conv2d_naive" not in source and "by hand" in source


@pytest.mark.parametrize("edit, says", [
    (("conv2d", "return grad_padded[:, :, p:p + h, p:p + w]", "return grad_padded[:, :, p:-p, p:-p]"),
     "should return dL/dx of the input's shape (1, 1, 3, 4); got (1, 1, 0, 0)"),
    (("conv2d", "self.out_channels).transpose(0, 3, 1, 2)",
      "self.out_channels).transpose(0, 3, 1, 2).squeeze()"),
     "all four axes even for a batch of one; got (2, 2, 3)"),
], ids=["crop_p_to_minus_p", "squeezed"])
def test_unit_13s_visible_conv2d_test_catches_padding_0_and_a_batch_of_one(edit, says, said):
    """Both passed every visible test and lost 6 and 8 hidden points: the visible Conv2d test
    used padding 1 and N = 2 only."""
    out = said("13_conv", "conv2d-tests", edit)
    assert "Conv2d passes" not in out and says in out, out


UNIT_14_TESTS = ["char-tokenizer-tests", "context-windows-tests", "bigram-counts-tests",
                 "bigram-nll-tests", "embedding-tests", "next-token-probabilities-tests",
                 "sample-tests", "train-language-model-tests", "grade-language-model"]


@pytest.mark.parametrize("cell", UNIT_14_TESTS)
def test_unit_14s_solution_passes_its_visible_tests(cell, said):
    assert said("14_language", cell).endswith("OK\n")


@pytest.mark.parametrize("edit, cell, says", [
    (("context-windows", "for i in range(len(word) + 1):", "for i in range(len(word)):"),
     "context-windows-tests", "len('emma') + 1 samples of 3 tokens"),
    (("bigram-counts", "np.add.at(counts, (previous, following), 1.0)",
      "counts[previous, following] += 1.0"), "bigram-counts-tests", "the pair (1, 2) occurs twice"),
    (("embedding", "np.add.at(self.weight.grad, rows, grads)", "self.weight.grad[rows] += grads"),
     "embedding-tests", "token 1 occurs three times"),
    (("next-token-probabilities", "scaled = np.asarray(logits, dtype=np.float64) / temperature",
      "scaled = np.asarray(logits, dtype=np.float64)"), "next-token-probabilities-tests",
     "tau = 0.5 squares the probabilities"),
    (("sample", "cumulative = np.cumsum(probs, axis=-1)",
      "cumulative = np.cumsum(np.asarray(logits, dtype=np.float64), axis=-1)"), "sample-tests",
     "draw from the probabilities, not the logits"),
    (("train-language-model", "train_loss, _ = train_epoch(model, loader, criterion, optimizer)",
      "train_loss, _ = evaluate(model, X, y, criterion)"), "train-language-model-tests",
     "train() should lower it"),
    (("train-language-model", "TensorDataset(X, y)", "TensorDataset(X_val, y_val)"),
     "grade-language-model", "train() trained on the validation split"),
], ids=["window_without_the_end", "counts_fancy_add", "embedding_fancy_add",
        "no_temperature", "sampled_from_logits", "train_never_steps", "trained_on_validation"])
def test_unit_14s_visible_tests_name_the_classic_mistakes(edit, cell, says, said):
    """Each classic mistake of the unit fails the visible test after its exercise with a
    message that names it; training on the validation split passes the train cell's test
    (the loss on the samples it is given still falls) and is named by the graded cell."""
    out = said("14_language", cell, edit)
    assert not out.endswith("OK\n") and says in out, out


TIED_HEAD_ONLY = ("gpt", "        self.wte.backward(grad)\n", "")
TIED_LOOKUP_ONLY = ("gpt", "        self.wte.weight.grad += (grad_logits", "        _ = (grad_logits")
TIED_WRITTEN_OVER = ("gpt", "        self.wte.backward(grad)\n",
                     "        head = self.wte.weight.grad.copy()\n        self.wte.backward(grad)\n"
                     "        self.wte.weight.grad = head\n")
OWN_HEAD = (("gpt", "        self.head_input = None   # saved by forward: the head's input X, (B, T, C)\n",
             "        self.head_input = None\n        self.lm_head = Parameter(self.wte.weight.data.copy())\n"),
            ("gpt", "return self.head_input @ self.wte.weight.data.T",
             "return self.head_input @ self.lm_head.data.T"))
COPIED_TABLE = (("gpt", "        self.head_input = None   # saved by forward: the head's input X, (B, T, C)\n",
                 "        self.head_input = None\n        self.head_table = self.wte.weight.data.copy()\n"),
                ("gpt", "return self.head_input @ self.wte.weight.data.T",
                 "return self.head_input @ self.head_table.T"))
NO_POSITIONS = ("gpt", "x = self.wte(idx) + self.wpe(np.arange(idx.shape[1]))", "x = self.wte(idx)")


@pytest.mark.parametrize("cell", ["gpt-tests", "gpt-tying-tests"])
def test_unit_16s_visible_tests_of_the_gpt_pass_its_solution(said, cell):
    assert said("16_gpt", cell).endswith("OK\n")


@pytest.mark.parametrize("edits, says", [
    ((TIED_HEAD_ONLY,), "holds only the head's G^T X: the lookup's gradient was written over"),
    ((TIED_WRITTEN_OVER,), "holds only the head's G^T X: the lookup's gradient was written over"),
    ((TIED_LOOKUP_ONLY,), "holds only the lookup's gradient (wte.backward)"),
    (OWN_HEAD, "the head must use wte's table itself, not a copy or a Linear of its own"),
    (COPIED_TABLE, "the head reads the table as it is now"),
], ids=["head-only", "lookup-written-over", "lookup-only", "own-head", "copied-table"])
def test_unit_16s_visible_tying_test_names_the_part_that_is_missing(said, edits, says):
    """The visible tying cell says what the hidden one says: which of the tied table's two
    gradients is missing, or that the head has a table of its own."""
    out = said("16_gpt", "gpt-tying-tests", *edits)
    assert "the table's gradient sums both uses" not in out and says in out, out


def test_unit_16s_other_gradients_pass_their_visible_test_with_the_tie_broken(said):
    assert said("16_gpt", "gpt-tests", TIED_HEAD_ONLY).endswith("OK\n")


def test_unit_16s_visible_test_says_the_positions_are_missing(said):
    """With one block the order of the tokens shows only through the position table (two
    causal blocks already tell it apart: a later token reads what the earlier ones read)."""
    out = said("16_gpt", "gpt-tests", NO_POSITIONS)
    assert "the model cannot tell the order. Add the position embeddings" in out
