"""The course's extractor for ``nbgrader zip_collect``: unpacks the LMS download with the
limits of ``autograder/pipeline/term/lms/safe_unzip.py`` instead of nbgrader's own extractor (which
keeps every entry's mode, creates what the archive says and stops the whole class at the
first ``../`` entry).

``downloaded/<unit>/archive/`` is walked like nbgrader does: each ``.zip`` is unpacked into
a folder of its name under ``extracted/``, any other file is copied. What is refused (an
entry, an archive nested in the download, or a whole download) is logged one line each,
then one summary line; everything else is unpacked and collected as usual.

Limits: ``c.LmsExtractor.limits = ArchiveLimits(...)`` in ``nbgrader_config.py``.
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from nbgrader.plugins import ExtractorPlugin
from traitlets import Instance, List

from autograder.pipeline.term.lms.safe_unzip import (DIR_MODE, ArchiveLimits, Refusal, Refused,
                                                     copy_file, unpack)


class LmsExtractor(ExtractorPlugin):
    """Unpacks LMS downloads: no path outside ``extracted/``, no link, no special file, no
    setuid or world-writable mode, no zip bomb (``ArchiveLimits``)."""

    zip_ext = List([".zip"], help="Extensions of the archives to unpack (zip only; any other "
                                  "file is copied as it is)").tag(config=True)
    limits = Instance(ArchiveLimits, args=(), help="Sizes, counts, compression ratio and "
                      "nesting depth allowed in one download").tag(config=True)

    def extract(self, archive_path: str, extracted_path: str) -> None:
        refusals = []
        for source in _files(Path(archive_path)):
            target = Path(extracted_path) / source.relative_to(archive_path)
            target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            refusals += self._one(source, target)
        for refusal in refusals:
            self.log.warning("Refused: %s", refusal)
        if refusals:
            where = Counter(refusal.where for refusal in refusals)
            self.log.warning("Refused while unpacking (each listed above): %s; everything else "
                             "was unpacked", ", ".join(f"{n} in {w}" for w, n in where.items()))

    def _one(self, source: Path, target: Path) -> list[Refusal]:
        """Unpack or copy one file of the download folder; what was refused."""
        if source.suffix.lower() not in self.zip_ext:
            self.log.info("Copying from: %s", source)
            why = copy_file(source, target, self.limits)
            return [Refusal(source.name, why)] if why else []
        self.log.info("Extracting from: %s", source)
        try:
            return unpack(source, target.with_suffix(""), self.limits)
        except Refused as error:
            return [error.refusal._replace(what=f"the whole archive: {error.refusal.what}")]


def _files(root: Path) -> list[Path]:
    """Every file below ``root`` (the instructor's download folder), sorted; folders that are
    symbolic links are not entered."""
    found = []
    for folder, _, names in os.walk(root):
        found += [Path(folder) / name for name in names]
    return sorted(found)

