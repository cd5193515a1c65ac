"""Unit 15's attention, heads, LayerNorm and transformer block, each with one classic bug.

The attention mutants are written as the notebook's skeleton has a student write it (``scale``
and ``weights`` computed, then ``attn_weights`` and ``saved = (query, key, value, scale)``
stored), each replacing one step; the LayerNorm mutants subclass the reference and replace the
one method the bug lives in; the block mutants subclass the source notebook's own
``TransformerBlock``.
"""
from __future__ import annotations

import math

import numpy as np

from autograder.mutants import Mutant
from autograder.mutants._solutions import solution
from minitorch_ref import nn


# ---------------------------------------------------------------------------- attention
def _softmax(scores: np.ndarray, axis: int = -1, guard: bool = True) -> np.ndarray:
    row_max = scores.max(axis=axis, keepdims=True)
    if guard:
        row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    with np.errstate(invalid="ignore"):
        exp = np.exp(scores - row_max)
        total = exp.sum(axis=axis, keepdims=True)
        return exp / (np.where(total > 0, total, 1.0) if guard else total)


class _Attention(nn.Module):
    def __init__(self, is_causal=False, scale=None):
        super().__init__()
        self.is_causal, self.scale = is_causal, scale
        self.attn_weights = self.saved = None

    def _scale(self, query):
        return 1.0 / math.sqrt(query.shape[-1]) if self.scale is None else self.scale

    def _weights(self, scores, attn_mask):
        if attn_mask is not None:
            scores = np.where(attn_mask, scores, -np.inf)
        return _softmax(scores)

    def forward(self, query, key, value, attn_mask=None):
        query, key, value = (np.asarray(a, dtype=float) for a in (query, key, value))
        if self.is_causal:
            attn_mask = nn.causal_mask(query.shape[-2], key.shape[-2])
        scale = self._scale(query)
        weights = self._weights(scale * (query @ np.swapaxes(key, -1, -2)), attn_mask)
        self.attn_weights, self.saved = weights, (query, key, value, scale)
        return weights @ value

    def _grad_scores(self, weights, grad_weights):
        return weights * (grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True))

    def backward(self, grad_output):
        query, key, value, scale = self.saved
        weights = self.attn_weights
        grad_scores = scale * self._grad_scores(weights, grad_output @ np.swapaxes(value, -1, -2))
        return (grad_scores @ key, np.swapaxes(grad_scores, -1, -2) @ query,
                np.swapaxes(weights, -1, -2) @ grad_output)


class MaskAfterSoftmax(_Attention):
    def _weights(self, scores, attn_mask):
        weights = _softmax(scores)
        return weights if attn_mask is None else weights * attn_mask


class ScaleByD(_Attention):
    def _scale(self, query):
        return 1.0 / query.shape[-1] if self.scale is None else self.scale


class ScaleByC(_Attention):
    def _scale(self, query):
        if self.scale is None and query.ndim == 4:      # (B, H, T, D): C = H * D
            return 1.0 / math.sqrt(query.shape[1] * query.shape[-1])
        return super()._scale(query)


class NoScale(_Attention):
    def _scale(self, query):
        return 1.0 if self.scale is None else self.scale


class SoftmaxOverQueries(_Attention):
    def _weights(self, scores, attn_mask):
        if attn_mask is not None:
            scores = np.where(attn_mask, scores, -np.inf)
        return _softmax(scores, axis=-2)


class NanOnMaskedRow(_Attention):
    def _weights(self, scores, attn_mask):
        if attn_mask is not None:
            scores = np.where(attn_mask, scores, -np.inf)
        return _softmax(scores, guard=False)


class BackwardNoRowsum(_Attention):
    def _grad_scores(self, weights, grad_weights):
        return weights * grad_weights


class BackwardNoScale(_Attention):
    def backward(self, grad_output):
        query, key, value, scale = self.saved
        self.saved = (query, key, value, 1.0)
        try:
            return super().backward(grad_output)
        finally:
            self.saved = (query, key, value, scale)


