"""course.datasets.load_python_docs: CPython's help topics as one text, split as nanoGPT splits."""
from __future__ import annotations

import sys

import pytest
from pydoc_data import topics

from course.datasets import load_python_docs


def test_the_text_is_every_help_topic_and_the_split_cuts_it_in_two():
    docs = load_python_docs()
    assert docs.train + docs.val == docs.text
    assert len(docs.text) > 300_000
    assert round(len(docs.val) / len(docs.text), 3) == 0.1
    assert topics.topics["assert"].strip("\n") in docs.text
    assert docs.text.index(topics.topics["assert"].strip("\n")) < docs.text.index(
        topics.topics["while"].strip("\n"))   # the topics come in the order of their names


def test_the_same_call_gives_the_same_text_and_the_fraction_moves_the_cut():
    assert load_python_docs(0.2) == load_python_docs(0.2)
    assert len(load_python_docs(0.2).val) > len(load_python_docs(0.1).val)


@pytest.mark.parametrize("val_size", [0, 1, 1.5, -0.1, "0.1", True])
def test_a_bad_fraction_is_refused(val_size):
    with pytest.raises(ValueError, match="val_size must be a fraction strictly between 0 and 1"):
        load_python_docs(val_size)


def test_a_python_without_the_topics_gets_a_message_that_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)   # what a missing module does
    with pytest.raises(ModuleNotFoundError, match=r"no pydoc_data\.topics.*libpython3\.X-stdlib"):
        load_python_docs()
