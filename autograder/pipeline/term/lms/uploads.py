"""Who handed a file in, read from the names Canvas and Moodle give their bulk downloads.

- Canvas ("Download Submissions"): ``<lastfirst>_[LATE_]<user id>_<submission id>_<file>``,
  where ``<file>`` is the student's upload, renamed ``01_setup-1.ipynb``, ``-2``... when the
  student uploaded again. Canvas's user id is the student's for the whole course, so the
  student id keeps it: ``<lastfirst>-<user id>`` (``doejane-1201``). It is always there,
  not only when two students share a ``lastfirst``: an id that changed when a namesake
  enrolled would move the first student's grades to a new name.
- Moodle ("Download all submissions"): a folder
  ``<Full Name>_<participant id>_assignsubmission_file_`` (or ``_onlinetext_``) holding the upload. Moodle's participant id changes from one
  assignment to the next, so it cannot be part of a student id: the id is the name,
  lower-case, words joined by ``-`` (``jane-doe``); two students of the same name are told
  apart by the course's roster (``autograder/pipeline/term/lms/roster.py``).

Names are made ASCII (``garcíajosé`` → ``garciajose``: accents dropped after Unicode NFKD,
a few letters spelled out), so that every id passes ``names.problem``. A file is read
only where the LMS itself puts it: a Canvas name at the top of the download, a file right
inside a Moodle folder; a look-alike name inside someone's upload (a zip holding
``kimcy_1203_...``, a folder ``Bob Roe_4412_assignsubmission_file_`` inside Jane's) is
never read as another student's hand-in.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath

CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)_"
                    r"(?P<file>.+?)(?:-(?P<attempt>\d+))?(?P<ext>\.[A-Za-z0-9]+)$")
CANVAS_PREFIX = re.compile(r"^[^_/]+_(?:LATE_)?\d+_\d+_")
MOODLE = re.compile(r"^(?P<name>[^/_]+)_(?P<participant>\d+)_assignsubmission_[a-z]+_$")
# Letters that Unicode does not decompose into an ASCII letter and a mark.
SPELLED = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d",
                         "þ": "th", "ı": "i", "ß": "ss"})


@dataclass(frozen=True)
class Upload:
    """One downloaded file and the student the LMS says handed it in."""

    path: str       # inside the extracted download
    lms: str        # "Canvas" or "Moodle"
    name: str       # the student's name as the LMS wrote it: "garcíajosé", "Jane Doe"
    lms_id: str     # Canvas's user id; Moodle's participant id (this assignment's only)
    file_id: str    # the notebook: "01_setup.ipynb"
    rank: tuple[int, int] = (0, 0)   # Canvas's re-upload number, then its submission id

    @property
    def default_id(self) -> str | None:
        """The student id when the roster says nothing; None when the name has no letter
        or digit to make one from (a Moodle name in another script: the roster names it)."""
        if self.lms == "Canvas":
            return f"{ascii_slug(self.name, '') or 'student'}-{self.lms_id}"
        return ascii_slug(self.name, "-") or None

    def __str__(self) -> str:
        what = "user" if self.lms == "Canvas" else "participant"
        return f"{self.lms} {self.name!r} ({what} {self.lms_id}, {self.path})"


def ascii_slug(name: str, sep: str) -> str:
    """``name`` in lower-case ASCII letters and digits, runs of anything else as ``sep``."""
    plain = unicodedata.normalize("NFKD", name.casefold().translate(SPELLED))
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", sep, plain).strip(sep)


def parse(path: str) -> Upload | str:
    """The upload at ``path`` (relative to the extracted download folder), or why it is not
    read as one."""
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and MOODLE.match(parts[-2]):
        return _moodle(path, parts)
    if CANVAS.match(parts[-1]):
        return _canvas(path, parts)
    return "not a Canvas or Moodle download name"


def _moodle(path: str, parts: tuple[str, ...]) -> Upload | str:
    if outer := _inside_an_upload(parts[:-2]):
        return f"inside another upload ({outer})"
    match = MOODLE.match(parts[-2])
    return Upload(path, "Moodle", match["name"], match["participant"], parts[-1])


def _canvas(path: str, parts: tuple[str, ...]) -> Upload | str:
    if outer := _inside_an_upload(parts[:-1]):
        return f"inside another upload ({outer})"
    match = CANVAS.match(parts[-1])
    return Upload(path, "Canvas", match["name"], match["user"], match["file"] + match["ext"],
                  (int(match["attempt"] or 0), int(match["submission"])))


def _inside_an_upload(folders: tuple[str, ...]) -> str | None:
    """The first of ``folders`` named like an LMS upload, or None."""
    return next((f for f in folders if MOODLE.match(f) or CANVAS_PREFIX.match(f)), None)