class BackwardUnmasked(_Attention):
    def backward(self, grad_output):
        query, key, value, scale = self.saved
        self.attn_weights = _softmax(scale * (query @ np.swapaxes(key, -1, -2)))
        return super().backward(grad_output)


# ---------------------------------------------------------------------------- heads
def split_heads_no_transpose(x, num_heads):
    batch, length, width = x.shape
    return x.reshape(batch, num_heads, length, width // num_heads)


def split_heads_interleaved(x, num_heads):
    batch, length, width = x.shape
    return x.reshape(batch, length, width // num_heads, num_heads).transpose(0, 3, 1, 2)


def merge_heads_no_transpose(x):
    batch, heads, length, depth = x.shape
    return x.reshape(batch, length, heads * depth)


def merge_heads_interleaved(x):
    batch, heads, length, depth = x.shape
    return x.transpose(0, 2, 3, 1).reshape(batch, length, heads * depth)


# ---------------------------------------------------------------------------- LayerNorm
class _LayerNormStatistics(nn.LayerNorm):
    """LayerNorm's forward with its statistics taken by ``_statistics``."""

    def forward(self, x):
        x = self._check(x)
        centred, inv_std = self._statistics(x)
        self.inv_std, self.normalized = inv_std, centred * inv_std
        return self.normalized * self.weight.data + self.bias.data


class LayerNormUnbiased(_LayerNormStatistics):
    def _statistics(self, x):
        return x - x.mean(axis=-1, keepdims=True), 1 / np.sqrt(x.var(axis=-1, ddof=1,
                                                                      keepdims=True) + self.eps)


class LayerNormOverBatch(_LayerNormStatistics):
    def _statistics(self, x):
        return x - x.mean(axis=0, keepdims=True), 1 / np.sqrt(x.var(axis=0, keepdims=True)
                                                               + self.eps)


class LayerNormEpsOutside(_LayerNormStatistics):
    def _statistics(self, x):
        return x - x.mean(axis=-1, keepdims=True), 1 / (x.std(axis=-1, keepdims=True) + self.eps)


class LayerNormNoMeanTerms(nn.LayerNorm):
    def backward(self, grad_output):
        super().backward(grad_output)
        return self.inv_std * grad_output * self.weight.data


class LayerNormBiasNotSummed(nn.LayerNorm):
    def backward(self, grad_output):
        grad_input = super().backward(grad_output)
        self.bias.grad -= np.sum(grad_output, axis=tuple(range(grad_output.ndim - 1)))
        self.bias.grad += np.reshape(grad_output, (-1, grad_output.shape[-1]))[0]
        return grad_input


# ---------------------------------------------------------------------------- the block
Block = solution("TransformerBlock")


def _dropped(x, p):
    """Inverted dropout written inline, whatever the mode."""
    return x * (np.random.default_rng().random(np.shape(x)) >= p) / (1 - p)


class BlockDropoutInEval(Block):
    def forward(self, x):
        h = x + _dropped(self.self_attn.forward(self.norm1(x), is_causal=True), self.dropout1.p)
        return h + _dropped(self.feed_forward(self.norm2(h)), self.dropout2.p)


class BlockPostNorm(Block):
    def forward(self, x):
        h = self.norm1(x + self.self_attn.forward(x, is_causal=True))
        return self.norm2(h + self.feed_forward(h))


class BlockNotCausal(Block):
    def forward(self, x):
        h = x + self.dropout1(self.self_attn.forward(self.norm1(x)))
        return h + self.dropout2(self.feed_forward(self.norm2(h)))


class BlockResidualGradientMissing(Block):
    def backward(self, grad_output):
        branch = self.feed_forward.backward(self.dropout2.backward(grad_output))
        grad_h = grad_output + self.norm2.backward(branch)
        return self.norm1.backward(self.self_attn.backward(self.dropout1.backward(grad_h)))


class BlockFeedForwardResidualMissing(Block):
    def backward(self, grad_output):
        grad_h = self.norm2.backward(self.feed_forward.backward(self.dropout2.backward(grad_output)))
        return grad_h + self.norm1.backward(self.self_attn.backward(self.dropout1.backward(grad_h)))


A, L, B = "ScaledDotProductAttention", "LayerNorm", "TransformerBlock"
MUTANTS = [
    Mutant("attention_mask_after_softmax", A, MaskAfterSoftmax, "after the softmax",
           "the weights zeroed after the softmax instead of -inf scores before it"),
    Mutant("attention_scale_by_d", A, ScaleByD, "divided by D", "scores divided by D, not sqrt(D)"),
    Mutant("attention_scale_by_c", A, ScaleByC, "model's width",
           "scores scaled by 1/sqrt(H * D), the model's width, not the head's"),
    Mutant("attention_no_scale", A, NoScale, "not scaled", "Q K^T without the 1/sqrt(E)"),
    Mutant("attention_softmax_over_queries", A, SoftmaxOverQueries, "wrong axis",
           "the softmax taken along the queries (axis -2)"),
    Mutant("attention_nan_on_masked_row", A, NanOnMaskedRow, "fully masked",
           "the -inf mask gives NaN on a query that may read no key"),
    Mutant("attention_backward_no_rowsum", A, BackwardNoRowsum, "rowsum",
           "the softmax backward as P * dL/dP"),
    Mutant("attention_backward_no_scale", A, BackwardNoScale, "misses the scale",
           "dL/dQ and dL/dK without the scale"),
    Mutant("attention_backward_unmasked", A, BackwardUnmasked, "without the mask",
           "backward recomputes the weights without the mask: gradient reaches masked keys"),
    Mutant("split_heads_no_transpose", "split_heads", split_heads_no_transpose, "straight to",
           "(B, T, C) reshaped to (B, H, T, D) without the transpose"),
    Mutant("split_heads_interleaved", "split_heads", split_heads_interleaved, "every H-th",
           "head h gets features h, h + H, ..."),
    Mutant("merge_heads_no_transpose", "merge_heads", merge_heads_no_transpose, "wrong order",
           "heads merged by a reshape without the transpose"),
    Mutant("merge_heads_interleaved", "merge_heads", merge_heads_interleaved, "interleaved",
           "the heads' features interleaved"),
    Mutant("layernorm_unbiased_variance", L, LayerNormUnbiased, "unbiased",
           "the variance with ddof=1"),
    Mutant("layernorm_over_batch", L, LayerNormOverBatch, "wrong axis",
           "statistics over the batch axis, as BatchNorm"),
    Mutant("layernorm_eps_outside", L, LayerNormEpsOutside, "inside the square root",
           "x_hat = (x - mu) / (std + eps)"),
    Mutant("layernorm_backward_no_mean_terms", L, LayerNormNoMeanTerms, "mean terms",
           "dL/dx = r * g * weight, as if mean and variance were constants"),
    Mutant("layernorm_bias_not_summed", L, LayerNormBiasNotSummed, None,
           "dL/dbias from the first token only"),
    Mutant("block_dropout_in_eval", B, BlockDropoutInEval, "kept in eval",
           "dropout written inline, applied after eval()"),
    Mutant("block_post_norm", B, BlockPostNorm, "post-norm", "LayerNorm after the additions"),
    Mutant("block_not_causal", B, BlockNotCausal, "not causal",
           "self-attention without the causal mask"),
    Mutant("block_residual_gradient_missing", B, BlockResidualGradientMissing,
           "misses the residual's gradient", "dL/dx = the attention branch's gradient alone"),
    Mutant("block_feed_forward_residual_missing", B, BlockFeedForwardResidualMissing,
           "feed-forward residual", "dL/dh without grad_output"),
]
