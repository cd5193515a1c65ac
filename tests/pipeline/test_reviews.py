"""A graded cell marked for an instructor's review keeps its score, and the run's summary
names it (``autograder.pipeline.flags``; unit 14's run on the held-out names is the case:
``tests/autograder/test_language_training.py``)."""
from __future__ import annotations

import json

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograder.cells import visible
from autograder.checks import language_training
from autograder.checks.graded_training import Run
from autograder.pipeline import flags, gradebook
from autograder.pipeline.job.job import Job, Result, _read_graded, record
from autograder.pipeline.ledger.grade import Summary

GRADED = Run(seconds=1.0, score=1.8, figures={"val_nll": 2.05})


def _cell(grade_id: str, points: int = 10) -> nbformat.NotebookNode:
    return new_code_cell("run = graded_run()", metadata={"nbgrader": {
        "grade": True, "grade_id": grade_id, "points": points, "solution": False}})


def _reason(monkeypatch) -> list:
    """The outputs the grader gives unit 14's graded cell on a run far too good."""
    monkeypatch.setitem(visible.VERDICTS, "grade-language-model",
                        (lambda channel, cpu, wall: GRADED, language_training.language_model))
    return visible.Verdicts(lambda: 0.0).judge(None, "grade-language-model", 60.0)


def test_the_reason_is_read_back_from_the_graders_outputs_only(monkeypatch):
    outputs = _reason(monkeypatch)
    assert not any(o.output_type == "error" for o in outputs)       # nbgrader scores it
    assert visible.reviewed(outputs).startswith("the NLL on the held-out names, 1.800")
    assert visible.reviewed(visible.scored([], [])) is None


def test_a_cell_marked_for_review_keeps_its_score_and_the_job_reads_the_mark(tmp_path):
    marked, plain, faulted = _cell("grade-language-model"), _cell("grade-other"), _cell("grade-x")
    flags.mark_review(marked, "too good to be true")
    flags.mark(faulted, flags.Flag.GRADER_FAULT, "the grader failed")
    cells = [marked, plain, faulted]
    assert flags.reviews(cells) == {"grade-language-model": "too good to be true"}
    assert list(flags.marked(cells)) == ["grade-x"]                  # only the fault is unscored
    path = tmp_path / "graded.ipynb"
    nbformat.write(new_notebook(cells=cells), str(path))
    result = Result(gradebook.Outcome("alice", "14_language"))
    assert list(_read_graded(path, [], result)) == ["grade-x"]
    assert result.reviews == {"grade-language-model": "too good to be true"}
    flags.clear(cells)                          # what a submission brings is gone before the run
    assert flags.reviews(cells) == {} and flags.marked(cells) == {}


def test_the_summary_names_each_cell_for_review_in_one_line():
    text = str(Summary(reviews=["alice/14_language (grade-language-model): too good"],
                       where="here"))
    assert "; 1 graded cell(s) for review (scores unchanged): alice/14_language " \
           "(grade-language-model): too good" in text
    assert "\n" not in text and "0 flagged for review" in text   # nor does the run fail for it


def test_the_record_keeps_them():
    result = Result(gradebook.Outcome("alice", "14_language"), reviews={"grade-language-model": "why"})
    job = Job("alice", "14_language", {}, {}, "digest")
    assert json.loads(record(job, result, 1.0, True))["reviews"] == {"grade-language-model": "why"}

