"""What a grading kernel may touch: files in its own folder, and no other process.

``install(policy)`` adds a ``sys.addaudithook`` hook (it cannot be removed once
added) that raises ``PermissionError`` when the submission

- writes, creates, renames or deletes a file outside ``policy["write"]`` (its
  autograded folder and a private temporary folder);
- reads or lists anything under ``policy["deny"]`` (the course's gradebook,
  ``source/``, ``submitted/``, the other submissions of the run), unless the path
  is also under ``policy["write"]`` or ``policy["read"]`` (a shared font cache);
- starts a process or sends a signal to another one;
- loads a C function through ``ctypes`` (which would bypass all of the above).

Audit hooks are a tripwire, not a security boundary (CPython's documentation
says as much): they stop accidents and casual tampering. The grading pipeline
also gives every submission its own copy of the course, so even a bypass only
reaches that copy. Stdlib only: this module runs inside the student's kernel.
"""
from __future__ import annotations

import os
import sys

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ALWAYS_WRITABLE = ("/dev/null",)
_PATH_EVENTS = {   # event: the positions of its path arguments
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1),
    "os.link": (0, 1), "os.symlink": (0, 1), "os.truncate": (0,), "os.chmod": (0,),
    "os.chown": (0,), "os.utime": (0,), "shutil.rmtree": (0,), "os.chflags": (0,),
    "os.setxattr": (0,), "os.removexattr": (0,),
}
_LIST_EVENTS = {"os.listdir": 0, "os.scandir": 0, "glob.glob": 0}
_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "os.startfile", "pty.spawn"}
_CTYPES_EVENTS = {"ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function"}


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


class Guard:
    """The audit hook; ``policy`` holds ``write``, ``deny`` and ``read`` roots (folders or files)."""

    def __init__(self, policy: dict) -> None:
        self.write = tuple(os.path.realpath(p) for p in policy.get("write", ()))
        self.deny = tuple(os.path.realpath(p) for p in policy.get("deny", ()))
        self.read = self.write + tuple(os.path.realpath(p) for p in policy.get("read", ()))
        self.active = False   # re-entrancy: realpath itself may raise audit events

    def _resolve(self, path: object) -> str | None:
        if isinstance(path, int) or path is None:
            return None   # an already open descriptor
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))

    def _check_read(self, path: str | None, what: str) -> None:
        if path and _inside(path, self.deny) and not _inside(path, self.read):
            raise PermissionError(f"The grader does not let submissions {what} {path}: "
                                  "it is outside your notebook's folder.")

    def _check_write(self, path: str | None, what: str) -> None:
        if path and not _inside(path, self.write) and path not in _ALWAYS_WRITABLE:
            raise PermissionError(f"The grader does not let submissions {what} {path}: "
                                  "only files in your notebook's folder may change.")

    def __call__(self, event: str, args: tuple) -> None:
        if self.active:
            return
        if event == "open":
            self._guard(self._open, args)
        elif event in _PATH_EVENTS:
            self._guard(self._paths, event, args)
        elif event in _LIST_EVENTS:
            self._guard(self._list, event, args)
        elif event == "sqlite3.connect":
            self._guard(self._sqlite, args)
        elif event in _PROCESS_EVENTS:
            raise PermissionError(f"The grader does not let submissions start processes ({event}).")
        elif event in ("os.kill", "os.killpg") and args and args[0] not in (0, os.getpid()):
            raise PermissionError("The grader does not let submissions signal other processes.")
        elif event in _CTYPES_EVENTS:
            raise PermissionError("The grader does not let submissions call C functions "
                                  "through ctypes.")

    def _guard(self, check, *args) -> None:
        self.active = True
        try:
            check(*args)
        finally:
            self.active = False

    def _open(self, args: tuple) -> None:
        path, mode, flags = (tuple(args) + (None, None, 0))[:3]
        resolved = self._resolve(path)
        writing = (any(c in mode for c in "wax+") if isinstance(mode, str)
                   else bool((flags or 0) & _WRITE_FLAGS))
        self._check_read(resolved, "open")
        if writing:
            self._check_write(resolved, "write to")

    def _paths(self, event: str, args: tuple) -> None:
        for position in _PATH_EVENTS[event]:
            if position < len(args):
                resolved = self._resolve(args[position])
                self._check_read(resolved, "change")
                self._check_write(resolved, "change")

    def _list(self, event: str, args: tuple) -> None:
        path = args[_LIST_EVENTS[event]] if args else "."
        if event == "glob.glob":
            path = os.path.dirname(os.fspath(path)) or "."
        self._check_read(self._resolve(path if path is not None else "."), "list")

    def _sqlite(self, args: tuple) -> None:
        database = args[0] if args else ":memory:"
        if database in (":memory:", "", b":memory:", b""):
            return
        resolved = self._resolve(database)
        self._check_read(resolved, "open the database")
        self._check_write(resolved, "open the database")


def install(policy: dict) -> Guard:
    """Add the hook for the rest of the process's life; return it (for tests)."""
    guard = Guard(policy)
    sys.addaudithook(guard)
    return guard
