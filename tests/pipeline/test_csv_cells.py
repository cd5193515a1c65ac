"""The course's CSV cells (autograder/pipeline/csv_cells.py): inert in a spreadsheet, as
OWASP's CSV injection page says, and read back as they were. (Every file written with them,
from real LMS downloads: test_zip_collect_hostile.py.)"""
from __future__ import annotations

import pytest

from autograder.pipeline.csv_cells import inert, read_csv, revived, write_csv


@pytest.mark.parametrize("value, cell", [
    ('=HYPERLINK("evil.example","Jane")', '\'=HYPERLINK("evil.example","Jane")'),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"), ("\t=1", "'\t=1"), ("\r=1", "'\r=1"),
])
def test_a_cell_that_would_start_a_formula_gets_a_quote(value, cell):
    assert inert(value) == cell and revived(cell) == value


@pytest.mark.parametrize("value", ["Jane Doe", "José García", "a=b", "'quoted", "-2.5", "-3",
                                   "1e-05", "", "O'Brien, Zoë"])
def test_everything_else_is_unchanged(value):
    assert inert(value) == value and revived(value) == value


def test_a_file_reads_back_as_written_every_field_quoted(tmp_path):
    rows = [["name", "score"], ["=1+1", -1.5], ["Roe, Bob", None]]
    text = write_csv(tmp_path / "x.csv", rows).read_text(encoding="utf-8")
    assert text.splitlines() == ['"name","score"', '"\'=1+1","-1.5"', '"Roe, Bob",""']
    assert read_csv(tmp_path / "x.csv") == [{"name": "=1+1", "score": "-1.5"},
                                            {"name": "Roe, Bob", "score": ""}]
