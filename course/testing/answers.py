"""The form of an answer to a notebook's question: a letter among the choices, or a number.

A unit's questions are answered by setting a variable, ``answer_02_tiny = "b"`` or
``answer_03_fan_out = 0.07``. The visible test after the answer checks only its form, with
``expect_choice`` or ``expect_number``: an answer not given yet stops it with
``NotImplementedError``, like an exercise not written yet, and one of the wrong form fails
with a message that says what is expected. Whether the answer is right is decided when the
notebook is graded (``autograder.checks.questions``), which reads the form with the same
functions, so the visible test and the grade never disagree about it.
"""
from __future__ import annotations

import numbers

from course.testing.failure import fail


def choice_problem(what: str, answer: object, choices: str) -> str | None:
    """What is wrong with the form of ``answer`` to a multiple-choice question (a string
    holding one letter of ``choices``), or None if nothing is."""
    listed = ", ".join(f'"{c}"' for c in choices)
    if answer is None:
        return f"{what} is not answered yet: set it to one of {listed}."
    if not isinstance(answer, str) or answer.strip().lower() not in list(choices):
        return f"{what} = {answer!r:.60}: the answer is one of the strings {listed}."
    return None


def number_problem(what: str, answer: object) -> str | None:
    """What is wrong with the form of ``answer`` to a numeric question (a finite real number),
    or None if nothing is."""
    if answer is None:
        return f"{what} is not answered yet: set it to a number."
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        return f"{what} = {answer!r:.60}: the answer is a number, e.g. 0.25 or 3e-4, not a string."
    if not abs(float(answer)) < float("inf"):
        return f"{what} = {answer!r}: the answer is a finite number."
    return None


def expect_choice(what: str, answer: object, choices: str) -> None:
    """The visible test of a multiple-choice answer: NotImplementedError while it is None."""
    _expect(choice_problem(what, answer, choices), answer)


def expect_number(what: str, answer: object) -> None:
    """The visible test of a numeric answer: NotImplementedError while it is None."""
    _expect(number_problem(what, answer), answer)


def _expect(problem: str | None, answer: object) -> None:
    if problem is None:
        return
    if answer is None:
        raise NotImplementedError(problem)
    fail(problem)
