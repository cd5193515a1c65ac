"""Imports run one way: a module of ``autograder`` imports its own part and the parts below it.

``PARTS`` lists the parts bottom first; the docstrings of ``autograder/pipeline/`` and its
folders say the same in words. Every module's imports are read from its source with ``ast``
(nothing is imported or run), those inside functions too, so a lazy import cannot hide an
upward one. A module that belongs to no part fails as well: a new module is placed on purpose,
not by accident.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = Path(__file__).resolve().parents[2]

# (part, the modules and packages it is made of), bottom first.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("remote", ("autograder.remote",)),
    ("check machinery", ("autograder.sandbox", "autograder.testimony", "autograder.integrity",
                         "autograder.blame", "autograder.registry", "autograder.held_out",
                         "autograder.verdicts")),
    ("checks", ("autograder.checks", "autograder.check")),
    ("cells", ("autograder.cells",)),
    ("notebooks", ("autograder.notebooks",)),
    ("mutation audit", ("autograder.mutants", "autograder.audit", "autograder.audit_cells",
               "autograder.audit_remote")),
    ("pipeline's shared modules", ("autograder.pipeline",)),
    ("pipeline/sandbox", ("autograder.pipeline.sandbox",)),
    ("pipeline/job", ("autograder.pipeline.job",)),
    ("pipeline/executor", ("autograder.pipeline.executor",)),
    ("pipeline/term", ("autograder.pipeline.term",)),
    ("pipeline/ledger", ("autograder.pipeline.ledger",)),
    ("pipeline/demo", ("autograder.pipeline.demo",)),
    ("hub", ("autograder.hub",)),
    ("commands", ("autograder.__main__",)),
)
# ``autograder/__init__.py`` only keeps a slow optional import away; every part may import it.
PACKAGE = "autograder"


class Import(NamedTuple):
    """One import statement's module, where it stands."""

    path: Path
    line: int
    target: str


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted((ROOT / PACKAGE).rglob("*.py"))}


def part_of(module: str) -> int | None:
    """The index in ``PARTS`` of the part that holds ``module`` (its longest matching name)."""
    found = [(len(name), index) for index, (_, names) in enumerate(PARTS) for name in names
             if module == name or module.startswith(name + ".")]
    return max(found)[1] if found else None


def imports(path: Path, known: dict[str, Path]) -> Iterator[Import]:
    """The ``autograder`` modules that ``path`` imports, wherever in the file it imports them."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(above + ([base] if base else []))
            # ``from package import module``: that module; ``from module import name``: its module
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                yield Import(path, node.lineno, target)


def test_every_module_belongs_to_a_part():
    unplaced = [name for name in modules() if name != PACKAGE and part_of(name) is None]
    assert not unplaced, f"modules in no part of PARTS (add each where it belongs): {unplaced}"


def test_no_module_imports_from_a_higher_part():
    known = modules()
    upward = set()
    for name, path in known.items():
        own = part_of(name)
        for found in imports(path, known):
            target = part_of(found.target)
            if own is not None and target is not None and target > own:
                upward.add(f"{found.path.relative_to(ROOT)}:{found.line} ({PARTS[own][0]}) "
                           f"imports {found.target} ({PARTS[target][0]})")
    order = " < ".join(part for part, _ in PARTS)
    assert not upward, (f"imports that run up ({order}):\n" + "\n".join(sorted(upward)))


def test_each_part_of_the_pipeline_says_what_it_owns_and_may_import():
    for init in sorted((ROOT / PACKAGE / "pipeline").glob("*/**/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert doc and "\n\n" not in doc and "import" in doc, \
            f"{init.relative_to(ROOT)}: one paragraph, what the part owns and what it may import"
