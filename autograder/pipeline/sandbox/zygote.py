"""``python -m autograder.pipeline.sandbox.zygote SOCKET``: kernels, forked warm into sandboxes.

A kernel started from nothing spends half a second of a job's three importing ipykernel,
numpy and matplotlib. A grading worker starts this process once (``Station``), with the
kernel's environment and nothing of the grader in its memory: it imports those libraries
(``WARM``) and waits on the Unix socket ``SOCKET``. For each kernel a job asks for
(``autograder.pipeline.sandbox.spawn``, which has started the job's bubblewrap sandbox around a
placeholder process), it forks a child that

- joins the job's control group, if it has one (the request's ``cgroup``: its
  ``cgroup.procs`` files), while it still sees the machine's /sys: the kernel and all it
  starts are born in the group, whose CPU time, memory and processes the OS counts and bounds;
- joins the placeholder's namespaces (user, IPC, UTS, network, cgroup, PID, mount): from
  then on it sees the sandbox's files and nothing else of the machine;
- forks once more, so that the kernel is a process of the sandbox's PID namespace (it dies
  with the sandbox, and sees no process outside it);
- gives up every capability (joining a user namespace grants them all) and starts a new
  session, as bubblewrap does for the process it starts, and installs the filter that
  refuses it new namespaces (``seccomp``: bubblewrap's own covers only the placeholder);
- runs ``autograder.pipeline.sandbox.kernel`` with the job's environment, folder and arguments,
  and reports the kernel's exit code to the job on the socket.

Every kernel is a fresh copy of this warm process, which never runs student code, so
nothing of one student reaches the next. Stdlib only, besides what it warms.
"""
from __future__ import annotations

import ctypes
import fcntl
import gc
import json
import os
import random
import signal
import socket
import sys
from importlib import import_module

from autograder.pipeline.sandbox import seccomp
from autograder.pipeline.sandbox.cgroup_base import enter

# What every kernel imports anyway (ipykernel's start, the notebooks' set-up cell), and
# scipy.special (0.1 s: the solutions' sigmoid, GELU and log-softmax from unit 4 on), loaded
# once; none of it starts a thread or needs IPython at import: pyplot loads its backend
# (matplotlib-inline, which hooks into IPython) only when a figure is drawn, and ipywidgets
# registers its comm target once the kernel exists (``autograder.pipeline.sandbox.kernel``).
WARM = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.debugger", "psutil", "sqlite3",
        "numpy", "scipy.special", "matplotlib.pyplot", "ipywidgets", "course.testing",
        "course.widgets", "autograder.pipeline.sandbox.kernel",
        "autograder.pipeline.sandbox.guard", "autograder.pipeline.sandbox.landlock")
NAMESPACES = (("user", 0x10000000), ("ipc", 0x08000000), ("uts", 0x04000000),
              ("net", 0x40000000), ("cgroup", 0x02000000), ("pid", 0x20000000),
              ("mnt", 0x00020000))   # user first (the placeholder's, then its owner's: ``_order``)
USER = NAMESPACES[0][1]
_NS_GET_USERNS = 0xB701     # ioctl: the user namespace that owns a namespace
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL = 1, 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
LIBC = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def die_with_parent() -> None:
    """SIGKILL this process when the one that started it ends."""
    _check(LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "dying with the parent")


def join(pid: int, parent: int, expected: dict[str, int]) -> None:
    """Enter every namespace of process ``pid`` (the sandbox's placeholder); the PID namespace
    holds this process's children, not itself. The process is held by a descriptor of its
    ``/proc`` folder and must still be ``parent``'s child, with the namespaces ``expected``
    (name: inode, as bubblewrap reported them): a process id used again is never joined."""
    proc = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    handles = []
    try:
        with open(os.open("status", os.O_RDONLY, dir_fd=proc), encoding="ascii") as status:
            if f"PPid:\t{parent}\n" not in status.read():
                raise OSError(f"process {pid} is not the sandbox's placeholder")
        for name, flag in NAMESPACES:
            handles.append(os.open(f"ns/{name}", os.O_RDONLY | os.O_CLOEXEC, dir_fd=proc))
            if expected.get(name, os.fstat(handles[-1]).st_ino) != os.fstat(handles[-1]).st_ino:
                raise OSError(f"process {pid} is not in the sandbox's {name} namespace")
        handles.append(fcntl.ioctl(handles[1], _NS_GET_USERNS))   # the owner of the others
        for fd, name, flag in _order(handles):
            _check(LIBC.setns(fd, flag), f"joining the sandbox's {name} namespace")
    finally:
        for fd in (proc, *handles):
            os.close(fd)


