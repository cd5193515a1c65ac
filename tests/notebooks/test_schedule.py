"""The term's schedule and the rule it serves: no unit goes out carrying the solutions of a unit
that has not closed. On the real course's notebooks, with schedules written for each test and
a made-up "now" (no kernels, no clock)."""
from __future__ import annotations

import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.notebooks import handout
from autograder.notebooks.lint import lint
from autograder.notebooks.schedule import ScheduleError, load, moment
from autograder.notebooks.units import ROOT, units

NAMES = [u.name for u in units(ROOT)]
TERM = """\
timezone = "Europe/London"
[units]
01_setup         = { opens = 2026-11-02, closes = 2026-11-08 }
02_gradients     = { opens = 2026-11-09, closes = 2026-11-15 }
03_module_linear = { opens = 2026-11-16, closes = 2026-12-01 }
04_activations   = { opens = 2026-12-02, closes = 2026-12-08T09:00:00 }
"""


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """The real course's notebooks (linked, read only) in a folder of the test's own."""
    for folder in ("source", "release"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    return tmp_path


def scheduled(course: Path, text: str = TERM) -> Path:
    (course / "schedule.toml").write_text(textwrap.dedent(text))
    return course


def london(text: str) -> datetime:
    return moment(text, load(ROOT, NAMES).zone)


def test_a_date_opens_at_the_start_of_its_day_and_closes_at_the_end_of_it(course):
    window = load(scheduled(course), NAMES).windows["03_module_linear"]
    assert window.opens == london("2026-11-16T00:00")
    assert not window.has_closed(london("2026-12-01T23:59:59"))
    assert window.has_closed(london("2026-12-02T00:00"))
    assert window.deadline == "on 2026-12-01"


def test_a_date_time_without_an_offset_is_read_in_the_schedules_zone(course):
    window = load(scheduled(course), NAMES).windows["04_activations"]
    assert window.closes == datetime(2026, 12, 8, 9, 0, tzinfo=timezone.utc)   # GMT in December
    assert window.deadline == "at 2026-12-08 09:00 Europe/London"


@pytest.mark.parametrize("text, message", [
    ("[units\n", "not valid TOML"),
    ("term = 1\n[units]\n01_setup = { opens = 2026-11-02, closes = 2026-11-08 }",
     "unknown key(s) term"),
    ('timezone = "Mars/Olympus"\n[units]\n01_setup = { opens = 2026-11-02, closes = 2026-11-08 }',
     "timezone 'Mars/Olympus' is not an IANA time zone"),
    ("[units]\n", "no [units] table"),
    ("[units]\n13_quantum = { opens = 2026-11-02, closes = 2026-11-08 }",
     "no such unit(s) in source/: 13_quantum"),
    ("[units]\n01_setup = { opens = 2026-11-02 }", "01_setup: needs exactly `opens` and `closes` (got opens)"),
    ("[units]\n01_setup = { opens = 2026-11-02, closes = 2026-11-08, due = 2026-11-07 }",
     "needs exactly `opens` and `closes` (got closes, due, opens)"),
    ('[units]\n01_setup = { opens = "2026-11-02", closes = 2026-11-08 }',
     "01_setup: opens = '2026-11-02' is not a TOML date or date-time; write it unquoted"),
    ("[units]\n01_setup = { opens = 2026-11-09, closes = 2026-11-08 }",
     "01_setup: closes (2026-11-08) is not after opens (2026-11-09)"),
])
def test_a_malformed_schedule_is_refused_naming_the_entry(course, text, message):
    with pytest.raises(ScheduleError) as error:
        load(scheduled(course, text), NAMES)
    assert message in str(error.value) and str(course / "schedule.toml") in str(error.value)


def test_no_schedule_file_is_no_schedule(course):
    assert load(course, NAMES) is None


def test_a_release_carries_the_solutions_of_the_units_whose_solution_cells_it_provides():
    carried = handout.carried(ROOT, NAMES)
    assert carried["01_setup"] == carried["02_gradients"] == []
    assert carried["04_activations"] == ["02_gradients", "03_module_linear"]
    assert carried["12_autograd"] == ["02_gradients", "03_module_linear", "04_activations",
                                      "05_losses"]
    assert "02_gradients" not in carried["07_optimizers"]


def test_a_unit_is_refused_while_a_unit_it_carries_is_open_naming_it(course):
    scheduled(course)
    with pytest.raises(handout.HandoutError) as error:
        handout.check(course, ["04_activations"], london("2026-11-30T12:00"))
    assert str(error.value) == (
        "refusing to release 04_activations: it carries the solutions of 03_module_linear, "
        "which closes on 2026-12-01; release 04_activations after 2026-12-01, or make it close "
        "earlier in schedule.toml")


def test_every_open_unit_is_named_with_its_deadline(course):
    scheduled(course)
    with pytest.raises(handout.HandoutError) as error:
        handout.check(course, ["04_activations"], london("2026-11-10"))
    assert ("it carries the solutions of 02_gradients, which closes on 2026-11-15, and of "
            "03_module_linear, which closes on 2026-12-01; release 04_activations after "
            "2026-12-01, or make them close earlier") in str(error.value)


def test_a_unit_goes_out_once_the_units_it_carries_have_closed(course):
    scheduled(course)
    assert handout.check(course, ["04_activations"], london("2026-12-02T00:00")) == []
    assert handout.check(course, ["01_setup", "02_gradients"], london("2026-11-01")) == []


def test_an_unscheduled_unit_counts_as_open(course):
    scheduled(course)
    with pytest.raises(handout.HandoutError) as error:
        handout.check(course, ["06_sequential"], london("2027-06-01"))
    assert str(error.value) == ("refusing to release 06_sequential: it carries the solutions of "
                                "05_losses, which schedule.toml does not schedule; add 05_losses "
                                "to schedule.toml")


def test_without_a_schedule_no_unit_carrying_solutions_goes_out(course):
    assert handout.check(course, ["01_setup"]) == []
    with pytest.raises(handout.HandoutError, match="carries the solutions of 02_gradients and "
                       "03_module_linear, and there is no schedule.toml to say when they close"):
        handout.check(course, ["04_activations"])


def test_the_override_releases_with_a_warning_naming_the_solutions(course):
    scheduled(course)
    assert handout.check(course, ["04_activations"], london("2026-11-30"), ignore_schedule=True) == [
        "releasing 04_activations with the solutions of 02_gradients and 03_module_linear "
        "without checking the schedule (ignore_schedule)"]


def test_the_units_handed_out_are_those_the_schedule_has_opened(course):
    scheduled(course)
    assert handout.chosen(course, None, london("2026-11-16T08:00")) == [
        "01_setup", "02_gradients", "03_module_linear"]
    assert handout.chosen(course, ["04_activations"], london("2026-01-01")) == ["04_activations"]
    with pytest.raises(handout.HandoutError, match="no unit has opened yet: the first opens "
                       "2026-11-02 00:00 GMT"):
        handout.chosen(course, None, london("2026-10-01"))
    with pytest.raises(handout.HandoutError, match="no release notebook for 99_nope"):
        handout.chosen(course, ["99_nope"])


def test_without_a_schedule_the_units_must_be_named(course):
    with pytest.raises(handout.HandoutError, match="no schedule.toml .* and no units were named"):
        handout.chosen(course, None)


def test_a_plan_that_opens_a_unit_before_its_carried_units_close_is_a_problem(course):
    scheduled(course, TERM.replace("04_activations   = { opens = 2026-12-02",
                                   "04_activations   = { opens = 2026-11-30"))
    assert handout.plan_problems(course) == [
        "schedule.toml: 04_activations opens 2026-11-30 00:00 GMT, before 03_module_linear, whose "
        "solutions it carries, closes on 2026-12-01"]
    assert handout.plan_problems(scheduled(course)) == []


def test_the_courses_own_schedule_keeps_every_solution_in_until_its_unit_closes():
    schedule = load(ROOT, NAMES)
    assert sorted(schedule.windows) == NAMES
    assert handout.plan_problems(ROOT) == []
    assert not [p for p in lint(ROOT) if "schedule.toml" in p]
    after = max(w.closes for w in schedule.windows.values()) + timedelta(seconds=1)
    assert handout.check(ROOT, NAMES, after) == []
