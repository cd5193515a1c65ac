"""Layers, activations, losses and containers with manual forward/backward passes."""
from minitorch_ref.nn import init
from minitorch_ref.nn.activation import (
    GELU, Activation, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh,
)
from minitorch_ref.nn.attention import (
    ScaledDotProductAttention, causal_mask, merge_heads, scaled_dot_product_attention, split_heads,
)
from minitorch_ref.nn.batchnorm import BatchNorm1d
from minitorch_ref.nn.container import Sequential
from minitorch_ref.nn.conv import Conv2d
from minitorch_ref.nn.dropout import Dropout
from minitorch_ref.nn.flatten import Flatten
from minitorch_ref.nn.im2col import col2im, im2col
from minitorch_ref.nn.linear import Identity, Linear
from minitorch_ref.nn.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Loss, MSELoss, NLLLoss,
)
from minitorch_ref.nn.module import Module
from minitorch_ref.nn.multihead import MultiheadAttention
from minitorch_ref.nn.normalization import LayerNorm
from minitorch_ref.nn.parameter import Parameter
from minitorch_ref.nn.pooling import AvgPool2d, MaxPool2d
from minitorch_ref.nn.sparse import Embedding
from minitorch_ref.nn.transformer import TransformerEncoderLayer

__all__ = [
    "init", "Parameter", "Module", "Sequential", "Linear", "Identity", "Embedding", "Flatten",
    "Activation", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
    "Dropout", "BatchNorm1d", "Conv2d", "MaxPool2d", "AvgPool2d", "im2col", "col2im",
    "LayerNorm", "ScaledDotProductAttention", "scaled_dot_product_attention", "causal_mask",
    "split_heads", "merge_heads", "MultiheadAttention", "TransformerEncoderLayer",
    "Loss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss",
]
