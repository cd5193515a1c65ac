"""Buggy students, made from the reference solution by the mutation catalogue's bugs.

Each ``Mutation`` edits one solution cell of a unit's source notebook so that it
has the bug of one catalogued mutant (``autograder.mutants``). What it must lose
is not written here: it is what the mutation audit measures for that mutant (the
checks that catch it), mapped to the unit's hidden test cells. A student who
submits the mutated notebook must fail exactly those cells and pass every other.

The grader's own timed runs (``train``, ``autograder.checks.graded_training``) are no check
of the audit: a mutation names the visible graded cells of the runs it must lose
(``loses_run``), measured by grading it. A mistake only the runs see (its mutant no catalogue
entry) loses those alone; a catalogued one loses its checks' cells and those.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from nbformat import NotebookNode


class MutationError(ValueError):
    """A mutation's text is not (exactly once) in the cell any more: the notebook changed."""


@dataclass(frozen=True)
class Mutation:
    mutant: str                          # a name in autograder.mutants.catalogue()
    unit: str
    cell: str                            # the grade id of the solution cell
    edits: tuple[tuple[str, str], ...]   # exact (old, new) replacements
    loses_run: tuple[str, ...] = ()      # the graded runs' cells it loses too (measured)
    reviewed: bool = False               # its graded run is listed for review (measured)

    @property
    def student(self) -> str:
        return "bug-" + self.mutant.replace("_", "-")

    def apply(self, nb: NotebookNode) -> NotebookNode:
        """A copy of ``nb`` with the bug in its cell."""
        nb = copy.deepcopy(nb)
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == self.cell]
        if len(cells) != 1:
            raise MutationError(f"{self.unit}: no single cell {self.cell!r}")
        for old, new in self.edits:
            if cells[0].source.count(old) != 1:
                raise MutationError(f"{self.unit} cell {self.cell}: {old!r} is not there exactly once")
            cells[0].source = cells[0].source.replace(old, new)
        return nb

    @property
    def catalogued(self) -> bool:
        from autograder.mutants import catalogue
        return any(m.name == self.mutant for m in catalogue())

    @property
    def loses(self) -> object:
        """What the student must lose, as ``scenario.expected_lost`` reads it: its checks'
        cells and ``loses_run`` (``("checks", self)``), or ``loses_run`` alone."""
        return ("checks", self) if self.catalogued else set(self.loses_run)

    def expected_checks(self) -> list[str]:
        """The checks this bug fails in its notebook, as the audit grades the notebook
        (``autograder.audit_cells``: its unit's hidden cells, its other code built on it)."""
        from autograder.audit_cells import cells
        from autograder.mutants import catalogue
        mutant = next(m for m in catalogue() if m.name == self.mutant)
        return sorted(cells(mutant))


