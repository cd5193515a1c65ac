"""Unit 16's GPT, its parameter groups, clipping, samples and generation, each with one
classic bug.

The model mutants subclass the source notebook's own ``GPT`` (on unit 15's notebook
``TransformerBlock``) and replace the one method the bug lives in; the functions are written
as the notebook's solution has a student write them, with the one step changed.
"""
from __future__ import annotations

import numpy as np
from scipy.special import softmax

from autograder.mutants import Mutant, Variant
from autograder.mutants._solutions import solution
from minitorch_ref.data import IGNORE_INDEX

GPT = solution("GPT")
G = "GPT"


def _embedded(model, idx: np.ndarray) -> np.ndarray:
    return model.wte(idx) + model.wpe(np.arange(idx.shape[1]))


def _head(model, x: np.ndarray) -> np.ndarray:
    model.head_input = model.ln_f(x)
    return model.head_input @ model.wte.weight.data.T


class NoPositions(GPT):
    def forward(self, idx):
        return _head(self, self.blocks(self.wte(np.asarray(idx))))


class NotCausal(GPT):
    """Every block's attention reads the whole sequence (the block's own layers, unmasked)."""

    def forward(self, idx):
        x = _embedded(self, np.asarray(idx))
        for block in self.blocks:
            h = x + block.dropout1(block.self_attn.forward(block.norm1(x), is_causal=False))
            x = h + block.dropout2(block.feed_forward(block.norm2(h)))
        return _head(self, x)


class TiedGradientNotSummed(GPT):
    """The head's gradient written over the lookup's."""

    def backward(self, grad_logits):
        width = self.head_input.shape[-1]
        grad = self.blocks.backward(self.ln_f.backward(grad_logits @ self.wte.weight.data))
        self.wte.backward(grad)
        self.wpe.backward(grad.sum(axis=0))
        self.wte.weight.grad = (grad_logits.reshape(-1, self.vocab_size).T
                                @ self.head_input.reshape(-1, width))


def decay_everything(model, weight_decay):
    return [{"params": model.parameters(), "weight_decay": weight_decay},
            {"params": [], "weight_decay": 0.0}]


def _norm(grads: list) -> float:
    return float(np.sqrt(sum(float((g ** 2).sum()) for g in grads)))


def _scaled(parameters, factor) -> list:
    """The gradients that are not None, each multiplied in place by ``factor(its array)``."""
    grads = [p.grad for p in parameters if p.grad is not None]
    for g in grads:
        g *= factor(g)
    return grads


def _total(parameters) -> float:
    return _norm([p.grad for p in parameters if p.grad is not None])


def clip_each_parameter(parameters, max_norm):
    total = _total(parameters)
    _scaled(parameters, lambda g: min(1.0, max_norm / (_norm([g]) + 1e-6)))
    return total


def clip_always_scaling(parameters, max_norm):
    total = _total(parameters)
    _scaled(parameters, lambda g: max_norm / (total + 1e-6))
    return total


def clip_returning_norm_after(parameters, max_norm):
    total = _total(parameters)
    return _norm(_scaled(parameters, lambda g: min(1.0, max_norm / (total + 1e-6))))


def clip_by_reassigning(parameters, max_norm):
    kept = [p for p in parameters if p.grad is not None]
    total = float(np.linalg.norm(np.concatenate([p.grad.ravel() for p in kept]))) if kept else 0.0
    for p in kept:
        p.grad = p.grad * min(1.0, max_norm / (total + 1e-6))
    return total


def sort_examples_prompt_counted(problems):
    problems = np.asarray(problems, dtype=np.int64)
    sequences = np.concatenate([problems, np.sort(problems, axis=1)], axis=1)
    return sequences[:, :-1].copy(), sequences[:, 1:].copy()


def _distribution(logits: np.ndarray, temperature: float, top_k) -> np.ndarray:
    logits = logits / temperature
    if top_k is not None:
        kth = np.sort(logits, axis=-1)[:, [-top_k]]
        logits = np.where(logits < kth, -np.inf, logits)
    return softmax(logits, axis=-1)


def distribution_not_cropped(model, idx, temperature=1.0, top_k=None):
    return _distribution(model(np.asarray(idx))[:, -1], temperature, top_k)


def distribution_without_temperature(model, idx, temperature=1.0, top_k=None):
    return _distribution(model(np.asarray(idx)[:, -model.block_size:])[:, -1], 1.0, top_k)


def generate_greedy(model, idx, max_new_tokens, temperature=1.0, top_k=None, rng=None):
    idx = np.asarray(idx, dtype=np.int64)
    for _ in range(max_new_tokens):
        probs = solution("next_token_distribution")(model, idx, temperature, top_k)
        idx = np.concatenate([idx, probs.argmax(axis=-1)[:, None]], axis=1)
    return idx


MUTANTS = [
    Mutant("gpt_no_position_embeddings", G, NoPositions, "position embeddings",
           "X0 = wte(idx): the position table never added"),
    Mutant("gpt_not_causal", G, NotCausal, "not causal",
           "the blocks' attention without the causal mask: training reads the answer"),
    Mutant("gpt_tied_gradient_not_summed", G, TiedGradientNotSummed, "lookup's gradient",
           "wte.weight.grad = the head's G^T X, over the lookup's gradient"),
    Mutant("weight_decay_on_everything", "weight_decay_groups", decay_everything,
           "LayerNorm weights", "weight decay on LayerNorm's weights and the biases too"),
    Mutant("clip_grad_norm_per_parameter", "clip_grad_norm_", clip_each_parameter, "on its own",
           "each gradient clipped to max_norm alone, not the total norm of all of them"),
    Mutant("clip_grad_norm_always_scaling", "clip_grad_norm_", clip_always_scaling,
           "below max_norm", "the factor max_norm / total applied even when it is above 1"),
    Mutant("clip_grad_norm_returns_norm_after", "clip_grad_norm_", clip_returning_norm_after,
           "after clipping", "the norm returned is the one after clipping, not before"),
    Mutant("sort_examples_prompt_counted", "sort_examples", sort_examples_prompt_counted,
           "no target is -100", f"the loss on the prompt tokens: no target at {IGNORE_INDEX}"),
    Mutant("next_token_distribution_not_cropped", "next_token_distribution",
           distribution_not_cropped, "crop the context", "the whole context given to the model"),
    Mutant("next_token_distribution_no_temperature", "next_token_distribution",
           distribution_without_temperature, "ignore temperature", "softmax(z) whatever the temperature"),
    Mutant("generate_greedy", "generate", generate_greedy, "greedy decoding",
           "the most likely token at every step, not a draw"),
]

VARIANTS = [
    Variant("clip_grad_norm_reassigning", "clip_grad_norm_", clip_by_reassigning,
            "one norm of the joined gradients, and each .grad replaced by a scaled copy instead "
            "of scaled in place: the optimizer reads .grad anew at every step"),
]
