"""Unpack an uploaded zip so that it can write nothing but plain files inside its own folder.

An LMS download (and any zip a student put in it) is hostile input: a member named
``../x`` or ``/etc/x``, a symbolic link or a device encoded in the entry's attributes, a
setuid or world-writable mode, or a few KiB that inflate to gigabytes (a zip bomb, possibly
nested). ``unpack`` checks every entry's declared sizes against ``ArchiveLimits`` before
writing anything (Python's ``zipfile`` never inflates an entry beyond its declared size: a
stream that tries fails its CRC check), creates each file itself (``O_EXCL | O_NOFOLLOW``,
mode 0644, directories 0755, whatever the archive says) and opens archives inside archives
up to ``ArchiveLimits.depth``.

A bad entry costs only that entry (a line in the returned refusals); an archive over its
limits, or not a zip at all, raises ``Refused`` before anything of it is written, and
inside a download costs only that inner archive.
"""
from __future__ import annotations

import os
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO, NamedTuple

FILE_MODE, DIR_MODE = 0o644, 0o755
MiB = 1 << 20
# What zipfile raises on a damaged or unsupported archive or entry (a bad CRC, an entry that
# inflates beyond its declared size, an unknown compression or encryption).
_UNREADABLE = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError,
               RuntimeError, zlib.error)


@dataclass(frozen=True)
class ArchiveLimits:
    """What one download may hold, archives nested in it included (docs/instructors.md lists these)."""

    total_bytes: int = 1024 * MiB   # uncompressed bytes in one download
    member_bytes: int = 64 * MiB    # one file (a notebook with outputs is a few MiB)
    members: int = 10_000           # entries in one download
    ratio: int = 100                # uncompressed / compressed, for entries over ratio_from
    ratio_from: int = 1 * MiB       # a small file may compress well (a notebook of zeros)
    depth: int = 2                  # the download, and zips inside it; deeper zips are refused


class Refusal(NamedTuple):
    """Something not unpacked: ``where`` is its archive (``download.zip/hw.zip`` when nested)."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


class Refused(Exception):
    """An archive that is not unpacked at all; ``refusal`` says which and why."""

    def __init__(self, where: str, what: str) -> None:
        self.refusal = Refusal(where, what)
        super().__init__(str(self.refusal))


@dataclass
class _Budget:
    """What is left of a download's limits while its nested archives are unpacked."""

    limits: ArchiveLimits
    members: int = 0
    total_bytes: int = 0
    refusals: list[Refusal] = field(default_factory=list)

    def take(self, entries: list[zipfile.ZipInfo], name: str) -> None:
        members = self.members + len(entries)
        total = self.total_bytes + sum(e.file_size for e in entries)
        if members > self.limits.members:
            raise Refused(name, f"more than {self.limits.members} entries")
        if total > self.limits.total_bytes:
            raise Refused(name, f"more than {self.limits.total_bytes} bytes uncompressed")
        self.members, self.total_bytes = members, total


def unpack(archive: Path, into: Path, limits: ArchiveLimits = ArchiveLimits()) -> list[Refusal]:
    """Unpack the zip ``archive`` into the new folder ``into``; what was refused in it.
    Raises ``Refused`` (with nothing written) when the archive as a whole is."""
    budget = _Budget(limits)
    _unpack(archive, Path(into), budget, depth=1, name=archive.name)
    return budget.refusals


def _unpack(archive: Path, into: Path, budget: _Budget, depth: int, name: str) -> None:
    if os.path.lexists(into):
        raise Refused(name, f"its folder {into.name!r} exists already")
    try:
        with zipfile.ZipFile(archive) as zf:
            entries = zf.infolist()
            budget.take(entries, name)
            into.mkdir(mode=DIR_MODE)
            for entry in entries:
                why = _problem(entry, budget.limits) or _write(zf, entry, into)
                if why:
                    budget.refusals.append(Refusal(name, f"{entry.filename!r}: {why}"))
                elif _is_zip(entry):
                    _unpack_inner(into, entry.filename, budget, depth + 1, name)
    except _UNREADABLE as error:
        shutil.rmtree(into, ignore_errors=True)
        raise Refused(name, f"not a readable zip ({error})") from error


