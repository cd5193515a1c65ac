"""nbgrader, faster (``autograder.pipeline.job.launch``): its cell-metadata checks give the
verdicts and messages ``jsonschema.validate`` gives, without checking the schema each time."""
from __future__ import annotations

import jsonschema
import pytest
from nbgrader.nbgraderformat import MetadataValidator, common

from autograder.pipeline.job import launch

GOOD = {"grade": True, "grade_id": "linear-tests", "locked": True, "points": 3,
        "schema_version": 3, "solution": False}
BAD = [{**GOOD, "points": "three"}, {k: v for k, v in GOOD.items() if k != "locked"},
       {**GOOD, "grade": "yes"}, {**GOOD, "task": 1}]


def test_nbgrader_checks_metadata_with_schemas_built_once():
    assert isinstance(common.jsonschema, launch.CompiledSchemas)


@pytest.mark.parametrize("metadata", BAD, ids=["points", "locked", "grade", "task"])
def test_wrong_metadata_gets_jsonschemas_own_error(metadata):
    schema = MetadataValidator().schema
    with pytest.raises(jsonschema.ValidationError) as expected:
        jsonschema.validate(metadata, schema)
    with pytest.raises(jsonschema.ValidationError) as found:
        common.jsonschema.validate(metadata, schema)
    assert str(found.value) == str(expected.value)


def test_right_metadata_passes():
    common.jsonschema.validate(GOOD, MetadataValidator().schema)
