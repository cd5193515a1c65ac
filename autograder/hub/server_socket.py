"""A student's server's socket as the proxy reaches it: pinned where she cannot change it.

Her server makes its socket in a folder of her sandbox that she may write (``sandbox.RUN``),
so she could put a symbolic link in its place, and the proxy (root) would follow it to any Unix
socket of the machine. Once her server's socket is there, the hub opens it without following a
link, checks that it is a socket of her account, and binds that very inode onto a file of
root's beside her folder (``pin``), which is what the proxy connects to: whatever she later
renames, removes or links in her folder, the proxy reaches her server's socket until the hub
unmounts the pin when her server stops (``homes.unmount``).
"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path


def made(path: Path) -> bool:
    """Whether a socket (not a link to one) is at ``path``."""
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def pin(path: Path, pinned: Path, uid: int) -> None:
    """Bind the socket at ``path``, which must be ``uid``'s, onto the file ``pinned``."""
    handle = os.open(path, os.O_PATH | os.O_NOFOLLOW)
    try:
        found = os.fstat(handle)
        if not stat.S_ISSOCK(found.st_mode) or found.st_uid != uid:
            raise OSError(f"{path} is not a socket of uid {uid}: not pinned")
        pinned.touch(mode=0o600)
        done = subprocess.run(["mount", "--no-canonicalize", "--bind", f"/proc/self/fd/{handle}",
                               str(pinned)], pass_fds=(handle,), capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"{path} could not be pinned on {pinned}: {done.stderr.strip()}")
    finally:
        os.close(handle)
