"""The documentation site builds without a warning, and names only what exists.

The site (docs/, Sphinx with MyST Markdown) is built into a temporary folder as ``make docs``
builds it: warnings are errors and references nitpicky, so a link to a missing page or heading,
an unresolved reference in the generated API, or a check without a docstring fails. Beside the
build, every page and the README are read for the ``make`` targets, ``python -m`` commands,
repository paths and tests they name (``docs_names``). Self-contained: no fixture of the
session's courses, nothing from the network.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser import require
from docs_names import (
    ROOT, link_problems, make_problems, make_targets, path_problems, python_m_problems,
    unknown_test_problems, known_tests,
)

DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
SPHINX = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q"]


def _missing_tools() -> str | None:
    try:
        import myst_parser  # noqa: F401
        import pydata_sphinx_theme  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as error:
        return f"{error.name} is missing (pip install -e '.[docs]')"
    if shutil.which("dot") is None:
        return "graphviz's dot is missing (apt-get install graphviz)"
    return None


def _build(source: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SPHINX, str(source), str(out)], capture_output=True, text=True,
                          cwd=ROOT, timeout=600, check=False)


def test_the_site_builds_with_no_warning(tmp_path):
    require(_missing_tools(), "documentation build")
    built = _build(DOCS, tmp_path / "html")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    for page in ("index", "students", "instructors", "results", "deploying", "security",
                 "how-it-works", "writing-a-unit", "reference/api", "reference/checks"):
        assert (tmp_path / "html" / f"{page}.html").exists(), page
    checks = (tmp_path / "html" / "reference" / "checks.html").read_text()
    assert "linear_backward_params" in checks and "checks are registered" in checks
    assert "class=\"sig sig-object py\" id=\"minitorch_ref.nn.linear.Linear\"" in \
        (tmp_path / "html" / "reference" / "api.html").read_text()
    assert "<svg" in (tmp_path / "html" / "how-it-works.html").read_text() or \
        list((tmp_path / "html" / "_images").glob("graphviz-*.svg"))


def test_a_broken_link_or_heading_fails_the_build(tmp_path):
    """The build's settings turn a link to a missing page or heading into a failure."""
    require(_missing_tools(), "documentation build")
    source = tmp_path / "docs"
    shutil.copytree(DOCS / "_ext", source / "_ext")
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    (source / "index.md").write_text("# Home\n\n## A heading\n\n[gone](gone.md) and "
                                     "[renamed](#a-renamed-heading) and [kept](#a-heading)\n")
    built = _build(source, tmp_path / "html")
    assert built.returncode != 0
    assert "gone.md" in built.stderr and "a-renamed-heading" in built.stderr, built.stderr
    assert "a-heading'" not in built.stderr


@pytest.mark.parametrize("page", PAGES + [README], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_make_target_named_exists(page):
    assert make_problems(page.name, page.read_text(), make_targets()) == []


@pytest.mark.parametrize("page", PAGES + [README], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_m_command_named_exists(page):
    assert python_m_problems(page.name, page.read_text()) == []


@pytest.mark.parametrize("page", PAGES + [README], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_and_test_named_exists(page):
    text = page.read_text()
    assert path_problems(page.name, text) + unknown_test_problems(page.name, text, known_tests()) == []


def test_the_api_reference_documents_every_public_module():
    """A new module of the reference (a unit's new layer) must be added to the API page."""
    api = (DOCS / "reference" / "api.md").read_text()
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts)
               for path in (ROOT / "minitorch_ref").rglob("*.py")
               if not path.name.startswith("_") and path.name != "demo.py"}
    assert {m for m in modules if f".. automodule:: {m}\n" not in api} == set()


def test_the_readme_fits_on_a_page_and_its_links_reach_the_site():
    text = README.read_text()
    assert len(text.splitlines()) < 150
    assert link_problems(README, text) == []
    linked = {page.relative_to(ROOT).as_posix() for page in PAGES if f"]({page.relative_to(ROOT).as_posix()}" in text}
    assert {"docs/students.md", "docs/instructors.md", "docs/deploying.md", "docs/security.md",
            "docs/how-it-works.md", "docs/writing-a-unit.md"} <= linked


def test_the_checkers_catch_what_does_not_exist(tmp_path):
    """Each checker fails on a made-up page that names what the code lacks."""
    page = ("Run `make no-such-target` and `make docs`; `python -m autograder regrade`;\n"
            "`python -m autograder grade`; `python -m autograder.nowhere`;\n"
            "`tests/pipeline/test_gone.py` and `test_a_test_nobody_wrote`;\n"
            "[gone](docs/gone.md), [a heading](docs/students.md#no-such-heading)\n")
    assert make_problems("p", page, make_targets()) == [
        "p: `make no-such-target`: the Makefile has no target 'no-such-target'"]
    problems = python_m_problems("p", page)
    assert len(problems) == 2 and "no command 'regrade'" in problems[0] \
        and "no module 'autograder.nowhere'" in problems[1]
    assert path_problems("p", page) == ["p: `tests/pipeline/test_gone.py` does not exist"]
    assert unknown_test_problems("p", page, known_tests()) == [
        "p: `test_a_test_nobody_wrote` is not a test under tests/",
        "p: `test_gone.py` is not a test under tests/"]
    readme = tmp_path / "README.md"
    shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("img", "_ext"))
    assert link_problems(readme, page) == [
        "README.md: link to docs/gone.md: no file docs/gone.md",
        "README.md: link to docs/students.md#no-such-heading: docs/students.md has no "
        "heading #no-such-heading"]
