"""What may go out to students, and when: no unit ships another unit's solutions before
that unit closes.

A release notebook's provided cells hold earlier units' reference solutions (``sync``):
release/04 has unit 03's ``Linear``, which pasted into unit 03 scores 20/20. So a unit
goes out (in the student bundle, or through nbgrader's exchange) only when every unit whose
solution cells it carries has closed in ``schedule.toml``; otherwise the release tools
refuse, naming those units and their deadlines. Read-only given code (unit 3's ``Module``)
is not a solution and does not count. An instructor who knows better can override
(``ignore_schedule``): the release then goes out with a warning naming what it carries.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from autograder.notebooks.schedule import FILE, Schedule, ScheduleError, Window, load, moment
from autograder.notebooks.schedule import now as clock
from autograder.notebooks.sync import providers, solutions_carried
from autograder.notebooks.units import read, units


class HandoutError(RuntimeError):
    """A unit must not go out yet, or there is nothing to hand out: the message says why."""


def carried(root: Path, names: list[str]) -> dict[str, list[str]]:
    """For each of ``names`` (course units), the units whose solutions its release carries."""
    course = units(root)
    by_unit = providers(course)
    found = {}
    for unit in (u for u in course if u.name in names):
        notebooks = sorted(unit.release.parent.glob("*.ipynb"))
        found[unit.name] = sorted({p for nb in notebooks
                                   for p in solutions_carried(read(nb), unit, by_unit)})
    return found


def still_open(carrying: list[str], schedule: Schedule | None, now: datetime) -> list[str]:
    """The units of ``carrying`` that have not closed by ``now`` (unscheduled ones included)."""
    windows = schedule.windows if schedule else {}
    return [u for u in carrying if u not in windows or not windows[u].has_closed(now)]


def refusal(name: str, blockers: list[str], schedule: Schedule | None) -> str:
    """Why ``name`` may not go out: the units whose solutions it carries that are still open."""
    them = "it" if len(blockers) == 1 else "them"
    if schedule is None:
        return (f"refusing to release {name}: it carries the solutions of {_and(blockers)}, and "
                f"there is no {FILE} to say when {'it closes' if them == 'it' else 'they close'}: "
                "write one (docs/instructors.md, \"Plan the term\")")
    windows = [schedule.windows.get(u) for u in blockers]
    parts = [f"{u}, which closes {w.deadline}" if w else f"{u}, which {FILE} does not schedule"
             for u, w in zip(blockers, windows)]
    unscheduled = [u for u, w in zip(blockers, windows) if w is None]
    advice = (f"add {_and(unscheduled)} to {FILE}" if unscheduled else
              f"release {name} after {_latest(windows).closes_as_written}, or make {them} "
              f"close earlier in {FILE}")
    return f"refusing to release {name}: it carries the solutions of {', and of '.join(parts)}; {advice}"


def check(root: Path, names: list[str], now: datetime | None = None,
          ignore_schedule: bool = False) -> list[str]:
    """Refuse (``HandoutError``, every refusal on its own line) if any of ``names`` carries
    solutions of a unit still open at ``now``; a malformed schedule is a ``ScheduleError``.
    With ``ignore_schedule`` nothing is refused: the warnings to print are returned."""
    carrying = carried(root, names)
    if ignore_schedule:
        return [f"releasing {name} with the solutions of {_and(units_)} without "
                "checking the schedule (ignore_schedule)" for name, units_ in carrying.items()
                if units_]
    schedule, at = _schedule(root), now or clock()
    refusals = [refusal(name, blockers, schedule) for name, carries in carrying.items()
                if (blockers := still_open(carries, schedule, at))]
    if refusals:
        raise HandoutError("\n".join(refusals))
    return []


def chosen(root: Path, names: list[str] | None, now: datetime | None = None) -> list[str]:
    """The units to hand out: ``names``, else those the schedule has opened by ``now``."""
    course = [u.name for u in units(root) if u.release.exists()]
    if names:
        unknown = sorted(set(names) - set(course))
        if unknown:
            raise HandoutError(f"no release notebook for {_and(unknown)} (the units are "
                               f"{', '.join(course)})")
        return [u for u in course if u in names]
    schedule = _schedule(root)
    if schedule is None:
        raise HandoutError(f"which units go out? There is no {FILE} at {root} and no units "
                           "were named (--units 01_setup 02_gradients ...)")
    opened = [u for u in schedule.opened(now or clock()) if u in course]
    if not opened:
        first = min(schedule.windows.values(), key=lambda w: w.opens)
        raise HandoutError(f"no unit has opened yet: the first opens {first.opens:%Y-%m-%d %H:%M %Z} "
                           f"({schedule.path})")
    return opened


def as_of(root: Path, text: str | None) -> datetime | None:
    """``text`` (ISO 8601) as the instant to decide at, read in the schedule's time zone when
    it has no offset; None (the clock) when ``text`` is empty."""
    if not text:
        return None
    schedule = _schedule(root)
    return schedule.moment(text) if schedule else moment(text)


def plan_problems(root: Path) -> list[str]:
    """Where ``schedule.toml`` breaks the rule or cannot be read: a unit that opens before a
    unit whose solutions it carries closes, or that carries an unscheduled unit's solutions."""
    try:
        schedule = _schedule(root)
    except ScheduleError as error:
        return [str(error)]
    if schedule is None:
        return []
    problems = []
    for name, carries in carried(root, list(schedule.windows)).items():
        opens = schedule.windows[name].opens
        problems += [f"{FILE}: {name} opens {opens:%Y-%m-%d %H:%M %Z}, before {u}, whose "
                     f"solutions it carries, closes {schedule.windows[u].deadline}"
                     if u in schedule.windows else
                     f"{FILE}: {name} carries the solutions of {u}, which it does not schedule"
                     for u in still_open(carries, schedule, opens)]
    return problems


def timetable(root: Path, now: datetime | None = None) -> list[str]:
    """The term, one line per unit: its window, what it carries, and where it stands now."""
    schedule = _schedule(root)
    at, windows = now or clock(), schedule.windows if schedule else {}
    lines = [f"{'unit':<18} {'opens':<17} {'closes':<31} {'now':<8} carries the solutions of units"]
    for name, carries in carried(root, [u.name for u in units(root)]).items():
        window = windows.get(name)
        state = ("-" if window is None else "closed" if window.has_closed(at) else
                 "open" if window.opens <= at else "not yet")
        opens = f"{window.opens:%Y-%m-%d %H:%M}" if window else "(not scheduled)"
        lines.append(f"{name:<18} {opens:<17} {window.closes_as_written if window else '':<31} "
                     f"{state:<8} {' '.join(u[:2] for u in carries) or '-'}")
    return lines


def _schedule(root: Path) -> Schedule | None:
    return load(root, [u.name for u in units(root)])


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _latest(windows: list[Window | None]) -> Window:
    return max((w for w in windows if w), key=lambda w: w.closes)
