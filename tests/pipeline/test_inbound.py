"""Collect's two rules in isolation (autograder/pipeline/term/exchange/): what a folder's name and
time claim (``claim``), and copying a folder without following a link (``nofollow``), also
when an entry is swapped between the look and the open. The whole collect, through nbgrader,
is in test_exchange.py."""
from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from autograder.pipeline import claim
from autograder.pipeline.term.exchange import nofollow
from autograder.pipeline.claim import Refused

NOW = datetime(2026, 11, 27, 12, 0, 0)


def test_a_folder_name_gives_student_assignment_and_time():
    found = claim.claim("alice+01_setup+2026-11-27 11:00:00.000000 UTC+AbC_-12", NOW)
    assert (found.student, found.assignment, found.time) == \
        ("alice", "01_setup", datetime(2026, 11, 27, 11, 0, 0))


@pytest.mark.parametrize("minutes, believed", [(4, True), (6, False)])
def test_a_few_minutes_of_clock_skew_are_allowed(minutes, believed):
    stamp = f"{NOW + timedelta(minutes=minutes):%Y-%m-%d %H:%M:%S} UTC"
    if believed:
        assert claim.when(stamp, "its name", NOW) == NOW + timedelta(minutes=minutes)
    else:
        with pytest.raises(Refused, match="is in the future"):
            claim.when(stamp, "its name", NOW)


@pytest.mark.parametrize("stamp", ["2026-11-27 10:00:00 ../../../../etc/passwd",
                                   "9999-12-31 23:59:59 -1200", "", "x" * 65])
def test_a_time_that_cannot_be_read_is_refused_before_dateutil_opens_a_file(stamp):
    with pytest.raises(Refused, match="cannot be read"):
        claim.when(stamp, "timestamp.txt", NOW)


@pytest.mark.parametrize("folder, why", [("alice+01_setup", "is not <student>+"),
                                         ("a+b+c+d+e", "is not <student>+"),
                                         ("alice+../x+2026-01-01 00:00:00+r", "assignment")])
def test_malformed_folder_names_are_refused(folder, why):
    with pytest.raises(Refused, match=why.replace("+", r"\+")):
        claim.claim(folder, NOW)


def test_an_owner_other_than_the_student_is_refused_by_name_and_uid():
    with pytest.raises(Refused, match=r"names daemon \(uid 1\) but belongs to root \(uid 0\)"):
        claim.check_owner("daemon", 0, 1)
    claim.check_owner("daemon", 1, 1)


@pytest.fixture
def folder(tmp_path):
    source = tmp_path / "inbound" / "alice+01_setup+t+r"
    (source / "sub").mkdir(parents=True)
    (source / "01_setup.ipynb").write_text("notebook")
    (source / "sub" / "data.csv").write_text("1,2")
    (tmp_path / "secret.txt").write_text("the instructor's")
    return source


def _copy(source: Path, destination: Path, **rules) -> nofollow.Copied:
    parent = os.open(source.parent, nofollow.FOLDER)
    fd = nofollow.open_folder(parent, source.name)
    try:
        return nofollow.copy_tree(fd, destination, nofollow.Rules(os.getuid(), **rules))
    finally:
        os.close(fd)
        os.close(parent)


def test_a_plain_folder_is_copied_whole(folder, tmp_path):
    copied = _copy(folder, tmp_path / "copy")
    assert (tmp_path / "copy" / "sub" / "data.csv").read_text() == "1,2"
    assert copied.total_bytes == len("notebook") + len("1,2") and not copied.notes


def _swap_after_the_look(monkeypatch, name: str, swap) -> None:
    """``swap(path)`` replaces ``name`` right after the copy looked at it."""
    look = nofollow._lstat

    def looked(parent: int, entry: str) -> os.stat_result:
        seen = look(parent, entry)
        if entry == name:
            swap(Path(f"/proc/self/fd/{parent}").resolve() / entry)
        return seen
    monkeypatch.setattr(nofollow, "_lstat", looked)


@pytest.mark.parametrize("swap, why", [
    (lambda path: path.unlink() or path.symlink_to(path.parents[2] / "secret.txt"),
     "without following a link"),
    (lambda path: os.replace(path.parents[2] / "secret.txt", path),
     "was replaced while it was being collected"),
    (lambda path: path.unlink() or os.mkfifo(path), "was replaced while it was being collected"),
], ids=["symlink", "other file", "FIFO"])
def test_a_file_swapped_after_the_look_is_never_followed(folder, tmp_path, monkeypatch, swap, why):
    _swap_after_the_look(monkeypatch, "01_setup.ipynb", swap)
    with pytest.raises(Refused, match=why):
        _copy(folder, tmp_path / "copy")
    assert not any("instructor" in p.read_text() for p in (tmp_path / "copy").rglob("*")
                   if p.is_file())


def test_a_folder_swapped_for_a_link_after_the_look_is_never_followed(folder, tmp_path,
                                                                     monkeypatch):
    _swap_after_the_look(monkeypatch, "sub",
                         lambda path: shutil.rmtree(path) or path.symlink_to(tmp_path))
    with pytest.raises(Refused, match="cannot be opened as a folder without following a link"):
        _copy(folder, tmp_path / "copy")


def test_a_file_too_large_is_left_out_and_a_folder_too_large_refused(folder, tmp_path):
    copied = _copy(folder, tmp_path / "copy", max_file_bytes=5)
    assert copied.notes == ["left out '01_setup.ipynb': larger than 5 bytes"]
    assert sorted(p.name for p in (tmp_path / "copy").rglob("*")) == ["data.csv", "sub"]
    with pytest.raises(Refused, match="more than 10 bytes"):
        _copy(folder, tmp_path / "again", max_total_bytes=10)


def test_too_deep_or_too_many_entries_is_refused(folder, tmp_path):
    deep = folder / "/".join(["d"] * 20)
    deep.mkdir(parents=True)
    with pytest.raises(Refused, match="more than 16 folders deep"):
        _copy(folder, tmp_path / "copy")
    with pytest.raises(Refused, match="more than 3 files and folders"):
        _copy(folder, tmp_path / "again", max_entries=3)


def test_ignored_names_are_skipped_silently_as_nbgrader_does(folder, tmp_path):
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "x.ipynb").write_text("old")
    copied = _copy(folder, tmp_path / "copy", ignore=(".ipynb_checkpoints",))
    assert not (tmp_path / "copy" / ".ipynb_checkpoints").exists() and not copied.notes
