"""``nbgrader release_assignment``, and Formgrader's Release button, under the course's schedule.

nbgrader 0.9 lets a course replace its exchange classes; ``nbgrader_config.py`` sets
``c.ExchangeFactory.release_assignment`` to ``ScheduledReleaseAssignment``, which both the
command and Formgrader (``NbGraderAPI.release_assignment``) build. Before anything is copied
to the exchange it refuses a unit whose provided cells carry the solutions of a unit that
has not closed in ``schedule.toml`` (``autograder.notebooks.handout``), naming those units
and their deadlines; a malformed schedule refuses every release, naming the entry.

Two settings, for the command line (``--ScheduledReleaseAssignment.as_of=2026-12-02``) or
``nbgrader_config.py``: ``as_of`` decides as on another date (a rehearsal, or a test), and
``ignore_schedule`` releases anyway, logging a warning that names the solutions going out.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from traitlets import Bool, Unicode

from autograder.notebooks import handout
from autograder.notebooks.schedule import ScheduleError
from autograder.notebooks.sync import SyncError

OVERRIDE = "--ScheduledReleaseAssignment.ignore_schedule=True"


class ScheduledReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release to the exchange, refused while a carried unit is still open."""

    as_of = Unicode("", help="Decide as on this ISO 8601 date or date-time instead of now "
                             "(read in schedule.toml's time zone when it has no offset).").tag(config=True)
    ignore_schedule = Bool(False, help="Release even if the unit carries the solutions of a unit "
                                       "still open; a warning names them.").tag(config=True)

    def init_src(self) -> None:
        """nbgrader's checks of the release folder, then the schedule's."""
        super().init_src()
        root, unit = Path(self.coursedir.root), self.coursedir.assignment_id
        try:
            warnings = handout.check(root, [unit], handout.as_of(root, self.as_of),
                                     self.ignore_schedule)
        except handout.HandoutError as error:
            self.fail(f"{error}\n(to release it anyway: {OVERRIDE})")
        except (ScheduleError, SyncError) as error:
            self.fail(str(error))
        for warning in warnings:
            self.log.warning(warning)
