"""What a user's server sees: the bubblewrap command it runs in, built from a ``View``.

The hub (root) runs ``bwrap`` with new PID, IPC, UTS and cgroup namespaces, through
``autograder.pipeline.sandbox.seccomp``'s launcher, whose filter refuses every process of the
sandbox new namespaces (the sandbox shares the machine's user namespace, so bubblewrap's
``--disable-userns`` cannot apply: it works inside a user namespace of bubblewrap's own, which
would map the student's files to nobody), and a mount namespace that holds only:

- the system's libraries and programs, read-only (``autograder.pipeline.sandbox.bwrap.SYSTEM``);
- a virtual environment and the interpreter it was made from, read-only: for a student the
  student environment (Jupyter, nbgrader's student extensions and the ``course`` package, no
  ``minitorch_ref``, no ``autograder``), for the instructor the hub's own;
- ``/etc/passwd`` and ``/etc/group`` that name the user and root alone, and ``/etc/hosts``;
- the user's home (``/home/<user>``), read-write;
- the Jupyter configuration of their kind of server (``hub/student``, ``hub/instructor``) at
  ``/srv/minitorch/config``;
- the folders it shares with the machine (``View.shared``): for a student the exchange's
  folders they may use, in a private exchange root; for the instructor the course, the
  exchange and the hub's code (read-only), each at its own path;
- a private ``/tmp`` and ``/dev/shm`` and its own ``/proc``: only its own processes.

Inside, ``setpriv`` becomes the user's account (all three uids and gids, no supplementary
groups), drops every capability from all sets and the bounding set and sets no-new-privs, then
runs the server: no setuid program gives anything back. A student's sandbox has a network
namespace of its own (``View.own_network``), where only its own loopback exists: her server
listens on a Unix socket in ``RUN`` (a folder of the machine's, bound there), which the proxy
routes to, and reaches the hub's API through the socket the hub serves there
(``autograder.hub.relay``); nothing of the machine's network, anyone's server or kernel, the
hub's or the proxy's API is there to connect to. (The instructor's server shares the machine's
network: the proxy reaches it on loopback.) ``--die-with-parent``: the sandbox dies
with the hub; and when the hub stops the server, bwrap's death ends the PID namespace, so
every process the user started dies too.
"""
from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.hub.accounts import Account
from autograder.pipeline.sandbox import seccomp
from autograder.pipeline.sandbox.bwrap import SYSTEM, binds

CONFIG = "/srv/minitorch/config"
RUN = "/srv/minitorch/run"                       # a student's server's socket and the hub's
ETC = ("/etc/hosts", "/etc/mime.types", "/etc/ssl")


@dataclass(frozen=True)
class View:
    """What one user's server sees. Paths are outside paths unless named ``inside``."""

    account: Account
    home: Path                                   # mounted on /home/<user>
    environment: Path                            # the virtual environment the server runs from
    interpreter: Path                            # the Python prefix it was made from
    config: Path                                 # hub/student or hub/instructor, on CONFIG
    identity: Path                               # a folder with this sandbox's passwd and group
    shared: tuple[tuple[Path, str, bool], ...] = ()     # (outside, inside, writable)
    scratch: tuple[str, ...] = ()                # inside: private 1 MiB folders (mode 1777)
    shm_bytes: int = 64 << 20
    own_network: bool = False                    # a network namespace with only its loopback

    @property
    def inside_home(self) -> str:
        return f"/home/{self.account.student}"


def identity_files(view: View) -> None:
    """Write the ``passwd`` and ``group`` the sandbox sees: root, the user, nobody."""
    account, folder = view.account, view.identity
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{account.student}:x:{account.uid}:{account.gid}::{view.inside_home}:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    (folder / "group").write_text(f"root:x:0:\n{account.student}:x:{account.gid}:\n"
                                  "nogroup:x:65534:\n")


def command(view: View, bwrap: str | None = None, setpriv: str | None = None) -> list[str]:
    """The filter's launcher, ``bwrap`` and ``setpriv`` arguments; the server's command line
    follows them."""
    inside = [(str(view.interpreter), False), (str(view.environment), False),
              ("/etc/passwd", False), (CONFIG, False), (view.inside_home, True)]
    inside += [(path, writable) for _, path, writable in view.shared]
    args = [sys.executable, "-I", seccomp.__file__, bwrap or shutil.which("bwrap") or "bwrap",
            "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup", *(["--unshare-net"] if view.own_network else []),
            "--hostname", view.account.student,
            "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(view.shm_bytes), "--tmpfs", "/dev/shm"]
    args += _parents([path for path, _ in inside], view.scratch) + binds(SYSTEM, "--ro-bind")
    args += binds(ETC, "--ro-bind")
    args += ["--ro-bind", str(view.interpreter), str(view.interpreter),
             "--ro-bind", str(view.environment), str(view.environment),
             "--ro-bind", str(view.identity / "passwd"), "/etc/passwd",
             "--ro-bind", str(view.identity / "group"), "/etc/group",
             "--ro-bind", str(view.config), CONFIG,
             "--bind", str(view.home), view.inside_home]
    for outside, path, writable in view.shared:
        args += ["--bind" if writable else "--ro-bind", str(outside), path]
    return args + ["--chdir", view.inside_home, "--", setpriv or shutil.which("setpriv") or "setpriv",
                   f"--reuid={view.account.uid}", f"--regid={view.account.gid}", "--clear-groups",
                   "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _parents(paths: list[str], scratch: tuple[str, ...]) -> list[str]:
    """Folders made on the way to each bind: root's, 0755 (bwrap would make them 0700, which
    the student could not pass), or a private 1 MiB tmpfs, 1777, for those in ``scratch``
    (nbgrader wants its exchange root writable). The system's own folders are bound, never made."""
    made: list[str] = []
    args: list[str] = []
    for path in paths:
        for parent in map(str, reversed(PurePosixPath(path).parents)):
            if parent in ("/", "/tmp", "/dev", *made) or any(
                    parent == system or parent.startswith(system + "/") for system in SYSTEM):
                continue
            made.append(parent)
            args += (["--perms", "1777", "--size", str(1 << 20), "--tmpfs", parent]
                     if parent in scratch else ["--perms", "0755", "--dir", parent])
    return args
