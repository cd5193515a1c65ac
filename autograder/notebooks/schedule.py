"""The term's schedule: when each unit opens and when it closes (``schedule.toml``).

A unit's release notebook carries earlier units' reference solutions in its provided
cells, so it may go out only once those units are closed (``handout``). The schedule, at
the course root, says when that is::

    timezone = "Europe/London"          # optional, an IANA name; default UTC

    [units]
    01_setup     = { opens = 2026-09-21, closes = 2026-09-27 }
    03_module_linear = { opens = 2026-10-05, closes = 2026-10-12T09:00:00 }

``opens`` is when the unit goes out to students (``make student-bundle`` ships the units
that have opened); ``closes`` is the last moment a submission is accepted, late ones
included: after it, the unit's solutions may go out in later units. A date means the
start of that day for ``opens`` and the end of that day for ``closes``; a date-time
without an offset is read in ``timezone``. Anything else (an unknown key or unit, a
string for a date, a unit that closes before it opens) is a ``ScheduleError`` naming the
file and the entry.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FILE = "schedule.toml"
KEYS = ("opens", "closes")


class ScheduleError(ValueError):
    """``schedule.toml`` cannot be read as a term: the message names the file and the entry."""


@dataclass(frozen=True)
class Window:
    """When one unit is open: from ``opens`` (inclusive) until ``closes`` (exclusive)."""

    opens: datetime
    closes: datetime
    closes_as_written: str     # "2026-12-01" (the end of that day) or a date-time

    def has_closed(self, now: datetime) -> bool:
        return now >= self.closes

    @property
    def deadline(self) -> str:
        """For messages: "on 2026-12-01" (a whole day) or "at 2026-12-01 09:00 Europe/London"."""
        whole_day = ":" not in self.closes_as_written
        return ("on " if whole_day else "at ") + self.closes_as_written


@dataclass(frozen=True)
class Schedule:
    """The course's term: a window per scheduled unit."""

    path: Path
    zone: ZoneInfo
    windows: dict[str, Window]

    def opened(self, now: datetime) -> list[str]:
        """The scheduled units that have opened by ``now``, in course order."""
        return sorted(name for name, window in self.windows.items() if window.opens <= now)

    def moment(self, text: str) -> datetime:
        """``text`` (ISO 8601: a date, or a date-time with or without an offset) as an
        instant; a date is the start of that day, without an offset in the schedule's zone."""
        return moment(text, self.zone)


def moment(text: str, zone: ZoneInfo | timezone = timezone.utc) -> datetime:
    """An ISO 8601 date or date-time as an aware instant (``zone`` when it has no offset)."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ScheduleError(f"{text!r} is not a date (2026-12-01) or a date-time "
                            "(2026-12-01T09:00, 2026-12-01T09:00+01:00)") from None
    return value if value.tzinfo else value.replace(tzinfo=zone)


def now() -> datetime:
    return datetime.now(timezone.utc)


def load(root: Path, known_units: list[str]) -> Schedule | None:
    """The schedule at ``root/schedule.toml`` (None when there is none). ``known_units`` are
    the course's units: a schedule naming another is a typo, refused."""
    path = Path(root) / FILE
    if not path.exists():
        return None
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ScheduleError(f"{path}: not valid TOML: {error}") from None
    unknown = sorted(set(table) - {"timezone", "units"})
    if unknown:
        raise ScheduleError(f"{path}: unknown key(s) {', '.join(unknown)}; a schedule has "
                            "`timezone` and a `[units]` table")
    zone = _zone(path, table.get("timezone", "UTC"))
    units = table.get("units")
    if not isinstance(units, dict) or not units:
        raise ScheduleError(f"{path}: no [units] table: one line per unit, e.g. "
                            "01_setup = { opens = 2026-09-21, closes = 2026-09-27 }")
    strangers = sorted(set(units) - set(known_units))
    if strangers:
        raise ScheduleError(f"{path}: no such unit(s) in source/: {', '.join(strangers)} "
                            f"(the units are {', '.join(known_units)})")
    return Schedule(path, zone, {name: _window(path, name, entry, zone)
                                 for name, entry in sorted(units.items())})


def _zone(path: Path, name: object) -> ZoneInfo:
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"{path}: timezone {name!r} is not an IANA time zone "
                            "(e.g. \"Europe/London\", \"America/New_York\", \"UTC\")") from None


def _window(path: Path, name: str, entry: object, zone: ZoneInfo) -> Window:
    where = f"{path}: {name}"
    if not isinstance(entry, dict) or set(entry) != set(KEYS):
        got = ", ".join(sorted(entry)) if isinstance(entry, dict) else type(entry).__name__
        raise ScheduleError(f"{where}: needs exactly `opens` and `closes` (got {got or 'nothing'}), "
                            f"e.g. {name} = {{ opens = 2026-09-21, closes = 2026-09-27 }}")
    opens = _instant(where, "opens", entry["opens"], zone, end_of_day=False)
    closes = _instant(where, "closes", entry["closes"], zone, end_of_day=True)
    if closes <= opens:
        raise ScheduleError(f"{where}: closes ({entry['closes']}) is not after opens "
                            f"({entry['opens']})")
    return Window(opens, closes, _written(entry["closes"], zone))


def _written(value: date | datetime, zone: ZoneInfo) -> str:
    """How a message shows a deadline: as the schedule wrote it, with the zone it is read in."""
    if not isinstance(value, datetime):
        return value.isoformat()
    return value.isoformat(" ", "minutes") if value.tzinfo else f"{value:%Y-%m-%d %H:%M} {zone.key}"


def _instant(where: str, key: str, value: object, zone: ZoneInfo, end_of_day: bool) -> datetime:
    """A TOML date or date-time as an aware instant."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=zone)
    if isinstance(value, date):
        start = datetime.combine(value, time(0), tzinfo=zone)
        return start + timedelta(days=1) if end_of_day else start
    raise ScheduleError(f"{where}: {key} = {value!r} is not a TOML date or date-time; write it "
                        "unquoted: 2026-09-21 or 2026-09-21T09:00:00")
