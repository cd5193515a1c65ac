"""``environment.yml`` mirrors ``pyproject.toml``: every requirement, with the same bound."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    every = project["dependencies"] + [req for extra in extras.values() for req in extra]
    return {req.replace(" ", "") for req in every}


def environment_requirements() -> set[str]:
    lines = (line.split("#")[0].strip() for line in (ROOT / "environment.yml").read_text().splitlines())
    return {line.lstrip("- ").replace(" ", "") for line in lines if line.startswith("- ")}


def test_environment_yml_mirrors_pyproject():
    missing = pyproject_requirements() - environment_requirements()
    assert not missing, f"environment.yml lacks {sorted(missing)}"


def test_the_github_workflow_runs_our_ci_entry_point():
    import yaml
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    job = workflow["jobs"]["test"]
    assert "--privileged" in job["container"]["options"]          # bubblewrap needs namespaces
    assert any("bash .ci/run" in step.get("run", "") and "CI=true" in step["run"]
               for step in job["steps"])
