"""Private references to everything the checks rely on, taken when this module loads.

A submission may rebind ``np.allclose``, ``np.testing.assert_allclose`` or even
``builtins.AssertionError``; the checks use the objects captured here (and
ndarray methods, which a submission cannot rebind), and ``tampered()`` reports
what was changed so the check can fail with a reason instead of passing.
"""
from __future__ import annotations

import builtins
import numpy as np
import numpy.testing


def _real_assertion_error() -> type:
    # The assert statement raises the interpreter's own AssertionError, whatever
    # the name AssertionError is bound to in builtins.
    try:
        assert False  # noqa: B011
    except BaseException as error:  # noqa: BLE001
        return type(error)
    raise SystemError("assert statements are disabled (python -O); the autograder needs them")


AssertionError_ = _real_assertion_error()

asarray = np.asarray
ndarray = np.ndarray
issubdtype = np.issubdtype
floating = np.floating
isinstance_ = builtins.isinstance

_WATCHED_NUMPY = ("allclose", "isclose", "array_equal", "asarray", "array", "abs", "max",
                  "isfinite", "isnan", "all", "any")
_WATCHED_TESTING = ("assert_allclose", "assert_array_equal", "assert_array_almost_equal",
                    "assert_equal", "assert_almost_equal")
_ORIGINALS = {
    **{f"numpy.{name}": getattr(np, name) for name in _WATCHED_NUMPY},
    **{f"numpy.testing.{name}": getattr(numpy.testing, name) for name in _WATCHED_TESTING},
    "AssertionError": AssertionError_,
}


def _current() -> dict[str, object]:
    return {
        **{f"numpy.{name}": getattr(np, name, None) for name in _WATCHED_NUMPY},
        **{f"numpy.testing.{name}": getattr(numpy.testing, name, None) for name in _WATCHED_TESTING},
        "AssertionError": builtins.AssertionError,
    }


def _looks_native(name: str, obj: object) -> bool:
    """True for functions that numpy (or Python) defines, whenever they were captured."""
    if name == "AssertionError":
        return obj is AssertionError_
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("numpy") or type(obj).__name__ in ("ufunc", "_ArrayFunctionDispatcher")


def tampered() -> list[str]:
    """Names of watched functions that were rebound since import, or before it."""
    return [
        name for name, obj in _current().items()
        if obj is not _ORIGINALS[name] or not _looks_native(name, obj)
    ]
