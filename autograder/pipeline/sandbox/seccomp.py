"""A seccomp filter that refuses new namespaces to everything in a sandbox.

Inside its sandbox a process could still make namespaces of its own (a user namespace
grants the right to make the others): processes in a nested PID namespace are not the
sandbox's to count, and a nested mount namespace is a place to hide. The Linux kernel
checks this filter on every system call, for the process that installs it and everything
it starts, and it cannot be removed:

- ``unshare`` and ``clone`` with any ``CLONE_NEW*`` flag fail with ``EPERM``;
- ``setns`` always fails with ``EPERM`` (no namespace to join inside);
- ``clone3``, whose flags sit in a structure the filter cannot read, fails with ``ENOSYS``,
  so the C library falls back to ``clone`` (threads, ``fork``, ``posix_spawn`` still work);
- a call of another architecture (``int 0x80``, x32) fails with ``ENOSYS``: its numbers
  are not the ones checked.

``program`` is the filter as classic BPF (``struct sock_filter`` records, packed here: no
libseccomp binding is on PyPI). Bubblewrap loads it from a descriptor (``--seccomp FD``,
``launch`` for the hub's servers), and the grading zygote's kernels install it themselves
(``install``), since they join their sandbox rather than being started by bubblewrap.
Stdlib only: the zygote imports it.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

# The audit architecture word, and the numbers of unshare, setns, clone, clone3.
SYSCALLS = {"x86_64": (0xC000003E, {"unshare": 272, "setns": 308, "clone": 56, "clone3": 435}),
            "aarch64": (0xC00000B7, {"unshare": 97, "setns": 268, "clone": 220, "clone3": 435})}
NAMESPACE_FLAGS = 0x7E020000     # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NEWTIME = 0x80             # unshare only: in clone's flags these bits are the exit signal
X32_BIT = 0x40000000
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06   # BPF_LD|W|ABS, JMP|K ..., RET|K
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16     # offsets in struct seccomp_data (arg 0's low word: little-endian)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _assemble(code: list[tuple]) -> bytes:
    """BPF records from ``(op, k)`` and ``(op, k, label_if_true, label_if_false)`` entries and
    label strings (jump targets, resolved to forward offsets)."""
    where, index = {}, 0
    for entry in code:
        if isinstance(entry, str):
            where[entry] = index
        else:
            index += 1
    records, index = [], 0
    for entry in code:
        if isinstance(entry, str):
            continue
        index += 1
        op, k, *targets = entry
        jt, jf = (where[label] - index for label in targets) if targets else (0, 0)
        records.append(struct.pack("=HBBI", op, jt, jf, k))
    return b"".join(records)


def program(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (``platform.machine()``'s name; this one by default)."""
    machine = machine or platform.machine()
    if machine not in SYSCALLS:
        raise OSError(f"no seccomp filter for the {machine} architecture "
                      f"(known: {', '.join(SYSCALLS)})")
    arch, nr = SYSCALLS[machine]
    return _assemble([
        (_LOAD, _ARCH), (_JEQ, arch, "native", "nosys"), "native",
        (_LOAD, _NR), (_JGE, X32_BIT, "nosys", "numbers"), "numbers",
        (_JEQ, nr["clone3"], "nosys", "setns"), "setns",
        (_JEQ, nr["setns"], "eperm", "clone"), "clone",
        (_JEQ, nr["clone"], "clone_flags", "unshare"), "unshare",
        (_JEQ, nr["unshare"], "unshare_flags", "allow"), "allow",
        (_RET, _ALLOW),
        "clone_flags", (_LOAD, _ARG0), (_JSET, NAMESPACE_FLAGS, "eperm", "allow_clone"),
        "allow_clone", (_RET, _ALLOW),
        "unshare_flags", (_LOAD, _ARG0), (_JSET, NAMESPACE_FLAGS | CLONE_NEWTIME, "eperm", "allow_unshare"),
        "allow_unshare", (_RET, _ALLOW),
        "eperm", (_RET, _ERRNO | errno.EPERM),
        "nosys", (_RET, _ERRNO | errno.ENOSYS)])


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install() -> None:
    """Put the filter on this process and all it starts (and set no-new-privs, which a
    process without ``CAP_SYS_ADMIN`` needs for it)."""
    code = program()
    libc = ctypes.CDLL(None, use_errno=True)
    for args, what in (((_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs"),
                       ((_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER,
                         ctypes.byref(_Program(len(code) // 8, code)), 0, 0), "seccomp")):
        if libc.prctl(*args) != 0:
            raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def descriptor() -> int:
    """A descriptor (inheritable, at offset 0) that reads the filter, for ``bwrap --seccomp``."""
    fd = os.memfd_create("minitorch-seccomp", 0)
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def with_filter(command: list[str], fd: int) -> list[str]:
    """A ``bwrap`` command that loads the filter from ``fd`` for the process it starts."""
    return [command[0], "--seccomp", str(fd), *command[1:]]


def launch(command: list[str]) -> None:
    """Become ``command`` (a ``bwrap`` command line), its filter on descriptor 3 or above."""
    fd = descriptor()
    os.execvp(command[0], with_filter(command, fd))


if __name__ == "__main__":
    launch(sys.argv[1:])
