"""Whole models assembled from ``minitorch_ref.nn``: unit 16's GPT."""
from minitorch_ref.models.gpt import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig"]
