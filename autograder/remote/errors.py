"""Exceptions raised by the student's code in the kernel, re-raised on the grader's side."""
from __future__ import annotations

import builtins


class RemoteError(Exception):
    """An exception raised by the student's code in the kernel (``type``, message, line)."""

    def __init__(self, type_name: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.type_name, self.message, self.where = type_name, message, where
        self.done: list | None = None    # in a batch, the values of the operations before it


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
