"""Refuse submissions that reuse the reference or the autograder instead of their own code.

A class that is, subclasses, wraps or delegates to ``minitorch_ref`` or
``autograder`` objects scores zero on the check, and so does a notebook whose
own cells import either package or rebind the functions checks rely on.
"""
from __future__ import annotations

import contextlib
import re
import sys
import types
from typing import Iterable, Iterator

from autograder import testimony
from autograder.remote.proxy import Remote
from course.testing._trusted import tampered
from course.testing.failure import fail

FORBIDDEN = ("minitorch_ref", "autograder")
_trusted_classes: set[object] = set()

# Hidden test cells may contain only these lines (besides blanks and comments).
_HIDDEN_CELL_LINE = re.compile(r"^\s*(from autograder import check|check\.\w+\(.*\))\s*(#.*)?$")
_MENTION = re.compile(r"\b(minitorch_ref|autograder)\b")


@contextlib.contextmanager
def trusting(classes: Iterable[object]) -> Iterator[None]:
    """Let the mutation audit grade classes (and functions) built on the reference."""
    added = set(classes) - _trusted_classes
    _trusted_classes.update(added)
    try:
        yield
    finally:
        _trusted_classes.difference_update(added)


def _module_of(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if isinstance(obj, type):
        return obj.__module__ or ""
    return getattr(obj, "__module__", None) or type(obj).__module__ or ""


def _forbidden(obj: object) -> bool:
    return _module_of(obj).split(".")[0] in FORBIDDEN


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def check_class(name: str, cls: type) -> None:
    """Fail if ``cls`` is, subclasses, or (through a global name) uses forbidden code."""
    if cls in _trusted_classes:
        return
    for klass in getattr(cls, "__mro__", (cls,)):
        if _forbidden(klass):
            fail(f"Your {name} is or subclasses {klass.__module__}.{klass.__qualname__}; "
                 "grading needs your own implementation. This check scores zero.")
    for where, member in _members(name, cls):
        function = getattr(member, "__func__", member)
        code = getattr(function, "__code__", None)
        if code is None or _forbidden(function):
            continue
        for global_name in _code_names(code):
            value = function.__globals__.get(global_name)
            if value is not None and _forbidden(value):
                fail(f"Your {where} uses {_module_of(value)} (through the name "
                     f"'{global_name}'); grading needs your own implementation. "
                     "This check scores zero.")


def _members(name: str, obj: object) -> Iterator[tuple[str, object]]:
    """``(qualified name, function)`` for a class's methods, or the function itself."""
    if not isinstance(obj, type):
        yield name, obj
        return
    for klass in obj.__mro__:
        for attr, member in vars(klass).items():
            yield f"{name}.{attr}", member


def check_instance(name: str, obj: object, allowed: Iterable[object] = ()) -> None:
    """Fail if the object holds (wraps) forbidden objects, other than ``allowed`` ones."""
    if type(obj) in _trusted_classes or isinstance(obj, Remote):
        return   # (a Remote lives in the student's kernel: check_remote asks the kernel)
    allowed_ids = {id(a) for a in allowed}
    stack, seen = [(obj, 0)], set()
    while stack:
        current, depth = stack.pop()
        if id(current) in seen or id(current) in allowed_ids or depth > 3:
            continue
        seen.add(id(current))
        if current is not obj and _forbidden(current) and not isinstance(current, type):
            fail(f"Your {name} holds a {_module_of(current)} object; grading needs your own "
                 "implementation. This check scores zero.")
        children = []
        if isinstance(current, dict):
            children = list(current.values())
        elif isinstance(current, (list, tuple, set)):
            children = list(current)
        elif hasattr(current, "__dict__") and not isinstance(current, (type, types.ModuleType)):
            children = list(vars(current).values())
        stack.extend((child, depth + 1) for child in children)


def _notebook_cells() -> list[str]:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return list(shell.user_ns.get("In", [])) if shell is not None else []


def check_remote(name: str, remote) -> None:
    """A class or function in the student's kernel (``autograder.remote``): fail if it comes
    from, or its methods use, a forbidden package, or if the notebook imported one. The
    agent reports these from the kernel: testimony, a tripwire that can refuse and never
    passes (the sandbox keeps the reference out of the kernel's reach)."""
    if remote in _trusted_classes:   # the mutation audit, graded from outside
        return
    for module in testimony.modules_of(remote):
        if module.split(".")[0] in FORBIDDEN:
            fail(f"Your {name} uses {module}; grading needs your own implementation. "
                 "This check scores zero.")
    check_cells(testimony.cells_of(remote))


def check_notebook() -> None:
    """Fail if the submission rebinds checked functions or imports a forbidden package."""
    changed = tampered()
    if changed:
        fail(f"The submission replaced {', '.join(changed)}; checks cannot trust the "
             "result. Remove the monkeypatch. This check scores zero.")
    check_cells(_notebook_cells())


def check_cells(sources: list[str]) -> None:
    """Fail if a cell other than a hidden test cell mentions a forbidden package."""
    for source in sources:
        code = [line for line in (source or "").splitlines()
                if line.strip() and not line.strip().startswith("#")]
        mention = _MENTION.search("\n".join(code))
        if mention and not all(_HIDDEN_CELL_LINE.match(line) for line in code):
            fail(f"A cell of the submission uses '{mention.group(1)}', which students may not "
                 "import; grading needs your own implementation. This check scores zero.")
