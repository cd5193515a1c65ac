"""Calling a student module's methods so that a missing method, an error or a wrong return
becomes a readable failure: ``method``, ``set_mode``, ``student_forward``, ``student_backward``."""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import numpy as np

from autograder import testimony, verdicts
from autograder.remote.agent import as_of_now, repeated, write_array
from autograder.remote.proxy import Remote, RemoteError
from autograder.sandbox import call
from course.testing.compare import as_array
from course.testing.diagnose import close
from course.testing.failure import CheckFailure, expect, fail


def answered(what: str, function: Callable, *args, **kwargs) -> np.ndarray | CheckFailure:
    """The student's ``function(*args)`` (``what`` names the call) as an array of the grader's
    own, a copy that nothing the student runs later can change, or the failure it met."""
    try:
        return as_array(what, call(what, function, *args, **kwargs)).copy()
    except CheckFailure as failure:
        return failure


def kept_answer(check: str, key: object | None, what: str, function: Callable, *args,
                **kwargs) -> np.ndarray | CheckFailure:
    """``answered``, kept under ``key`` (unless None) for a later cell that builds on
    ``function``: what it returned to ``check``, the cell that grades it, is what that cell
    computes with (``autograder.verdicts``; None where it failed). A check that keeps answers
    asks every input before it judges any, so that a failure does not stop the keeping."""
    got = answered(what, function, *args, **kwargs)
    if key is not None:
        verdicts.keep(function, check, key, None if isinstance(got, CheckFailure) else got)
    return got


def method(obj: object, name: str):
    """``obj.<name>``, looked up only when called, so that inside ``call`` a missing method
    fails the check with a readable message like any other error."""
    return lambda *args: getattr(obj, name)(*args)


def expect_value_error(what: str, function: Callable, *args, naming: tuple[str, ...] = (),
                       fix: str = "") -> None:
    """``function(*args)`` raises a ValueError whose message contains each string of
    ``naming``; ``what`` describes the call, ``fix`` says how to get there."""
    try:
        function(*args)
    except ValueError as error:
        missing = [text for text in naming if text not in str(error)]
        expect(not missing, f"{what} raised ValueError({str(error)!r}), which does not name "
               f"{' or '.join(missing)}; name {' and '.join(naming)} in the message.")
    except Exception as error:  # noqa: BLE001 - any other error is the student's to fix
        fail(f"{what} raised {type(error).__name__}: {error}; raise a ValueError instead. {fix}")
    else:
        fail(f"{what} should raise a ValueError, and it returned a result. {fix}")


@contextlib.contextmanager
def warnings_explain(calls: Callable[[], list[str]], fix: str) -> Iterator[None]:
    """Run the block, whose values decide; when it fails, the floating-point warnings the
    student's calls raise on the same input (``calls()``, read with ``testimony.warnings_of``)
    are added to the message, with ``fix``. A warning alone fails nothing: the kernel reports
    its own warnings, and a submission can silence them (np.errstate) or forge them."""
    def told() -> str | None:
        caught = calls()
        if not caught:
            return None
        more = f" (and {len(caught) - 1} more warnings)" if len(caught) > 1 else ""
        return f"On this input your code also raised {caught[0]}{more}: {fix}"
    with testimony.explain(told):
        yield


def twice_after_seed(manual_seed: Callable, produce: Callable[[], object], seed: int = 3) -> tuple:
    """``produce()`` twice, each time right after the notebook's ``manual_seed(seed)``: equal
    results mean the student's code draws from the generator manual_seed resets."""
    results = []
    for _ in range(2):
        call(f"manual_seed({seed})", manual_seed, seed)
        results.append(produce())
    return tuple(results)


def set_mode(what: str, module: object, training: bool) -> None:
    """``module.train()`` or ``module.eval()``; a missing method or an error fails the check."""
    name = "train" if training else "eval"
    call(f"{what}.{name}()", method(module, name))


def placed(x: np.ndarray, beside: object) -> tuple[object, Callable[[], np.ndarray]]:
    """A copy of ``x`` for the student's code, and a reader of what that copy holds now.

    Graded from outside (``beside``, a student object, is a ``Remote``), the copy is made in
    the student's kernel and stays there: an array sent as data arrives as a new one at each
    call, so a function that writes into its input would otherwise go unseen."""
    if isinstance(beside, Remote):
        session = beside._session
        held = session.hold(x)
        return held, lambda: session.value(held)
    given = x.copy()
    return given, lambda: given


def kept_call(what: str, function: Callable, *args, **kwargs) -> tuple[object, Callable[[], object]]:
    """``function(*args, **kwargs)`` itself, and a reader of what that very result holds later.

    Graded from outside, the result (a dict, an array) stays in the student's kernel: sent
    back as data it would be a copy, so a later change to it would go unseen and ``is``
    could not tell that it is the object the function was given."""
    if isinstance(function, Remote):
        session = function._session
        result = call(what, session.send, "held", "call", function, list(args), kwargs)
        return result, lambda: session.value(result)
    result = call(what, function, *args, **kwargs)
    return result, lambda: result


def kept_result(what: str, obj: object, name: str) -> tuple[object, Callable[[], object]]:
    """``obj.<name>()`` itself, and a reader of what that very result holds later."""
    return kept_call(what, call(what, getattr, obj, name))


def is_instance(value: object, cls: type) -> bool:
    """``isinstance(value, cls)``, also for a class in the student's kernel."""
    if isinstance(cls, Remote):
        return bool(cls._session.send("builtin", "isinstance", value, cls))
    return isinstance(value, cls)


