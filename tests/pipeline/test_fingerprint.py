"""What a worker reports of its packages, compared with the instructor's."""
from __future__ import annotations

import sys

from autograder.pipeline.job import fingerprint


def test_a_folder_that_hides_a_package_is_named(tmp_path, monkeypatch):
    """A folder of the package's name without ``__init__.py``, first on the path (a scratch
    ``course/`` beside a script), imports as an empty namespace: the report names that folder
    instead of failing on its missing ``__file__``."""
    (tmp_path / "shadowed_course").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "shadowed_course", raising=False)
    found = fingerprint._source_hash("shadowed_course")
    assert found == f"hidden by the folder {tmp_path / 'shadowed_course'} (no __init__.py)"
    mine = {"course package": fingerprint._source_hash("course")}
    assert mine["course package"].startswith("source ")
    assert fingerprint.differences(mine, {"course package": found}) == [
        f"course package: {mine['course package']} here, {found} there"]
