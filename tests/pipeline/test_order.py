"""Grading starts with the submissions that will take longest, so no worker idles at the end."""
from __future__ import annotations

from autograder.pipeline.course import Course
from autograder.pipeline.ledger.grade import longest_first


def _submit(root, student: str, unit: str, notebook_bytes: int, other_bytes: int = 0) -> None:
    folder = root / "submitted" / student / unit
    folder.mkdir(parents=True)
    (folder / f"{unit}.ipynb").write_bytes(b"x" * notebook_bytes)
    (folder / "data.npy").write_bytes(b"x" * other_bytes)


def test_the_largest_notebooks_go_first(tmp_path):
    _submit(tmp_path, "ada", "03_linear", 10_000)
    _submit(tmp_path, "ada", "09_training", 120_000)
    _submit(tmp_path, "bob", "03_linear", 40_000)
    _submit(tmp_path, "bob", "09_training", 90_000)
    todo = [("ada", "03_linear"), ("bob", "03_linear"), ("ada", "09_training"),
            ("bob", "09_training")]
    assert longest_first(Course(tmp_path), todo) == [
        ("ada", "09_training"), ("bob", "09_training"), ("bob", "03_linear"), ("ada", "03_linear")]


def test_data_files_and_links_do_not_count_and_ties_keep_their_order(tmp_path):
    _submit(tmp_path, "ada", "03_linear", 1_000, other_bytes=10_000_000)   # a large saved array
    _submit(tmp_path, "bob", "03_linear", 1_000)
    _submit(tmp_path, "cyd", "03_linear", 2_000)
    big = tmp_path / "elsewhere.ipynb"
    big.write_bytes(b"x" * 1_000_000)
    (tmp_path / "submitted" / "bob" / "03_linear" / "linked.ipynb").symlink_to(big)
    todo = [("ada", "03_linear"), ("bob", "03_linear"), ("cyd", "03_linear")]
    assert longest_first(Course(tmp_path), todo) == [
        ("cyd", "03_linear"), ("ada", "03_linear"), ("bob", "03_linear")]
