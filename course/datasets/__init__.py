"""Datasets for the course: seeded toy problems, real digits, first names, sorting problems,
CPython's help text and a train/test split.

Every function returns numpy arrays (`load_names`: lists of strings, `load_python_docs`:
strings); the same arguments always give the same arrays.
"""
from course.datasets.digits import default_cache_dir, load_digits, load_mnist
from course.datasets.names import NameSplits, load_names
from course.datasets.python_docs import TextSplits, load_python_docs
from course.datasets.sorting import sorting_problems
from course.datasets.split import train_test_split
from course.datasets.toy import (
    TOY_2D, blobs, circles, make_2d, moons, regression_curve, spiral, xor,
)

__all__ = [
    "spiral", "circles", "moons", "xor", "blobs", "regression_curve", "TOY_2D", "make_2d",
    "train_test_split", "load_mnist", "load_digits", "default_cache_dir",
    "load_names", "NameSplits", "sorting_problems", "load_python_docs", "TextSplits",
]
