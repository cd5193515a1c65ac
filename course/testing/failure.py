"""CheckFailure: the one exception a check raises, with a message a student can act on."""
from __future__ import annotations

from course.testing._trusted import AssertionError_


class CheckFailure(AssertionError_):
    """A check found something wrong; ``str(error)`` says what and, if known, why.

    It is an ``AssertionError`` (the interpreter's own, even if a submission
    rebinds the name), so nbgrader scores the cell as failed.
    """


def fail(message: str) -> None:
    """Raise a CheckFailure with ``message``."""
    raise CheckFailure(message)


def expect(condition: bool, message: str) -> None:
    """Raise a CheckFailure with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailure(message)
