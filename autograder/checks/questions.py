"""Checks of the notebooks' questions to think with: the student's answer against the right one.

A question is answered in a notebook by setting a variable, ``answer_02_tiny = "b"`` or
``answer_03_fan_out = 0.0707``; its hidden cell is ``check.question_02_tiny(answer_02_tiny)``.
Graded from outside the kernel, the check gets a handle to the variable's value and reads it
as data (a string or a number; any other object fails), so what the kernel's code does with
the value (a ``__eq__`` that says yes to everything) decides nothing: the comparison runs
here, with the right answer, which never enters the kernel. The form of an answer is judged
by the functions the visible tests use (``course.testing.answers``). A wrong answer's message
names the question and the section to reread, never the right answer.

The questions are data (``QUESTIONS``); each registers one check, ``question_<unit>_<key>``,
whose one parameter is the notebook's variable, ``answer_<unit>_<key>``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from autograder.registry import check
from autograder.remote.proxy import Remote
from course.testing.answers import choice_problem, number_problem
from course.testing.failure import expect, fail


@dataclass(frozen=True)
class Choice:
    """A multiple-choice question: the answer is the letter ``right`` among ``choices``."""

    unit: str        # "02"
    key: str         # "tiny": the check is question_02_tiny, the variable answer_02_tiny
    number: str      # "2.2", as the notebook's heading numbers it
    right: str
    hint: str        # where to look again, for a wrong answer
    choices: str = "abcd"

    def judge(self, what: str, answer: object) -> None:
        problem = choice_problem(what, answer, self.choices)
        expect(problem is None, f"Question {self.number}: {problem}")
        given = answer.strip().lower()
        expect(given == self.right,
               f"Question {self.number}: {given!r} is not the right answer. {self.hint}")


@dataclass(frozen=True)
class Number:
    """A numeric question: the answer is ``value``, to a relative tolerance ``rtol``."""

    unit: str
    key: str
    number: str
    value: float
    rtol: float
    hint: str

    def judge(self, what: str, answer: object) -> None:
        problem = number_problem(what, answer)
        expect(problem is None, f"Question {self.number}: {problem}")
        within = f" (within {self.rtol:.0%})" if self.rtol else ""
        expect(abs(float(answer) - self.value) <= self.rtol * abs(self.value),
               f"Question {self.number}: {float(answer):.12g} is not the right answer{within}. "
               f"{self.hint}")   # 12 digits: as the student wrote it (102027 read 1.02e+05 at 4)


Question = Choice | Number

QUESTIONS: tuple[Question, ...] = (
    Choice("01", "centring", "1.1", "c", "Reread section 3: which mean has one value per "
           "sample, and which shape lines up with the rows of X?"),
    Number("01", "megabytes", "1.2", 256.0, 0.02, "Count the entries of the (N, M, d) "
           "difference array of Exercise 3; a float64 entry takes 8 bytes."),
    Number("02", "forward_step", "2.1", 2.98e-8, 0.1, "Minimise the error model of the "
           "question as section 2 does for the central difference: set the derivative of E(h) "
           "with respect to h to zero."),
    Choice("02", "tiny", "2.2", "b", "Compute the formula of section 4 by hand for these two "
           "one-entry arrays."),
    Number("03", "fan_out", "3.1", 0.07071, 0.02, "Reread section 4: which size of a weight of "
           "shape (in_features, out_features) is the fan out, and what gain does ReLU get?"),
    Number("03", "depth", "3.2", 1 / 648, 0.05, "Follow the second moment layer by layer: a "
           "default-initialised Linear multiplies it by n_in * Var(W), a ReLU halves it "
           "(section 4)."),
    Choice("04", "softmax_ones", "4.1", "b", "Put G = ones into the boxed formula of section 6; "
           "what does each row of Y sum to?"),
    Number("04", "saturated", "4.3", 0.3173, 0.05, "Which z make tanh' < 1% of its peak "
           "(section 7.3), and how likely is |z| beyond that for a normal z of standard "
           "deviation 3?"),
    Number("05", "uniform", "5.1", 4.6052, 0.01, "Equal logits give every class the same "
           "softmax probability: what is it, and what is -log of it?"),
    Number("05", "ratio", "5.2", 11014.0, 0.05, "Write both gradients with respect to z for "
           "y = 1 (section 5.1) and divide them: most factors cancel."),
    Number("06", "modules", "6.1", 8, 0.0, "Reread Exercise 3: named_modules() lists the module "
           "itself, then every descendant, depth first."),
    Choice("06", "shared", "6.2", "c", "Reread section 6 on load_state_dict: what does a model "
           "share with the dictionary when its arrays are the dictionary's own?"),
    Number("07", "momentum", "7.1", 0.271, 0.01, "Follow SGD's table (section 3) for three "
           "steps: the buffer starts as a copy of the first gradient."),
    Number("07", "adamw", "7.2", 0.9048, 0.01, "Each AdamW step multiplies a weight by "
           "1 - lr * weight_decay (section 6); raise it to the number of steps."),
    Number("08", "noise", "8.1", 0.03028, 0.02, "Use the boxed formula of section 1 with "
           "N = 1000 and B = 32, divided by sigma^2."),
    Choice("08", "split", "8.2", "b", "Follow PyTorch's rule of section 4: round each N f_i "
           "down, then hand out what is left over, one by one, from the first subset on."),
    Number("09", "floor", "9.1", 0.25, 0.01, "The noise floor of section 3 is proportional to "
           "eta / B."),
    Choice("09", "recipe", "9.2", "c", "Reread section 6: which checks pass rules out which "
           "bugs, and what could keep a correct network and loop from memorising 20 examples?"),
    Number("10", "running_var", "10.1", 1.3, 0.01, "Reread section 3: running_var averages the "
           "unbiased variance, N / (N - 1) times the biased one."),
    Choice("10", "eval", "10.2", "b", "Reread section 5.2: which layer makes the same model give "
           "different outputs for the same input?"),
    Number("11", "recall", "11.1", 80 / 90, 0.01, "Reread section 2: recall is the share of "
           "the samples of a class that were found. Which entries of C count the samples of "
           "class 2, and which of them were found?"),
    Number("11", "parameters", "11.2", 102026, 0.0, "Count, layer by layer, the entries of each "
           "Parameter: a Linear's weight and bias (unit 3), a BatchNorm1d's weight and bias "
           "(unit 10). Its running estimates are buffers, which no optimizer changes."),
    Choice("11", "test_set", "11.3", "c", "Reread section 1's rule: what becomes of a test "
           "accuracy that guided a choice?"),
    Number("12", "order", "12.1", 4, 0.0, "topological_order lists each tensor that requires "
           "grad once, and skips constants (section 5)."),
    Number("12", "micrograd", "12.2", 36, 0.0, "Follow micrograd's stored gradients through "
           "three calls (section 5, 'Calling backward twice'): each call starts from the "
           "intermediate gradients the previous calls left behind."),
    Number("13", "receptive", "13.1", 8, 0.0, "Follow the window back through the layers "
           "(section 1, 'Receptive field'): each layer of kernel K widens it by K - 1 times the "
           "product of the strides below it, and the first pooling has stride 2."),
    Choice("13", "ties", "13.2", "c", "Reread section 5: the derivative of a maximum, and what "
           "max pooling does with the ties a ReLU leaves."),
    Number("14", "uniform", "14.1", 27, 0.0, "Reread section 2: write the NLL of a model that "
           "gives each of the V tokens the same probability, then take its exponential."),
    Choice("14", "temperature", "14.2", "c", "Reread section 4: what does softmax(z / tau) "
           "become as tau goes to 0?"),
    Number("15", "scores", "15.1", 8, 0.0, "Reread section 2: the variance of a sum of D "
           "independent products q_i k_i, each of variance 1, then its square root."),
    Choice("15", "prenorm", "15.2", "b", "Reread section 5: write dL/dx for each block and "
           "follow the term that comes from the residual addition alone."),
    Number("16", "parameters", "16.1", 202816, 0.0, "Reread section 1, 'Counting parameters': "
           "add the two tables, L blocks of 12 C^2 + 13 C and the final LayerNorm; the tied head "
           "adds nothing."),
    Choice("16", "first_loss", "16.2", "b", "Reread the end of section 2: what distribution do "
           "logits close to 0 give, and what is its cross-entropy on any target?"),
)


def variable(question: Question) -> str:
    """The notebook's variable that holds the answer."""
    return f"answer_{question.unit}_{question.key}"


def _value(name: str, answer: object) -> object:
    """The answer as data: graded from outside, read from the kernel through its handle."""
    if not isinstance(answer, Remote):
        return answer
    value = answer._session.value(answer)
    if isinstance(value, Remote):
        fail(f"{name} holds an object of type {value._type:.40}; the answer is a string or a "
             "number.")
    return value


def _grader(question: Question) -> Callable:
    """The check of ``question``: one parameter, named after the notebook's variable."""
    name = variable(question)

    def grade(*answer: object) -> None:
        question.judge(name, _value(name, answer[0]))

    grade.__name__ = grade.__qualname__ = f"question_{question.unit}_{question.key}"
    grade.__doc__ = f"Question {question.number}: the answer in {name}."
    grade.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return grade


for _question in QUESTIONS:
    check(_grader(_question), answers=(variable(_question),))