def _order(handles: list[int]) -> list[tuple[int, str, int]]:
    """``(descriptor, name, flag)`` in the order they can be joined: first the user namespace
    that owns the others (bubblewrap's), which grants the right to join them, then them, and
    last the placeholder's own user namespace when it is a nested one (``--disable-userns``)."""
    *own, owner = handles
    user, others = own[0], list(zip(own[1:], NAMESPACES[1:]))
    steps = [(owner, "user", USER)] + [(fd, name, flag) for fd, (name, flag) in others]
    if os.fstat(user).st_ino != os.fstat(owner).st_ino:
        steps.append((user, "nested user", USER))
    return steps


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Sets(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities(last: int) -> None:
    """No capability left in any set, and none to regain (the bounding set emptied)."""
    for capability in range(last + 1):
        _check(LIBC.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "dropping a capability")
    _check(LIBC.prctl(_PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL, 0, 0, 0),
           "clearing ambient capabilities")
    _check(LIBC.capset(ctypes.byref(_Header(_CAPABILITY_VERSION_3, 0)),
                       ctypes.byref((_Sets * 2)())), "clearing capabilities")


def _kernel(request: dict, last_capability: int) -> None:
    """In the sandbox's PID namespace: become the job's kernel (never returns)."""
    code = 1
    try:
        _become_kernel(request, last_capability)
        code = 0
    except BaseException as error:  # noqa: BLE001 - said in the log (the kernel's, once redirected)
        os.write(2, f"zygote: the kernel failed: {type(error).__name__}: {error}\n".encode())
    finally:
        os._exit(code)


def _become_kernel(request: dict, last_capability: int) -> None:
    """Drop what the zygote had (capabilities, descriptors, environment, folder, random
    state), then run the kernel until it shuts down."""
    os.setsid()
    drop_capabilities(last_capability)
    seccomp.install()
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]          # what ``python -m`` puts first: the kernel's folder
    random.seed()
    import numpy as np
    np.random.seed()                      # not the warm process's draws
    from autograder.pipeline.sandbox import kernel
    sys.argv = ["autograder.pipeline.sandbox.kernel", *request["argv"]]
    kernel.main(request["argv"])


def _child(connection: socket.socket, request: dict, last_capability: int) -> None:
    """Outside the sandbox: join it, fork the kernel into it, report its exit (never returns)."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        enter(request.get("cgroup", []))
        join(int(request["pid"]), int(request["parent"]), request["namespaces"])
        pid = os.fork()
        if pid == 0:
            connection.close()
            _kernel(request, last_capability)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except BaseException as error:  # noqa: BLE001 - said to the job, which reports it
        os.write(2, f"zygote: no kernel: {error}\n".encode())
    finally:
        try:
            connection.sendall(f"{status}\n".encode())
        finally:
            os._exit(0)


def serve(path: str) -> None:
    """Fork a kernel for each request on the Unix socket ``path``."""
    last_capability = int(open("/proc/sys/kernel/cap_last_cap", encoding="ascii").read())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)        # forked children reaped by the OS
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        with connection:
            try:
                with connection.makefile("rb") as lines:
                    request = json.loads(lines.readline())
            except ValueError:      # not a request of spawn's: the job gets no kernel
                continue
            if os.fork() == 0:
                listener.close()
                _child(connection, request, last_capability)


def warm() -> None:
    """Import ``WARM``; build matplotlib's mathtext grammar, which its parser keeps on its class
    and every kernel would build for its first label in $...$ (the course's plots: $x_1$)."""
    for name in WARM:
        import_module(name)
    from matplotlib.mathtext import MathTextParser
    MathTextParser("agg").parse("$x_1$")


def main(argv: list[str]) -> None:
    die_with_parent()
    warm()
    gc.freeze()   # the kernels' full collections skip (and so do not copy) the warm modules
    serve(argv[0])


if __name__ == "__main__":
    main(sys.argv[1:])
