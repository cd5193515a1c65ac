"""The failures a check meets that are not its verdict: the student's code raised in the
kernel (``RemoteError``, re-raised on the grader's side), the check's time ran out
(``TimeLimitExceeded``, raised by ``autograder.sandbox``'s timers or by the kernel's budget in
``proxy``), or the grader itself failed (``GraderFault``), which must cost the student nothing."""
from __future__ import annotations

import builtins


class RemoteError(Exception):
    """An exception raised by the student's code in the kernel (``type``, message, line)."""

    def __init__(self, type_name: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.type_name, self.message, self.where = type_name, message, where
        self.done: list | None = None    # in a batch, the values of the operations before it


class TimeLimitExceeded(BaseException):
    """Raised inside student code when a check's time is up (BaseException: an
    ``except Exception`` in the submission does not swallow it); ``args[0]`` is the signal."""


class GraderFault(BaseException):
    """The grader's side failed during a check: it could not listen for the kernel, ran out
    of memory, or its check code raised for a reason of its own (a bug in the checker, not
    something the kernel sent). The cell gets no score and waits for an instructor.

    A BaseException, like ``TimeLimitExceeded``: the checks' ``except Exception`` clauses,
    which turn what the student's code did into a failed check, let it through."""


_CLASSES: dict[str, type] = {}


def remote_error(type_name: str, message: str, where: str) -> RemoteError:
    """A RemoteError that is also the builtin exception ``type_name`` names, if any, so that
    ``getattr(obj, name, None)``, ``hasattr`` and ``for`` loops behave as in-process."""
    base = getattr(builtins, type_name, None)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    if type_name not in _CLASSES:
        # named as in the kernel, so messages read "ValueError: ..." as they do in-process
        _CLASSES[type_name] = type(type_name, (RemoteError, base), {})
    return _CLASSES[type_name](type_name, message, where)
