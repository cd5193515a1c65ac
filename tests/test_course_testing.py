"""course.testing: the student-facing half of the autograder's messages."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from course.testing import CheckFailure, expect_close, scaled


def test_it_imports_nothing_students_do_not_have():
    code = ("import sys, course.testing; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('autograder', 'minitorch_ref')]; "
            "print(bad); sys.exit(bool(bad))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_match_passes_silently_and_returns_the_array():
    got = expect_close("ReLU.forward output", [1.0, 0.0], np.array([1.0, 0.0]))
    assert isinstance(got, np.ndarray)


def test_a_mismatch_names_the_quantity_and_the_custom_diagnosis():
    expected = np.array([2.0, 4.0, 6.0])
    with pytest.raises(CheckFailure) as info:
        expect_close("MSELoss.backward()", expected / 2, expected,
                     signatures=(scaled(0.5, "the factor 2 of the derivative is missing."),))
    message = str(info.value)
    assert message.splitlines()[0] == "MSELoss.backward() is wrong."
    assert "Likely mistake: the factor 2 of the derivative is missing." in message
    assert isinstance(info.value, AssertionError)
