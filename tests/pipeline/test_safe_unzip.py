"""Unpacking an uploaded zip (autograder/pipeline/term/lms/safe_unzip.py): each limit, each kind of
entry that must not be written, and the modes of what is."""
from __future__ import annotations

import os
import stat
import time
import zipfile
from pathlib import Path

import pytest

from autograder.pipeline.term.lms.safe_unzip import ArchiveLimits, Refused, copy_file, unpack
from zips import nested_bomb, understate, zip_bytes


def archive(tmp_path: Path, entries: dict, name: str = "download.zip") -> Path:
    path = tmp_path / name
    path.write_bytes(zip_bytes(entries))
    return path


def refusals(*args) -> list[str]:
    """``unpack(*args)``'s refusals as the lines the instructor reads."""
    return [str(refusal) for refusal in unpack(*args)]


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["../up.txt", "a/../../up.txt", "/tmp/absolute.txt",
                                  "..\\windows.txt"])
def test_an_entry_outside_the_folder_is_refused_alone(tmp_path, name):
    refused = refusals(archive(tmp_path, {name: b"x", "ok.txt": b"ok"}), tmp_path / "out")
    assert refused == [f"download.zip: {name!r}: a path outside the archive's folder"]
    assert files(tmp_path / "out") == {"ok.txt": b"ok"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["download.zip", "out"]


@pytest.mark.parametrize("kind, why", [(stat.S_IFLNK, "a symbolic link"),
                                       (stat.S_IFIFO, "a special file"),
                                       (stat.S_IFCHR, "a special file"),
                                       (stat.S_IFSOCK, "a special file")])
def test_links_and_special_files_are_refused(tmp_path, kind, why):
    entries = {"x": (b"/etc/passwd", kind | 0o777), "ok.txt": b"ok"}
    refused = refusals(archive(tmp_path, entries), tmp_path / "out")
    assert len(refused) == 1 and why in refused[0]
    assert files(tmp_path / "out") == {"ok.txt": b"ok"}


def test_modes_are_0644_and_0755_whatever_the_archive_says(tmp_path):
    unpack(archive(tmp_path, {"tool": (b"#!/bin/sh", stat.S_IFREG | 0o6777),
                              "open/": (b"", stat.S_IFDIR | 0o1777)}), tmp_path / "out")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "out" / "tool").stat().st_mode) == 0o644 & ~umask
    assert stat.S_IMODE((tmp_path / "out" / "open").stat().st_mode) == 0o755 & ~umask


def test_an_entry_over_the_member_limit_is_refused_alone(tmp_path):
    refused = refusals(archive(tmp_path, {"big": os.urandom(2000), "ok": b"ok"}),
                       tmp_path / "out", ArchiveLimits(member_bytes=1000))
    assert refused == ["download.zip: 'big': more than 1000 bytes uncompressed"]
    assert files(tmp_path / "out") == {"ok": b"ok"}


def test_an_entry_compressed_like_a_bomb_is_refused_alone(tmp_path):
    entries = {"zeros": bytes(4 << 20), "small zeros": bytes(512 << 10)}
    refused = refusals(archive(tmp_path, entries), tmp_path / "out")
    assert refused == ["download.zip: 'zeros': compressed more than 100 to 1 (a zip bomb?)"]
    assert files(tmp_path / "out") == {"small zeros": bytes(512 << 10)}


@pytest.mark.parametrize("limits, why", [(ArchiveLimits(members=2), "more than 2 entries"),
                                         (ArchiveLimits(total_bytes=100), "more than 100 bytes")])
def test_a_download_over_its_limits_is_refused_before_anything_is_written(tmp_path, limits, why):
    with pytest.raises(Refused, match=why):
        unpack(archive(tmp_path, {"a": bytes(60), "b": bytes(60), "c": b""}), tmp_path / "out",
               limits)
    assert not (tmp_path / "out").exists()


def test_a_zip_inside_over_the_budget_costs_only_itself(tmp_path):
    inner = zip_bytes({"a": bytes(600), "b": bytes(600)})
    refused = refusals(archive(tmp_path, {"hw.zip": inner, "ok": b"ok"}), tmp_path / "out",
                       ArchiveLimits(total_bytes=1000))
    assert refused == ["download.zip: 'hw.zip' not opened: more than 1000 bytes uncompressed"]
    assert files(tmp_path / "out") == {"hw.zip": inner, "ok": b"ok"}


