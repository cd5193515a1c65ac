"""Datasets and mini-batch loading, as ``torch.utils.data``."""
from minitorch_ref.data.dataloader import DataLoader, default_collate
from minitorch_ref.data.dataset import Dataset, Subset, TensorDataset, random_split
from minitorch_ref.data.sequences import IGNORE_INDEX, name_sequences, sort_examples
from minitorch_ref.data.text import CharTokenizer, context_windows

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate",
           "CharTokenizer", "context_windows", "sort_examples", "name_sequences", "IGNORE_INDEX"]
