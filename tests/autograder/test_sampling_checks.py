"""Unit 14's sampler cells: the draw is judged on the distribution the student's own
next_token_probabilities returned to its cell for the draw's logits, so a wrong distribution
costs its cell only, and nothing the kernel is asked again decides the draw's cell."""
from __future__ import annotations

import numpy as np

from students import grade_student, notebook, solution_source

SOLUTION = "import numpy as np\nfrom scipy import special\n" + "\n\n".join(
    solution_source("14_language", cell) for cell in ("next-token-probabilities", "sample")) \
    + "\n\ndef default_rng():\n    return np.random.default_rng()\n"
CELLS = ("next_token_probabilities_values", "sample_draws")


def _failed(student: dict) -> set[str]:
    """The cells a notebook fails, graded in its order."""
    return {name for name in CELLS if grade_student(name, student) is not None}


def test_the_solution_passes_both_cells():
    assert _failed(notebook(SOLUTION)) == set()


def test_a_sampler_on_a_wrong_distribution_loses_the_distribution_cell_only():
    """A temperature multiplied instead of divided: the sampler draws right from it."""
    student = notebook(SOLUTION.replace("dtype=np.float64) / temperature",
                                        "dtype=np.float64) * temperature"))
    assert _failed(student) == {"next_token_probabilities_values"}


def test_a_distribution_that_answers_a_second_call_wrongly_excuses_no_argmax():
    """The probe attack: an argmax sampler, and a distribution right on every call but the one
    that repeats the sampler's logits, where it is the one-hot of the argmax. Asked again (as
    on main) it excused the sampler; the cell computes with its own cell's answer instead."""
    student = notebook(SOLUTION + '''
_right, _given = next_token_probabilities, []

def next_token_probabilities(logits, temperature=1.0, top_k=None):
    if any(logits.shape == seen.shape and np.array_equal(logits, seen) for seen in _given):
        return np.eye(logits.shape[-1])[logits.argmax(axis=-1)]
    return _right(logits, temperature, top_k)

def sample(logits, temperature=1.0, top_k=None, rng=None):
    _given.append(np.array(logits))
    rng.random(logits.shape[:-1])
    return np.asarray(logits).argmax(axis=-1)
''')
    assert _failed(student) == {"sample_draws"}
