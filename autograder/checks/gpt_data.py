"""Check of unit 16's ``sort_examples``: a sorting problem as next-token samples, with the
targets before the answer set to -100 (PyTorch's ``ignore_index``)."""
from __future__ import annotations

import numpy as np

from autograder.sandbox import call
from autograder.registry import check
from course.testing.compare import as_array, expect_close
from course.testing.diagnose import close, when
from course.testing.failure import expect
from minitorch_ref.data import sort_examples as reference_examples


@check
def sort_examples_targets(sort_examples):
    """sort_examples(problems) of (N, 6) digits: X the first 11 tokens of problem +
    sorted(problem), Y the last 11 with the first 5 at -100; int arrays, problems unchanged."""
    rng = np.random.default_rng(16)
    for count in (1, 5, 40):
        problems = rng.integers(0, 10, size=(count, 6))
        given = problems.copy()
        got = call(f"sort_examples(problems of shape {problems.shape})", sort_examples, given)
        expect(isinstance(got, tuple) and len(got) == 2, "sort_examples should return a pair (X, Y).")
        X, Y = (as_array(f"sort_examples: {name}", value) for name, value in zip("XY", got))
        expected_X, expected_Y = reference_examples(problems)
        expect(X.dtype.kind in "iu" and Y.dtype.kind in "iu", f"X and Y are tokens, integers; got "
               f"{X.dtype} and {Y.dtype}.")
        shifted = np.concatenate([problems, np.sort(problems, axis=1)], axis=1)[:, 1:]
        expect_close("sort_examples: X", X, expected_X, f"{count} problems: the first 11 tokens",
                     (when("whole", lambda g, e: close(g, np.concatenate([problems, np.sort(problems, axis=1)], axis=1)),
                           "X holds all 12 tokens: the input is the first 11, the target of the "
                           "last one would be past the end."),))
        expect_close("sort_examples: Y", Y, expected_Y, f"{count} problems: the next token at each "
                     "position, -100 before the answer",
                     (when("prompt_counted", lambda g, e: close(g, shifted),
                           "no target is -100: the first five continue the random problem, which "
                           "no model can predict; set them to -100 so the loss counts only the "
                           "six answer positions."),
                      when("six_ignored", lambda g, e: close(g[:, 6:], e[:, 6:]) and (g[:, :6] == -100).all(),
                           "six targets are -100: the sixth, at the problem's last digit, is the "
                           "answer's first digit and counts.")))
        expect(close(given, problems), "sort_examples changed the problems it was given: sort a copy "
               "(np.sort returns one; ndarray.sort() sorts in place).")
