"""What the documentation names that the code must have: ``make`` targets, ``python -m``
commands and their subcommands, repository paths, tests, and the README's links into docs/.

Each ``*_problems`` function returns one line per name that does not exist, so a renamed
target, command, file, test or heading fails ``tests/test_docs.py`` with the page that names it.
(Imported as ``docs_names``: pytest puts tests/ on ``sys.path``.)
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(```|~~~)([^\n]*)\n(.*?)^\1", re.S | re.M)
SPAN = re.compile(r"``(.+?)``|`([^`\n]+)`")
MAKE = re.compile(r"(?:^|[\s;&|(])make\s+((?:[A-Z_]+=\S+\s+)*)([a-z.][\w./-]*)", re.M)
PYTHON_M = re.compile(r"python3? -m ([\w.]+)((?:[ \t]+[\w-]+)?)")
REPO_PATH = re.compile(r"^(?:\.ci|autograder|minitorch_ref|course|tests|hub|bench|docs|source|"
                       r"release)/[\w./-]*$")
TEST_NAME = re.compile(r"^test_\w+(?:\.py)?$")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SUBCOMMANDS = ("autograder", "autograder.notebooks")   # modules whose first argument is a command


def spans(markdown: str) -> list[str]:
    """The inline code spans of a page, outside its fenced blocks."""
    return [match.group(1) or match.group(2) for match in SPAN.finditer(FENCE.sub("", markdown))]


def code(markdown: str) -> list[str]:
    """The code a Markdown page holds: its fenced blocks (but ``text`` ones, which show what a
    program printed) and its inline spans."""
    blocks = [match.group(3) for match in FENCE.finditer(markdown) if match.group(2) != "text"]
    return blocks + spans(markdown)


@cache
def make_targets(makefile_dir: Path = ROOT) -> frozenset[str]:
    """Every target the Makefile gives a recipe, read from make's own database (``make -qp``):
    a name only listed in ``.PHONY`` is not one."""
    out = subprocess.run(["make", "-qp", "-C", str(makefile_dir)], capture_output=True,
                         text=True, check=False).stdout
    targets = set()
    for block in out.split("\n\n"):
        match = re.match(r"^([A-Za-z0-9_./-]+):(?!=)", block.lstrip("\n"))
        if match and "#  recipe to execute" in block and "# Not a target" not in block:
            targets.add(match.group(1))
    return frozenset(targets)


def make_problems(page: str, text: str, targets: frozenset[str]) -> list[str]:
    """``make TARGET`` in the page's code where the Makefile has no such target."""
    return [f"{page}: `make {match.group(2)}`: the Makefile has no target {match.group(2)!r}"
            for snippet in code(text) for match in MAKE.finditer(snippet)
            if match.group(2) not in targets]


@cache
def subcommands(module: str) -> frozenset[str]:
    """The commands ``python -m MODULE`` takes, read from its argparse usage (``{a,b,c}``)."""
    usage = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                           text=True, cwd=ROOT, check=False).stdout
    choices = re.search(r"\{([\w,-]+)\}", usage)
    return frozenset(choices.group(1).split(",")) if choices else frozenset()


def python_m_problems(page: str, text: str) -> list[str]:
    """``python -m MODULE [COMMAND]``: the module must import, the command must be one of its."""
    problems = []
    for snippet in code(text):
        for match in PYTHON_M.finditer(snippet):
            module, command = match.group(1), match.group(2).strip()
            if module.isupper() or command.isupper():
                continue        # a placeholder: `python -m MODULE`, `python -m autograder COMMAND`
            if importlib.util.find_spec(module) is None:
                problems.append(f"{page}: `python -m {module}`: no module {module!r}")
            elif module in SUBCOMMANDS and command and not command.startswith("-") \
                    and command not in subcommands(module):
                problems.append(f"{page}: `python -m {module} {command}`: {module} has no "
                                f"command {command!r} (it has {sorted(subcommands(module))})")
    return problems


def path_problems(page: str, text: str, root: Path = ROOT) -> list[str]:
    """Repository paths written in code that neither exist nor are ignored by git (files a
    command makes, such as ``hub/state/logins.csv``)."""
    paths = {token.rstrip(".,:") for snippet in code(text) for token in snippet.split()
             if REPO_PATH.match(token.rstrip(".,:")) and not re.search(r"[<*]|NN", token)}
    missing = sorted(p for p in paths if not (root / p).exists())
    asked = [form for p in missing for form in (p, p.rstrip("/") + "/")]
    ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", *asked],
                             capture_output=True, text=True, check=False).stdout.split()
    return [f"{page}: `{p}` does not exist" for p in missing
            if p not in ignored and p.rstrip("/") + "/" not in ignored]


@cache
def known_tests(tests: Path = ROOT / "tests") -> frozenset[str]:
    """The test files and test functions under ``tests``."""
    names = {path.name for path in tests.rglob("test_*.py")}
    for path in tests.rglob("*.py"):
        names |= set(re.findall(r"^\s*(?:async )?def (test_\w+)", path.read_text(), re.M))
    return frozenset(names)


def unknown_test_problems(page: str, text: str, known: frozenset[str]) -> list[str]:
    """Tests named in the page's code spans (``test_x.py``, ``test_y``, ``dir/test_x.py::test_y``,
    ``test_y[param]``) that no file or function under tests/ has."""
    parts = [re.sub(r"\[.*\]$", "", part).rsplit("/", 1)[-1]
             for span in spans(text) for part in span.split("::")]
    named = {part for part in parts if TEST_NAME.match(part)}
    return [f"{page}: `{name}` is not a test under tests/" for name in sorted(named - known)]


def slug(heading: str) -> str:
    """A heading's anchor, as MyST (``myst_heading_anchors``) and GitHub make it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings (outside code blocks)."""
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", FENCE.sub("", markdown), re.M)}


def link_problems(page: Path, text: str) -> list[str]:
    """Relative links of ``page`` that reach no file, or no heading of a Markdown file."""
    problems = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve()
        if not file.exists():
            problems.append(f"{page.name}: link to {target}: no file {path}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            problems.append(f"{page.name}: link to {target}: {path} has no heading #{anchor}")
    return problems
