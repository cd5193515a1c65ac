"""Readable test failures for notebooks: the same messages the autograder gives.

``expect_close(what, got, expected)`` passes silently when ``got`` equals
``expected`` (to 1e-6 relative), and otherwise raises an AssertionError that says
which quantity is wrong, by how much, shows a few values, and names the likely
mistake when the difference has a recognisable shape (a flipped sign, a
transposed matrix, a factor of N, inf/NaN from an unstable formula).
``expect_choice`` and ``expect_number`` check the form of an answer to a question.
"""
from course.testing.answers import expect_choice, expect_number
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import Signature, close, scaled, transposed, when
from course.testing.failure import CheckFailure, expect, fail

__all__ = ["expect_close", "as_array", "expect", "fail", "CheckFailure", "close",
           "Signature", "scaled", "transposed", "when", "expect_choice", "expect_number"]