def _unpack_inner(into: Path, entry: str, budget: _Budget, depth: int, name: str) -> None:
    """A zip inside the download, unpacked next to itself (``hw.zip`` into ``hw/``, as
    nbgrader does); when it breaks a limit it is left as a file, unopened (or its folder is
    removed if it turns out unreadable), and the rest of the download goes on."""
    archive = into / entry
    try:
        if depth > budget.limits.depth:
            raise Refused(name, f"a zip nested deeper than {budget.limits.depth} levels")
        _unpack(archive, archive.with_suffix(""), budget, depth, f"{name}/{entry}")
    except Refused as error:
        budget.refusals.append(Refusal(name, f"{entry!r} not opened: {error.refusal.what}"))


def _problem(entry: zipfile.ZipInfo, limits: ArchiveLimits) -> str | None:
    """Why one entry is not written, or None."""
    path = PurePosixPath(entry.filename)
    kind = stat.S_IFMT(entry.external_attr >> 16)
    if entry.filename.startswith("/") or "\\" in entry.filename or ".." in path.parts:
        return "a path outside the archive's folder"
    if kind == stat.S_IFLNK:
        return "a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "a special file (device, pipe or socket)"
    if entry.file_size > limits.member_bytes:
        return f"more than {limits.member_bytes} bytes uncompressed"
    if entry.file_size > limits.ratio_from and \
            entry.file_size > limits.ratio * max(entry.compress_size, 1):
        return f"compressed more than {limits.ratio} to 1 (a zip bomb?)"
    return None


def _write(zf: zipfile.ZipFile, entry: zipfile.ZipInfo, into: Path) -> str | None:
    """Write one entry below ``into`` as a plain file or folder; why not, or None."""
    parts = [p for p in PurePosixPath(entry.filename).parts if p != "."]
    if not parts:
        return None
    try:
        folder = _folders(into, parts[:-1])
        if entry.is_dir():
            _folders(folder, parts[-1:])
            return None
        target = folder / parts[-1]
        out = _create(target)
    except FileExistsError:
        return "a second entry of that name"
    except OSError as error:
        return f"not writable here ({error.strerror})"
    try:
        with out, zf.open(entry) as data:
            shutil.copyfileobj(data, out, MiB)
    except _UNREADABLE as error:
        target.unlink()
        return f"unreadable ({error})"
    return None


def _create(target: Path) -> BinaryIO:
    """A new plain file (mode 0644), never through a symbolic link, never over a file."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    return os.fdopen(fd, "wb")


def copy_file(source: Path, target: Path, limits: ArchiveLimits = ArchiveLimits()) -> str | None:
    """Copy a loose file of the download folder as a new plain file (mode 0644); why it is
    not copied (a link, a special file, too large), or None."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        return f"not readable ({error.strerror}; a symbolic link?)"
    with os.fdopen(fd, "rb") as data:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "a special file (device, pipe or socket)"
        if info.st_size > limits.member_bytes:
            return f"more than {limits.member_bytes} bytes"
        try:
            with _create(target) as out:
                shutil.copyfileobj(data, out, MiB)
        except OSError as error:
            return f"not writable here ({error.strerror})"
    return None


def _folders(base: Path, parts: list[str]) -> Path:
    """``base/parts...``, each made (mode 0755) unless it is already a real folder: a
    symbolic link or file in the way raises, so nothing is written through one."""
    for part in parts:
        base = base / part
        try:
            base.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(base).st_mode):
                raise NotADirectoryError(20, "a file of that name is in the way") from None
    return base


def _is_zip(entry: zipfile.ZipInfo) -> bool:
    return not entry.is_dir() and entry.filename.lower().endswith(".zip")