def test_zips_inside_are_unpacked_down_to_the_depth_limit(tmp_path):
    deepest = zip_bytes({"c.txt": b"c"})
    inner = zip_bytes({"b.zip": deepest, "b.txt": b"b"})
    refused = refusals(archive(tmp_path, {"a.zip": inner}), tmp_path / "out")
    assert refused == ["download.zip/a.zip: 'b.zip' not opened: a zip nested deeper than 2 levels"]
    assert files(tmp_path / "out") == {"a.zip": inner, "a/b.txt": b"b", "a/b.zip": deepest}


def test_a_nested_bomb_is_refused_in_well_under_a_second(tmp_path):
    bomb = nested_bomb(levels=4, copies=16, zeros=1 << 20)   # 64 GiB
    path = archive(tmp_path, {"roebob_1202_90002_hw.zip": bomb, "ok": b"ok"})
    started = time.perf_counter()
    refused = refusals(path, tmp_path / "out")
    assert time.perf_counter() - started < 0.5
    assert len(bomb) < 64 << 10 and len(refused) == 16
    assert sum(len(v) for v in files(tmp_path / "out").values()) < 1 << 20   # zips, unopened


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_second_entry_of_one_name_or_one_through_a_file_is_refused(tmp_path):
    path = archive(tmp_path, {"a": b"first", "b": b"file"})
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("a", b"second")
        zf.writestr("b/c", b"under a file")
    refused = refusals(path, tmp_path / "out")
    assert refused == [
        "download.zip: 'a': a second entry of that name",
        "download.zip: 'b/c': not writable here (a file of that name is in the way)"]
    assert files(tmp_path / "out") == {"a": b"first", "b": b"file"}


def test_a_damaged_entry_is_refused_alone(tmp_path):
    path = archive(tmp_path, {"ok": b"ok", "bad": b"z" * 100})
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("bad")
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len("bad") + 2] ^= 0xFF   # inside its compressed data
    path.write_bytes(data)
    refused = refusals(path, tmp_path / "out")
    assert len(refused) == 1 and refused[0].startswith("download.zip: 'bad': unreadable")
    assert files(tmp_path / "out") == {"ok": b"ok"}


def test_an_entry_that_understates_its_size_is_cut_there_and_refused(tmp_path):
    path = tmp_path / "download.zip"
    path.write_bytes(understate(zip_bytes({"ok": b"ok", "liar": bytes(50 << 20)}), "liar", 100))
    refused = refusals(path, tmp_path / "out")
    assert refused == ["download.zip: 'liar': unreadable (Bad CRC-32 for file 'liar')"]
    assert files(tmp_path / "out") == {"ok": b"ok"}


def test_a_file_that_is_not_a_zip_is_refused(tmp_path):
    (tmp_path / "download.zip").write_bytes(b"not a zip")
    with pytest.raises(Refused, match="download.zip: not a readable zip"):
        unpack(tmp_path / "download.zip", tmp_path / "out")


def test_a_loose_file_is_copied_plain_a_link_or_pipe_is_not(tmp_path):
    (tmp_path / "nb.ipynb").write_text("{}")
    os.chmod(tmp_path / "nb.ipynb", 0o4777)
    os.symlink("/etc/passwd", tmp_path / "link.ipynb")
    os.mkfifo(tmp_path / "pipe.ipynb")
    out = tmp_path / "out"
    out.mkdir()
    assert copy_file(tmp_path / "nb.ipynb", out / "nb.ipynb") is None
    assert not stat.S_IMODE((out / "nb.ipynb").stat().st_mode) & (stat.S_ISUID | stat.S_IWOTH)
    assert "symbolic link" in copy_file(tmp_path / "link.ipynb", out / "link.ipynb")
    assert "special file" in copy_file(tmp_path / "pipe.ipynb", out / "pipe.ipynb")
    assert sorted(p.name for p in out.iterdir()) == ["nb.ipynb"]
