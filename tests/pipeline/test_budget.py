"""Each job's time budget (``autograder.pipeline.job.budget``): from its unit's reference job, for
every unit of the course, and what an instructor sets instead."""
from __future__ import annotations

import json

from autograder.checks.capstone import TRAINING_LIMIT
from autograder.notebooks.units import units
from autograder.pipeline.job import budget
from autograder.pipeline.job.job import Limits, _budget_config
from autograder.pipeline.job.station import SPENT


def test_every_unit_has_a_measured_budget_of_at_least_the_floor():
    for unit in units():
        assert unit.name in budget.REFERENCE_SECONDS, unit.name
        assert budget.seconds(unit.name, Limits()) >= budget.FLOOR_SECONDS
    assert set(budget.REFERENCE_SECONDS) == {unit.name for unit in units()}


def test_a_budget_is_a_multiple_of_the_reference_and_what_the_unit_allows():
    reference = budget.REFERENCE_SECONDS
    assert budget.seconds("09_training", Limits()) == budget.FACTOR * reference["09_training"]
    assert reference["04_activations"] * budget.FACTOR < budget.FLOOR_SECONDS
    assert budget.seconds("04_activations", Limits()) == budget.FLOOR_SECONDS
    assert budget.seconds("11_capstone", Limits()) == (budget.FACTOR * reference["11_capstone"]
                                                       + TRAINING_LIMIT)
    assert budget.seconds("99_new_unit", Limits()) == budget.UNMEASURED_SECONDS
    assert budget.seconds("04_activations", Limits(job_seconds=300)) == 300.0


def test_the_table_is_printed_from_a_graded_course(tmp_path, capsys):
    for unit, seconds in (("01_setup", 4.2), ("02_gradients", 5.0)):
        folder = tmp_path / "autograded" / "ref" / unit
        folder.mkdir(parents=True)
        (folder / ".grading.json").write_text(json.dumps({"seconds": seconds}))
    assert budget.main([str(tmp_path), "ref"]) == 0
    assert capsys.readouterr().out == ("REFERENCE_SECONDS = {\n    '01_setup': 4.2,\n"
                                       "    '02_gradients': 5.0,\n}\n")
    assert budget.main([str(tmp_path), "nobody"]) == 1


def test_with_a_control_group_the_budget_is_cpu_time_under_a_ceiling_on_the_clock():
    plain = budget.seconds("09_training", Limits())
    assert budget.of("09_training", Limits(), cgroup=True) == budget.Budget(
        plain, budget.WALL_FACTOR * plain)
    assert budget.of("09_training", Limits(), cgroup=False) == budget.Budget(None, plain)
    assert budget.of("09_training", Limits(job_seconds=20), cgroup=True) == budget.Budget(20, 20)
    assert budget.Budget(90, 180).describe() == "90 s of CPU time (180 s on the clock)"
    assert budget.Budget(None, 20).describe() == budget.Budget(20, 20).describe() == "20 s"


def test_the_job_tells_its_executor_when_the_budget_ends(tmp_path):
    text = _budget_config(1234.5, budget.Budget(None, 60.0), tmp_path, None, None)
    assert "c.Execute.job_deadline = 1234.5" in text and "c.Execute.job_budget = '60 s'" in text
    assert f"c.Execute.job_spent = {str(tmp_path / SPENT)!r}" in text
    assert "c.Execute.sandbox_record = ''" in text and "c.Execute.job_cgroup = ''" in text
