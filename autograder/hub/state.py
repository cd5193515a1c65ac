"""The hub's state folder: secrets and the database in files only root can read.

``<state>/`` (``hub/state`` by default) is root's, mode 0700, and no sandbox binds any of it
except each student's own home (``homes/<student>``, their own file system):

- ``hub/``: JupyterHub's database, its cookie secret, the proxy's token and pid, each file 0600;
- ``logins.csv``: every user's password (``autograder.hub.logins``), 0600;
- ``disks/``, ``homes/``, ``sandboxes/``: the students' home images, their mount points, and
  the ``passwd``/``group`` each sandbox sees.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def private_folder(path: Path) -> Path:
    """``path``, made if missing, owned by this user and mode 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.geteuid():
        raise PermissionError(f"{path} belongs to uid {path.stat().st_uid}, not to the hub's user")
    path.chmod(0o700)
    return path


def private_file(path: Path, content: str | None = None) -> Path:
    """``path`` as a 0600 file (made empty, or with ``content``, if missing)."""
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(content or "")
    if stat.S_IMODE(path.stat().st_mode) != 0o600:
        path.chmod(0o600)
    return path


def secret(path: Path, nbytes: int = 32) -> str:
    """The secret kept in ``path`` (0600), made the first time."""
    private_file(path, secrets.token_hex(nbytes))
    return path.read_text().strip()


def write_private(path: Path, content: str) -> None:
    """Replace ``path`` with ``content`` atomically, the new file 0600 from the start."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    private_file(temporary, content)
    os.replace(temporary, path)