G, L, A, S = "02_gradients", "03_module_linear", "04_activations", "06_sequential"
C, T, U, P = "13_conv", "14_language", "15_attention", "16_gpt"
MUTATIONS = (
    Mutation("numerical_gradient_one_sided", G, "numerical-gradient", (
        ("        x[i] = saved - h\n        f_minus = f()", "        x[i] = saved\n        f_minus = f()"),
        ("(f_plus - f_minus) / (2 * h)", "(f_plus - f_minus) / h"))),
    Mutation("numerical_gradient_divides_by_h", G, "numerical-gradient", (
        ("(f_plus - f_minus) / (2 * h)", "(f_plus - f_minus) / h"),)),
    Mutation("numerical_gradient_not_restoring_x", G, "numerical-gradient", (
        ("        x[i] = saved\n", ""),)),
    Mutation("numerical_gradient_first_axis_only", G, "numerical-gradient", (
        ("for i in np.ndindex(x.shape):\n        saved = x[i]\n",
         "for i in range(len(x)):\n        saved = x[i].copy()\n"),)),
    Mutation("rel_error_no_floor", G, "rel-error", (
        ("max(scale, 1e-300)", "scale"),)),
    Mutation("rel_error_elementwise", G, "rel-error", (
        ("    scale = np.linalg.norm(a) + np.linalg.norm(b)\n"
         "    return float(np.linalg.norm(a - b) / max(scale, 1e-300))",
         "    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))"),)),
    Mutation("linear_weight_grad_transposed", L, "linear", (
        ("self.weight.grad += self.input.T @ grad_output",
         "self.weight.grad = grad_output.T @ self.input"),)),
    Mutation("linear_grad_averaged_again", L, "linear", (
        ("self.weight.grad += self.input.T @ grad_output",
         "self.weight.grad += self.input.T @ grad_output / len(grad_output)"),
        ("self.bias.grad += grad_output.sum(axis=0)", "self.bias.grad += grad_output.mean(axis=0)"))),
    Mutation("linear_bias_grad_not_summed", L, "linear", (
        ("self.bias.grad += grad_output.sum(axis=0)", "self.bias.grad = self.bias.grad + grad_output"),)),
    Mutation("linear_assigns_grad", L, "linear", (
        ("self.weight.grad += self.input.T @ grad_output", "self.weight.grad = self.input.T @ grad_output"),
        ("self.bias.grad += grad_output.sum(axis=0)", "self.bias.grad = grad_output.sum(axis=0)"))),
    Mutation("linear_input_grad_sign", L, "linear", (
        ("return grad_output @ self.weight.data.T", "return -(grad_output @ self.weight.data.T)"),)),
    Mutation("linear_forward_without_bias", L, "linear", (
        ("        if self.bias is not None:\n            y = y + self.bias.data\n", ""),)),
    Mutation("linear_standard_normal_init", L, "linear", (
        ("weight = rng.uniform(-bound, bound, size=(in_features, out_features))",
         "weight = rng.standard_normal((in_features, out_features))"),)),
    Mutation("relu_forward_in_place", A, "relu-classes", (
        ("        return np.maximum(x, 0)\n", "        x[x < 0] = 0\n        return x\n"),)),
    Mutation("sequential_state_dict_references", S, "state", (
        ("param.data.copy()", "param.data"),
        ("np.array(buffer, copy=True)", "buffer"))),
    # Conv2d is built on col2im and on its own filter matrix: each bug costs its own cell.
    Mutation("col2im_fancy_add", C, "col2im", (
        ("np.add.at(windows, (slice(None),), grads)", "windows += grads"),)),
    Mutation("conv_kernel_flipped", C, "conv2d", (
        ("return self.weight.data.transpose(0, 2, 3, 1)",
         "return self.weight.data[:, :, ::-1, ::-1].transpose(0, 2, 3, 1)"),)),
    # Unit 14: one student per classic mistake of language modelling, each losing its cell.
    Mutation("tokenizer_no_boundary", T, "char-tokenizer", (
        ('self.itos = [boundary, *sorted(set("".join(words)))]',
         'self.itos = sorted(set("".join(words)))'),)),
    Mutation("context_windows_no_end", T, "context-windows", (
        ("for i in range(len(word) + 1):", "for i in range(len(word)):"),)),
    Mutation("context_windows_shifted", T, "context-windows", (
        ("contexts.append(stream[i:i + block_size])",
         "contexts.append(stream[i + 1:i + block_size + 1])"),)),
    Mutation("embedding_fancy_add", T, "embedding", (
        ("np.add.at(self.weight.grad, rows, grads)", "self.weight.grad[rows] += grads"),)),
    Mutation("probabilities_no_temperature", T, "next-token-probabilities", (
        ("scaled = np.asarray(logits, dtype=np.float64) / temperature",
         "scaled = np.asarray(logits, dtype=np.float64)"),)),
    Mutation("sample_from_logits", T, "sample", (
        ("cumulative = np.cumsum(probs, axis=-1)",
         "cumulative = np.cumsum(np.asarray(logits, dtype=np.float64), axis=-1)"),)),
    # Unit 15: one student per classic mistake of attention and the block, each losing its cell.
    Mutation("attention_mask_after_softmax", U, "attention", (
        ("        if attn_mask is not None:\n            scores = np.where(attn_mask, scores, -np.inf)\n", ""),
        ("weights = exp / np.where(total > 0, total, 1.0)\n",
         "weights = exp / np.where(total > 0, total, 1.0)\n"
         "        weights = weights if attn_mask is None else weights * attn_mask\n"))),
    Mutation("attention_scale_by_d", U, "attention", (
        ("1.0 / np.sqrt(query.shape[-1])", "1.0 / query.shape[-1]"),)),
    Mutation("attention_scale_by_c", U, "attention", (
        ("1.0 / np.sqrt(query.shape[-1])",
         "1.0 / np.sqrt(query.shape[1] * query.shape[-1] if query.ndim == 4 else query.shape[-1])"),)),
    Mutation("attention_softmax_over_queries", U, "attention", (
        ("row_max = scores.max(axis=-1, keepdims=True)", "row_max = scores.max(axis=-2, keepdims=True)"),
        ("total = exp.sum(axis=-1, keepdims=True)", "total = exp.sum(axis=-2, keepdims=True)"))),
    Mutation("attention_nan_on_masked_row", U, "attention", (
        ("        row_max = np.where(np.isfinite(row_max), row_max, 0.0)   # a fully masked row: no NaN\n",
         ""),
        ("weights = exp / np.where(total > 0, total, 1.0)", "weights = exp / total"))),
    Mutation("merge_heads_no_transpose", U, "heads", (
        ("return x.transpose(0, 2, 1, 3).reshape(batch, length, heads * depth)",
         "return x.reshape(batch, length, heads * depth)"),)),
    Mutation("layernorm_unbiased_variance", U, "layernorm", (
        ("variance = x.var(axis=-1, keepdims=True)", "variance = x.var(axis=-1, keepdims=True, ddof=1)"),)),
    Mutation("layernorm_over_batch", U, "layernorm", (
        ("mean = x.mean(axis=-1, keepdims=True)\n        variance = x.var(axis=-1, keepdims=True)",
         "mean = x.mean(axis=0, keepdims=True)\n        variance = x.var(axis=0, keepdims=True)"),)),
    Mutation("layernorm_backward_no_mean_terms", U, "layernorm", (
        ("return self.inv_std * (grad_hat - mean_grad - self.normalized * mean_proj)",
         "return self.inv_std * grad_hat"),)),
    Mutation("block_residual_gradient_missing", U, "transformer-block", (
        ("return grad_h + self.norm1.backward(branch)", "return self.norm1.backward(branch)"),)),
    Mutation("block_dropout_in_eval", U, "transformer-block", (
        ("h = x + self.dropout1(self.self_attn.forward(self.norm1(x), is_causal=True))",
         "attended = self.self_attn.forward(self.norm1(x), is_causal=True)\n"
         "        h = x + attended * (np.random.default_rng().random(np.shape(attended)) >= "
         "self.dropout1.p) / (1 - self.dropout1.p)"),)),
    # Unit 16: a student per classic mistake. The model's and the optimizer's are trained by
    # the grader's runs too (loses_run, measured by grading them); the other two the runs do
    # not train on (they make their own samples and decode in their own loop), so each costs
    # its cell and nothing of the runs.
    # The blocks' layers run by hand, the attention called without its causal mask:
    Mutation("gpt_not_causal", P, "gpt", (
        ("        self.head_input = self.ln_f(self.blocks(x))\n",
         "        for block in self.blocks:\n"
         "            h = x + block.dropout1(block.self_attn.forward(block.norm1(x), is_causal=False))\n"
         "            x = h + block.dropout2(block.feed_forward(block.norm2(h)))\n"
         "        self.head_input = self.ln_f(x)\n"),),
        loses_run=("grade-gpt-sorter", "grade-gpt-namer")),
    # The position table looked up, and never added (the grader's rebuilt GPT-2 forward adds it,
    # so the namer's own forward does clearly better than the rebuilt one: listed for review):
    Mutation("gpt_no_position_embeddings", P, "gpt", (
        ("x = self.wte(idx) + self.wpe(np.arange(idx.shape[1]))",
         "x, positions = self.wte(idx), self.wpe(np.arange(idx.shape[1]))"),),
        loses_run=("grade-gpt-sorter",), reviewed=True),
    # The head's gradient written last, with =, over the lookup's:
    Mutation("gpt_tied_gradient_not_summed", P, "gpt", (
        ("        self.wte.weight.grad += (grad_logits.reshape(-1, self.vocab_size).T\n"
         "                                 @ self.head_input.reshape(-1, width))\n", ""),
        ("        self.wpe.backward(grad.sum(axis=0))\n",
         "        self.wpe.backward(grad.sum(axis=0))\n"
         "        self.wte.weight.grad = (grad_logits.reshape(-1, self.vocab_size).T\n"
         "                                @ self.head_input.reshape(-1, width))\n"))),
    Mutation("weight_decay_on_everything", P, "weight-decay-groups", (
        ('"params": [p for p in params if p.data.ndim >= 2]', '"params": params'),
        ("[p for p in params if p.data.ndim < 2]", "[]"))),
    Mutation("sort_examples_prompt_counted", P, "sort-examples", (
        ("    Y[:, :PROBLEM_LENGTH - 1] = IGNORE\n", ""),)),
    Mutation("next_token_distribution_not_cropped", P, "generation", (
        ("model(np.asarray(idx)[:, -model.block_size:])", "model(np.asarray(idx))"),)),
    # The grader's run trains the notebook's model with this train(): its NLL on the grader's
    # held-out names (2.32) misses the threshold (2.15), and the message names the validation split.
    Mutation("train_on_validation", T, "train-language-model", (
        ("TensorDataset(X, y)", "TensorDataset(X_val, y_val)"),),
        loses_run=("grade-language-model",)),
)

# One bug per solution cell, for Linear one in the forward and one in the backward pass, and
# unit 13's col2im under the Conv2d built on it, and a student per classic mistake of unit
# 14's language model, of unit 15's attention and block and of unit 16's GPT: what ``make
# demo`` grades. Every bug of the catalogue is caught by its checks in tests/autograder (the
# mutation audit, in-process); tests/pipeline grades every mutation above through nbgrader.
REPRESENTATIVE = tuple(m for m in MUTATIONS if m.mutant in (
    "numerical_gradient_not_restoring_x", "rel_error_no_floor",
    "linear_forward_without_bias", "linear_weight_grad_transposed", "col2im_fancy_add",
    "tokenizer_no_boundary", "context_windows_no_end", "context_windows_shifted",
    "embedding_fancy_add", "probabilities_no_temperature", "sample_from_logits",
    "train_on_validation")
    or m.unit in (U, P))
