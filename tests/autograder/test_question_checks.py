"""The checks of the notebooks' questions (``autograder.checks.questions``): the source
notebooks' answers pass, every other answer fails with a message that names the question and
not the answer, and graded from outside the kernel only the value counts: an object that says
it equals everything scores nothing."""
from __future__ import annotations

import re

import numpy as np
import pytest

from autograder import audit
from autograder.audit_remote import agent_kernel
from autograder.checks.questions import QUESTIONS, Choice, Number, variable
from autograder.mutants._answers import answer
from autograder.registry import CHECKS
from autograder.cells import hidden
from course.testing import CheckFailure, expect_choice, expect_number

NAMES = [f"question_{q.unit}_{q.key}" for q in QUESTIONS]
CHOICES = [q for q in QUESTIONS if isinstance(q, Choice)]
NUMBERS = [q for q in QUESTIONS if isinstance(q, Number)]


def failure(question, value) -> str | None:
    """The message of ``question``'s check on the answer ``value``, in-process, or None."""
    try:
        CHECKS[f"question_{question.unit}_{question.key}"].run(value)
    except CheckFailure as error:
        return str(error)
    return None


def test_every_unit_asks_two_questions_the_capstone_three_each_a_check():
    units = sorted({q.unit for q in QUESTIONS})
    assert units == ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13",
                     "14", "15", "16"]
    assert all(sum(q.unit == u for q in QUESTIONS) == (3 if u == "11" else 2) for u in units)
    assert all(CHECKS[name].answers == {CHECKS[name].targets[0]} for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_source_notebooks_answer_passes(name):
    assert audit.run(CHECKS[name]) is None


@pytest.mark.parametrize("question", CHOICES, ids=lambda q: q.key)
def test_every_other_choice_fails_without_giving_the_answer_away(question):
    assert failure(question, f" {question.right.upper()} ") is None    # case and spaces forgiven
    for wrong in set(question.choices) - {question.right}:
        message = failure(question, wrong)
        assert message.startswith(f"Question {question.number}: '{wrong}' is not the right answer")
        assert f"'{question.right}'" not in message and f'"{question.right}"' not in message


@pytest.mark.parametrize("question", NUMBERS, ids=lambda q: q.key)
def test_a_number_outside_its_tolerance_fails_without_giving_the_answer_away(question):
    inside = question.value * (1 + question.rtol / 2)
    outside = question.value * (1 + 2 * question.rtol) if question.rtol else question.value + 1
    assert failure(question, inside) is None
    message = failure(question, outside)
    assert message.startswith(f"Question {question.number}: ") and "not the right answer" in message
    assert not re.search(rf"(?<![\d.]){re.escape(f'{question.value:.4g}')}(?!\d)", message)


def test_a_wrong_number_is_shown_as_the_student_wrote_it():
    """Before: 102,027 for 102,026 read '1.02e+05 is not the right answer', as the right one would."""
    parameters = next(q for q in NUMBERS if q.key == "parameters")
    assert failure(parameters, 102027).startswith("Question 11.2: 102027 is not the right answer.")
    assert failure(parameters, 1e5 + 0.5).startswith("Question 11.2: 100000.5 is not")
    assert failure(parameters, 1.5e20).startswith("Question 11.2: 1.5e+20 is not")


@pytest.mark.parametrize("question", [CHOICES[0], NUMBERS[0]], ids=["choice", "number"])
@pytest.mark.parametrize("value, said", [
    (None, "not answered yet"), ("", "the answer is"), ("ab", "the answer is"),
    (["b"], "the answer is"), (True, "the answer is"),
    (float("nan"), "the answer is"),
])
def test_an_answer_of_the_wrong_form_fails_with_what_is_expected(question, value, said):
    if isinstance(question, Choice) and isinstance(value, float):
        said = "one of the strings"
    assert said in failure(question, value)


def test_the_visible_tests_stop_at_an_unanswered_question_and_explain_a_wrong_form():
    with pytest.raises(NotImplementedError, match="not answered yet"):
        expect_choice("answer_02_tiny", None, "abcd")
    with pytest.raises(NotImplementedError, match="not answered yet"):
        expect_number("answer_03_fan_out", None)
    with pytest.raises(CheckFailure, match='one of the strings "a", "b", "c", "d"'):
        expect_choice("answer_02_tiny", "e", "abcd")
    with pytest.raises(CheckFailure, match="a number"):
        expect_number("answer_03_fan_out", "0.07")
    expect_choice("answer_02_tiny", "B", "abcd")
    expect_number("answer_03_fan_out", np.float32(0.07))


def test_the_reference_answers_are_read_from_the_source_notebooks():
    assert answer("answer_02_tiny") == "b"
    with pytest.raises(LookupError):
        answer("answer_02_no_such_question")
    with pytest.raises(LookupError):
        answer("Linear")


# A kernel whose answers lie: a str subclass and an object that each equal everything.
LIARS = '''
class Yes(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
    def strip(self):
        return self
    def lower(self):
        return self


class Anything:
    def __eq__(self, other):
        return True
    def __float__(self):
        return 8.0


answer_02_tiny = Yes("a")           # the right answer is "b"
answer_06_shared = Anything()
answer_06_modules = Anything()
answer_12_order = 4                 # right, and data: it passes
'''


@pytest.fixture(scope="module")
def liar():
    with agent_kernel(LIARS) as (_, channel):
        yield channel


def test_a_string_that_equals_everything_would_pass_inside_the_kernel():
    """Why answers are graded outside: compared in the student's process, it passes."""
    namespace: dict = {}
    exec(LIARS, namespace)
    tiny = next(q for q in QUESTIONS if q.key == "tiny")
    assert failure(tiny, namespace["answer_02_tiny"]) is None


@pytest.mark.parametrize("check, name, said", [
    ("question_02_tiny", "answer_02_tiny", "'a' is not the right answer"),
    ("question_06_shared", "answer_06_shared", "holds an object of type Anything"),
    ("question_06_modules", "answer_06_modules", "holds an object of type Anything"),
    ("question_05_uniform", "answer_05_uniform", "has no answer_05_uniform to grade"),
])
def test_graded_from_outside_only_the_value_counts(liar, check, name, said):
    outputs = hidden.grade(liar, check, [name])
    assert [o.ename for o in outputs] == ["CheckFailure"] and said in outputs[0].evalue


def test_a_right_answer_passes_from_outside(liar):
    assert hidden.grade(liar, "question_12_order", ["answer_12_order"]) == []


def test_a_notebook_that_imports_the_grader_scores_nothing_on_its_answers():
    with agent_kernel("import autograder.check\n\nanswer_12_order = 4\n") as (_, channel):
        outputs = hidden.grade(channel, "question_12_order", ["answer_12_order"])
    assert outputs and "scores zero" in outputs[0].evalue


def test_every_question_has_its_variable():
    assert [variable(q) for q in QUESTIONS] == [CHECKS[n].targets[0] for n in NAMES]
