"""Landlock: the grading kernel gives up, for good, the right to write outside its scratch folders.

Inside bubblewrap the kernel still needs one folder shared with the grader, for its
Unix sockets and connection file, and that folder has no size limit. Once the kernel
has made its sockets, before any student code runs, ``restrict`` asks the Linux kernel
(Landlock, Linux 5.13+) to forbid this process and everything it starts every kind of
write except under ``writable`` (the size-limited tmpfs mounts) and to ``/dev``'s
devices (``/dev/null``). A restriction cannot be lifted by the process that made it,
so this holds against the student's code, unlike an audit hook. Stdlib only: it runs
inside the kernel.
"""
from __future__ import annotations

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446   # same numbers on x86-64 and arm64
_RULE_PATH_BENEATH, _VERSION_FLAG, _NO_NEW_PRIVS = 1, 1, 38
WRITE_FILE, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, \
    MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE = (1 << bit for bit in (1, *range(4, 15)))
_WRITES = {1: WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
           | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM, 2: REFER, 3: TRUNCATE}


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The Landlock ABI this Linux offers (0: none)."""
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    return max(version, 0)


def _check(result: int, what: str) -> int:
    if result < 0:
        raise OSError(ctypes.get_errno(), f"Landlock {what}: {os.strerror(ctypes.get_errno())}")
    return result


def restrict(writable: list[str]) -> int:
    """Forbid writes except under ``writable`` and to ``/dev``; the ABI used (0: not available)."""
    version = abi_version()
    if version == 0:
        return 0
    handled = sum(bits for level, bits in _WRITES.items() if version >= level)
    libc = _libc()
    ruleset = _check(libc.syscall(_CREATE_RULESET, ctypes.byref(ctypes.c_uint64(handled)),
                                  ctypes.c_size_t(8), ctypes.c_uint32(0)), "ruleset")
    try:
        for path, access in [(path, handled) for path in writable] + [("/dev", WRITE_FILE | TRUNCATE)]:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(access & handled, fd)
                _check(libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule),
                                    ctypes.c_uint32(0)), f"rule for {path}")
            finally:
                os.close(fd)
        _check(libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "restrict_self")
    finally:
        os.close(ruleset)
    return version
