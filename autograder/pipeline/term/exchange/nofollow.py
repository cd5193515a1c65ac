"""Copying a folder a student can write to, without following a link or reading outside it.

Every entry is opened relative to its parent folder's descriptor with ``O_NOFOLLOW``, and
what was opened is checked again on the descriptor (``fstat``): a file swapped for a
symbolic link between the look and the open cannot make the copy follow it, and one swapped
for another file is noticed. ``nbgrader submit`` only ever writes folders and regular files,
each with one name, owned by the student, so anything else is an attack and refuses the
whole folder (``Refused``): a symbolic link (to the instructor's ``source/``, say), a hard
link (a file with more than one name may be someone else's: protected_hardlinks stops
that on most Linux systems, not all), a device, a FIFO or a socket, an entry owned by
someone other than the folder's owner. Names that are not safe (hidden, HTML, spaces:
``autograder.pipeline.names``) are left out with a note: an honest student's folder may
hold ``.DS_Store`` or ``Untitled (1).ipynb``. So is, where ``Rules.released`` is given, every
file that is neither one of those paths nor matches a ``Rules.declared`` glob: a ``.js`` a
student hands in is no file of the course (issue 46).
"""
from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.pipeline import names
from autograder.pipeline.claim import Refused

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the look cannot make the open wait for a writer
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 20
KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
         stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


@dataclass(frozen=True)
class Rules:
    """What a copy accepts. ``owner`` is the uid every entry must have (None: any);
    ``ignore`` and ``include`` are nbgrader's ``CourseDirectory`` globs; sizes in bytes;
    ``released`` the paths of the only files to copy (None: any), ``declared`` globs of paths
    copied besides them."""

    owner: int | None
    ignore: tuple[str, ...] = ()
    include: tuple[str, ...] = ("*",)
    max_file_bytes: int = 100 << 20
    max_total_bytes: int = 1 << 30
    max_depth: int = 16
    max_entries: int = 10_000
    released: frozenset[str] | None = None
    declared: tuple[str, ...] = ()


@dataclass
class Copied:
    """What a copy did: files left out and why, bytes copied, and the newest change time
    (``st_ctime``, which no student can set back) of anything in the folder."""

    notes: list[str] = field(default_factory=list)
    total_bytes: int = 0
    entries: int = 0
    latest_change: float = 0.0


def open_folder(parent: int, name: str) -> int:
    """A descriptor of the folder ``name`` in ``parent``, never through a link."""
    try:
        return os.open(name, FOLDER, dir_fd=parent)
    except OSError as error:
        raise Refused(f"{name!r} cannot be opened as a folder without following a link "
                      f"({error.strerror})") from None


def copy_tree(folder: int, destination: Path, rules: Rules) -> Copied:
    """Copy the folder open as ``folder`` to the new folder ``destination``."""
    copied = Copied()
    _copy_folder(folder, destination, "", rules, copied)
    return copied


def _lstat(parent: int, name: str) -> os.stat_result:
    return os.stat(name, dir_fd=parent, follow_symlinks=False)


def _copy_folder(folder: int, destination: Path, path: str, rules: Rules, copied: Copied) -> None:
    _accept(os.fstat(folder), path or ".", rules, copied)
    if path.count("/") >= rules.max_depth:
        raise Refused(f"{path!r} lies more than {rules.max_depth} folders deep")
    destination.mkdir()
    for name in sorted(os.listdir(folder)):
        where = f"{path}/{name}" if path else name
        seen = _lstat(folder, name)
        kind = stat.S_IFMT(seen.st_mode)
        if kind not in (stat.S_IFDIR, stat.S_IFREG):
            raise Refused(f"{where!r} is {KINDS.get(kind, 'not a file or folder')}")
        if _ignored(name, kind, rules):
            continue
        problem = names.problem(name, "file name") or _not_released(where, kind, rules)
        if problem:
            copied.notes.append(f"left out {where!r}: {problem}")
        elif kind == stat.S_IFDIR:
            inner = open_folder(folder, name)
            try:
                _copy_folder(inner, destination / name, where, rules, copied)
            finally:
                os.close(inner)
        else:
            _copy_file(folder, name, destination / name, where, seen, rules, copied)


def _ignored(name: str, kind: int, rules: Rules) -> bool:
    """nbgrader's rule: excluded names, and files not included, are not copied."""
    if any(fnmatch.fnmatch(name, glob) for glob in rules.ignore):
        return True
    return kind == stat.S_IFREG and not any(fnmatch.fnmatch(name, glob) for glob in rules.include)


def _not_released(where: str, kind: int, rules: Rules) -> str | None:
    """Why ``where`` is not the unit's, or None: it was released, it is declared, or it is a
    folder that may hold either."""
    if rules.released is None or where in rules.released \
            or any(fnmatch.fnmatchcase(where, glob) for glob in rules.declared):
        return None
    if kind == stat.S_IFDIR and any(path.startswith(where + "/") or path[:1] in "*?["
                                    for path in (*rules.released, *rules.declared)):
        return None
    return "the unit released no such file (SafeCollect.also_collect declares others)"


def _accept(found: os.stat_result, where: str, rules: Rules, copied: Copied) -> None:
    """``Refused`` for an entry owned by someone else, or one too many; else counted."""
    if rules.owner is not None and found.st_uid != rules.owner:
        raise Refused(f"{where!r} belongs to uid {found.st_uid}, not to the folder's owner "
                      f"(uid {rules.owner})")
    copied.entries += 1
    if copied.entries > rules.max_entries:
        raise Refused(f"it holds more than {rules.max_entries} files and folders")
    copied.latest_change = max(copied.latest_change, found.st_ctime)


def _copy_file(parent: int, name: str, destination: Path, where: str, seen: os.stat_result,
               rules: Rules, copied: Copied) -> None:
    try:
        source = os.open(name, FILE, dir_fd=parent)
    except OSError as error:
        raise Refused(f"{where!r} cannot be opened without following a link "
                      f"({error.strerror})") from None
    try:
        opened = os.fstat(source)
        if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) \
                or not stat.S_ISREG(opened.st_mode):
            raise Refused(f"{where!r} was replaced while it was being collected")
        if opened.st_nlink > 1:
            raise Refused(f"{where!r} is a hard link ({opened.st_nlink} names): the same file "
                          "may be someone else's")
        _accept(opened, where, rules, copied)
        if _copy_bytes(source, destination, where, rules, copied):
            os.utime(destination, ns=(opened.st_atime_ns, opened.st_mtime_ns))
    finally:
        os.close(source)


def _copy_bytes(source: int, destination: Path, where: str, rules: Rules, copied: Copied) -> bool:
    """Copy at most ``rules.max_file_bytes`` (a larger file is left out with a note, as
    nbgrader does, and False returned) while the whole folder stays under
    ``rules.max_total_bytes``."""
    size = 0
    with destination.open("xb") as out:
        while chunk := os.read(source, CHUNK):
            size += len(chunk)
            if size > rules.max_file_bytes:
                break
            if copied.total_bytes + size > rules.max_total_bytes:
                raise Refused(f"it holds more than {rules.max_total_bytes} bytes")
            out.write(chunk)
    if size > rules.max_file_bytes:
        destination.unlink()
        copied.notes.append(f"left out {where!r}: larger than {rules.max_file_bytes} bytes")
        return False
    copied.total_bytes += size
    return True
