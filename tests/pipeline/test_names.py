"""The one rule for names a student controls (autograder/pipeline/names.py)."""
from __future__ import annotations

import pytest

from autograder.pipeline import names


@pytest.mark.parametrize("name", ["alice", "jane-doe", "doejane_1302", "01_setup", "A.b-c_9"])
def test_plain_names_are_safe(name):
    assert names.is_safe(name)
    assert names.problem(name) is None


@pytest.mark.parametrize("name, why", [
    ("", "empty"),
    ("..", "starts with a dot"),
    (".hidden", "starts with a dot"),
    ("<img src=x onerror=alert(1)>", "'<'"),
    ("a/b", "'/'"),
    ("bob+01_setup", "'+'"),
    ("garcíajosé", "'é'"),
    ("x" * 101, "longer than 100"),
])
def test_unsafe_names_are_refused_with_the_reason(name, why):
    message = names.problem(name, "student id")
    assert not names.is_safe(name)
    assert message.startswith("the student id") and why in message


@pytest.mark.parametrize("name, form", [
    ("03_module_linear (1).ipynb", "03_module_linear__1_.ipynb"),
    (".hidden.ipynb", "hidden.ipynb"),
    ("garcía.ipynb", "garc_a.ipynb"),
    ("<>", None),
    ("...", None),
])
def test_a_safe_form_replaces_what_is_not_allowed(name, form):
    assert names.safe_form(name) == form