def chain_of(what: str, name: str, value: object, other: object, times: int) -> object:
    """``value = value <op> other``, ``times`` times (``agent.repeated``): graded from
    outside, in one request instead of one per operation."""
    if isinstance(value, Remote):
        return call(what, value._session.send, "repeat", name, value, other, times)
    return call(what, repeated, name, value, other, times)


def type_of(value: object) -> type:
    """``type(value)``, also for an object in the student's kernel (its class there)."""
    if isinstance(value, Remote):
        return value._session.send("builtin", "type", value)
    return type(value)


def type_name(value: object) -> str:
    """The name of ``value``'s type, also for an object in the student's kernel."""
    return value._type if isinstance(value, Remote) else type(value).__name__


def attribute(what: str, obj: object, name: str) -> object:
    """``obj.<name>`` itself, not a copy: graded from outside, a handle to the kernel's object
    (the same handle for the same object, so that ``is`` compares identities)."""
    if isinstance(obj, Remote):
        return call(what, obj._session.send, "held", "getattr", obj, name)
    return call(what, getattr, obj, name)


def kept_attribute(what: str, obj: object, name: str) -> tuple[object, Callable[[], object]]:
    """``obj.<name>`` itself (``attribute``), and a reader of what it holds now."""
    held = attribute(what, obj, name)
    if isinstance(obj, Remote):
        return held, lambda: obj._session.value(held)
    return held, lambda: held


def item(what: str, container: object, key) -> object:
    """``container[key]`` itself: graded from outside, a handle to the kernel's object."""
    if isinstance(container, Remote):
        return call(what, container._session.send, "held", "getitem", container, key)
    return call(what, lambda: container[key])


class Script:
    """Operations on the student's objects, recorded and then run in order: graded from
    outside, in one request to the kernel (each request costs a message round trip), else
    one by one here. ``run`` returns their values; at the first error it stops, and
    ``failure`` holds the failure naming that operation, for the caller to raise once it
    has looked at the values before it."""

    def __init__(self, beside: object) -> None:
        self.session = beside._session if isinstance(beside, Remote) else None
        self.steps: list[tuple[str, str, tuple]] = []
        self.failure: CheckFailure | None = None

    def _add(self, what: str, op: str, *args) -> int:
        self.steps.append((what, op, args))
        return len(self.steps) - 1

    def call(self, what: str, function: Callable, *args) -> int:
        """``function(*args)``; the position of its value."""
        return self._add(what, "call", function, list(args), {})

    def attributes(self, what: str, objs: list, name: str) -> int:
        """``<obj>.<name>`` of each of ``objs``; the position of the list."""
        return self._add(what, "each", "getattr", [[obj, name] for obj in objs])

    def assign(self, what: str, objs: list, name: str, values: list[np.ndarray]) -> None:
        """``values`` written into the arrays ``<obj>.<name>`` of ``objs`` in place, where they
        live (``write_array``)."""
        self._add(what, "each", "write", [[o, name, v] for o, v in zip(objs, values)])

    def set_item(self, what: str, container: object, key, value) -> None:
        self._add(what, "setitem", container, key, value)

    def run(self) -> list:
        if self.session is not None:
            return self._run_remote()
        values = []
        for what, op, args in self.steps:
            try:
                values.append(as_of_now(call(what, LOCAL[op], *args)))
            except CheckFailure as failure:
                self.failure = failure
                break
        return values

    def finish(self) -> list:
        """``run``, for a script that must run to its end: its failure is raised."""
        values = self.run()
        if self.failure is not None:
            raise self.failure
        return values

    def _run_remote(self) -> list:
        requests = [[op, list(args)] for _, op, args in self.steps]
        try:
            return self.session.send("batch", requests)
        except RemoteError as error:
            if not isinstance(error.done, list) or len(error.done) >= len(self.steps):
                raise
            try:
                call(self.steps[len(error.done)][0], _raise, error)
            except CheckFailure as failure:
                self.failure = failure
            return error.done


def _raise(error: BaseException) -> None:
    raise error


def _each(op: str, calls: list) -> list:
    return [LOCAL[op](*args) for args in calls]


# What ``Script`` runs in-process for each operation the kernel's agent runs from outside.
LOCAL = {
    "call": lambda function, args, kwargs: function(*args, **kwargs),
    "getattr": getattr,
    "write": write_array,
    "setitem": lambda container, key, value: container.__setitem__(key, value),
    "each": _each,
}


def shift_in_place(what: str, obj: object, name: str, delta: float) -> None:
    """Add ``delta`` to the array ``obj.<name>`` in place (where it lives, in the kernel when
    graded from outside), as an optimizer step or a running statistic's update does."""
    array = attribute(what, obj, name)
    if isinstance(obj, Remote):
        call(what, obj._session.send, "shift", array, delta)
    else:
        call(what, np.add, array, delta, out=array)


INPUT_CHANGED = "{}.forward modified its input array in place; compute a new array instead."


def expect_unchanged(x: np.ndarray, read: Callable[[], np.ndarray], message: str) -> None:
    """The copy of ``x`` that ``read`` reads was not written into by the student's code."""
    expect(close(read(), x, 0, 0), message)


def student_forward(what: str, module: object, x: np.ndarray) -> np.ndarray:
    """The student's output as an array of x's shape; fails if forward changed x in place."""
    given, read = placed(x, module)
    y = call(f"{what}.forward", method(module, "forward"), given)
    expect_unchanged(x, read, INPUT_CHANGED.format(what))
    return as_array(f"{what}.forward output", y, x.shape)


def student_backward(what: str, module: object, grad_output: np.ndarray) -> np.ndarray:
    got = call(f"{what}.backward", method(module, "backward"), grad_output.copy())
    return as_array(f"{what}.backward return value (dL/dx)", got, grad_output.shape)
