"""A Unix account per user, made by the hub: the uid their server, kernels and files have.

With a uid of their own, the kernel keeps students apart where the sandbox shares something
(the network namespace, the exchange's folders): a student cannot signal, trace or read
another's processes, and every file they write, in their home or the exchange, is theirs,
which the exchange's collector checks. Accounts are named ``<prefix><student>``
(``MINITORCH_HUB_ACCOUNT_PREFIX``, ``jupyter-`` by default as The Littlest JupyterHub names
them), have no password and no login shell, and carry a comment that marks them as the hub's:
an existing account without it is never taken over. The instructor gets one too
(``INSTRUCTOR``): it owns the course's files, and its group may read the students' inbound
folders (``autograder.hub.exchange``).
"""
from __future__ import annotations

import pwd
import re
import subprocess
import time
from dataclasses import dataclass

MARK = "minitorch-hub student"
INSTRUCTOR = "minitorch-hub instructor"
UNIX_NAME = re.compile(r"[a-z_][a-z0-9_.-]{0,31}")
LOCKED = (1, 10)          # useradd/userdel: passwd or group file busy (another tool holds the lock)


class AccountError(RuntimeError):
    """A student's account cannot be made or used."""


@dataclass(frozen=True)
class Account:
    name: str          # the Unix name, e.g. jupyter-alice
    student: str       # the hub's name, e.g. alice
    uid: int
    gid: int


def unix_name(prefix: str, student: str) -> str:
    """``prefix + student`` if it is a portable Unix account name (else ``AccountError``)."""
    name = prefix + student
    if not UNIX_NAME.fullmatch(name):
        raise AccountError(f"{name!r} (for student {student!r}) cannot be a Unix account name: "
                           "32 characters at most, lowercase letters, digits, '.', '_' and '-', "
                           "starting with a letter or '_'")
    return name


def ensure(prefix: str, student: str, mark: str = MARK) -> Account:
    """The account of ``student`` (or of the instructor, ``mark=INSTRUCTOR``), made on first use."""
    name = unix_name(prefix, student)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        _run(["useradd", "--no-create-home", "--home-dir", f"/home/{student}", "--shell",
              "/usr/sbin/nologin", "--user-group", "--comment", f"{mark} {student}", name])
        entry = pwd.getpwnam(name)
    if entry.pw_gecos != f"{mark} {student}":
        raise AccountError(f"the Unix account {name!r} exists but was not made by this hub for "
                           f"{student!r} (its comment is {entry.pw_gecos!r}); rename that "
                           "account or set MINITORCH_HUB_ACCOUNT_PREFIX")
    return Account(name, student, entry.pw_uid, entry.pw_gid)


def made(prefix: str) -> list[str]:
    """The accounts this hub made with ``prefix`` (their Unix names)."""
    return [entry.pw_name for entry in pwd.getpwall()
            if entry.pw_name.startswith(prefix)
            and entry.pw_gecos.startswith((MARK + " ", INSTRUCTOR + " "))]


def remove(prefix: str) -> None:
    """Delete the accounts made with ``prefix`` (and their groups); their files stay."""
    for name in made(prefix):
        _run(["userdel", name])


def _run(command: list[str], attempts: int = 50) -> None:
    """Run ``useradd``/``userdel``, waiting while another process holds the account files."""
    for _ in range(attempts):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode not in LOCKED or "lock" not in done.stderr:
            break
        time.sleep(0.1)
    if done.returncode != 0:
        raise AccountError(f"{' '.join(command[:1] + command[-1:])} failed: {done.stderr.strip()}")
