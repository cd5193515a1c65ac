"""A student's home on a file system image of its own: the disk limit that cannot be exceeded
(her exchange inbound is one too, ``exchange.py``).

Each home is an ext4 image (``<state>/disks/<student>.ext4``, sparse: it takes only what is
written) mounted with ``nosuid,nodev`` on ``<state>/homes/<student>`` while the student's
server runs. A full home fails the student's own writes (``No space left on device``) and
nothing else: the hub's state, the course and the other homes live on other file systems.
A larger limit grows existing images the next time they are mounted.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from autograder.hub.accounts import Account


def mount(image: Path, folder: Path, size: int, account: Account) -> None:
    """Mount ``image`` (made, or grown to ``size`` bytes) on ``folder``, owned by ``account``."""
    if not os.path.ismount(folder):
        image.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not image.exists():
            _make(image, size, account)
        elif image.stat().st_size < size:
            _grow(image, size)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        attach(image, folder)
    os.chown(folder, account.uid, account.gid)
    folder.chmod(0o700)


def attach(image: Path, folder: Path) -> None:
    """Mount the existing ``image`` on the folder ``folder`` (no device, no setuid)."""
    _run(["mount", "-o", "loop,nosuid,nodev", str(image), str(folder)])


def share(folder: Path) -> None:
    """Make ``folder`` a mount point (a bind of itself) whose mounts propagate: one mounted
    under it later appears in every sandbox that bound it before (bwrap's binds are slaves of
    the machine's mounts, and a slave receives only what a shared mount sends)."""
    if not mounted(folder):
        _run(["mount", "--bind", str(folder), str(folder)])
    _run(["mount", "--make-shared", str(folder)])


def mounted(folder: Path) -> bool:
    """Whether ``folder`` is a mount point, a bind within one file system included (which
    ``os.path.ismount`` misses: the folder and its parent are on the same device)."""
    target = os.path.realpath(folder)
    with open("/proc/self/mountinfo") as table:
        points = [re.sub(r"\\([0-7]{3})", lambda octal: chr(int(octal[1], 8)), line.split()[4])
                  for line in table]
    return target in points


def unmount(folder: Path) -> None:
    """Unmount ``folder`` if mounted (lazily when a process still holds it)."""
    if mounted(folder):
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            _run(["umount", "--lazy", str(folder)])


def _make(image: Path, size: int, account: Account) -> None:
    with open(image, "wb") as file:
        file.truncate(size)
    image.chmod(0o600)
    _run(["mkfs.ext4", "-q", "-F", "-m", "0", "-E", f"root_owner={account.uid}:{account.gid}",
          "-L", account.student[:16], str(image)])


def _grow(image: Path, size: int) -> None:
    _run(["e2fsck", "-f", "-p", str(image)], allowed=(0, 1))
    with open(image, "r+b") as file:
        file.truncate(size)
    _run(["resize2fs", "-f", str(image)])


def _run(command: list[str], allowed: tuple[int, ...] = (0,)) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in allowed:
        raise OSError(f"{command[0]} failed on {command[-1]}: {(done.stderr or done.stdout).strip()}")
