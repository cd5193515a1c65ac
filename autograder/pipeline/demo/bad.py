"""Bad submissions: each must get a score and feedback without crashing the run or losing data.

Every case edits unit 3's reference notebook (or its files) the way a student
might break it, and says which grade cells it must lose: ``"none"`` (full marks),
``"hidden"`` (every hidden-test cell, the visible ones still pass), ``"all"`` (what
the untouched release scores) or a set of grade ids.

Decision, ``loop-after-definition``: a solution cell that defines a correct class
and then loops forever is interrupted at the cell time limit and the class it
had defined is graded: full marks, with a note in the feedback naming the cell.
The checks grade what the code does; the note makes the student fix the notebook.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat
from nbformat import NotebookNode

UNIT = "03_module_linear"
PWNED = "/tmp/minitorch-course-pwned"


@dataclass(frozen=True)
class Context:
    source: NotebookNode      # the unit's reference solution
    release: NotebookNode     # the unit's student version
    course: Path              # the course being graded (what an attack aims at)


@dataclass(frozen=True)
class BadCase:
    name: str
    story: str
    build: Callable[[Context, Path], None]   # writes the submission folder
    loses: str | frozenset = "none"
    unit: str = UNIT

    @property
    def student(self) -> str:
        return f"bad-{self.name}"


def cell(nb: NotebookNode, grade_id: str) -> NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _write(nb: NotebookNode, folder: Path, name: str = UNIT) -> None:
    nbformat.write(nb, str(folder / f"{name}.ipynb"))


def edited(**changes: Callable[[str], str]) -> Callable[[Context, Path], None]:
    """A builder: the reference with cells' sources changed (``grade_id=function``)."""
    def build(ctx: Context, folder: Path) -> None:
        nb = copy.deepcopy(ctx.source)
        for grade_id, change in changes.items():
            target = cell(nb, grade_id.replace("_", "-"))
            target.source = change(target.source)
        _write(nb, folder)
    return build


def without(*grade_ids: str) -> Callable[[Context, Path], None]:
    def build(ctx: Context, folder: Path) -> None:
        nb = copy.deepcopy(ctx.source)
        nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids]
        _write(nb, folder)
    return build


def _attack(ctx: Context, folder: Path) -> None:
    course = str(ctx.course)
    attacks = (f'lambda: os.remove("../../../gradebook.db")',
               f'lambda: shutil.rmtree("../../../source")',
               f'lambda: open({course + "/gradebook.db"!r}, "w").write("gone")',
               f'lambda: shutil.rmtree({course + "/source"!r})',
               f'lambda: os.listdir({course + "/submitted"!r})',
               f'lambda: open({PWNED!r}, "w").write("pwned")',
               'lambda: __import__("subprocess").run(["rm", "-rf", "../../../.."])')
    code = ("import os, shutil\nfor attack in (" + ",\n               ".join(attacks) + "):\n"
            "    try:\n        attack()\n    except Exception as error:\n"
            "        print('blocked:', error)\n\n\n")
    edited(linear=lambda s: code + s)(ctx, folder)


def _empty(ctx: Context, folder: Path) -> None:
    (folder / "timestamp.txt").write_text("2026-01-05 09:00:00.000000 UTC")


def _extra(ctx: Context, folder: Path) -> None:
    _write(ctx.source, folder)
    _write(ctx.release, folder, f"{UNIT}-Copy1")
    _write(nbformat.v4.new_notebook(), folder, "scratch")


def _renamed(ctx: Context, folder: Path) -> None:
    _write(ctx.source, folder, f"{UNIT} (1)")


def _corrupted(ctx: Context, folder: Path) -> None:
    text = nbformat.writes(ctx.source)
    (folder / f"{UNIT}.ipynb").write_text(text[: len(text) // 2], encoding="utf-8")


def _v3(ctx: Context, folder: Path) -> None:
    (folder / f"{UNIT}.ipynb").write_text(
        json.dumps(nbformat.convert(copy.deepcopy(ctx.source), 3)), encoding="utf-8")


# A broken Linear cell costs the Linear checks; the initialisers' cells still run.
LINEAR_HIDDEN = frozenset({"hidden-linear-forward", "hidden-linear-backward-input",
                           "hidden-linear-backward-params", "hidden-linear-accumulates",
                           "hidden-linear-init"})
HIDDEN_INIT_LOOP = ("            self.bias = Parameter(rng.uniform(-bound, bound, size=out_features)"
                    ".astype(dtype))\n")
CASES = (
    BadCase("syntax-error", "a missing colon in the Linear cell",
            edited(linear=lambda s: s.replace("def extra_repr(self) -> str:", "def extra_repr(self) -> str")),
            LINEAR_HIDDEN),
    BadCase("import-error", "the Linear cell imports a module that does not exist",
            edited(linear=lambda s: "from my_helpers import fast_matmul\n\n" + s), LINEAR_HIDDEN),
    BadCase("loop-after-definition", "a correct Linear, then `while True: pass` in the same cell",
            edited(linear=lambda s: s + "\n\n\nwhile True:   # left over from debugging\n    pass\n")),
    BadCase("loop-in-method", "Linear.__init__ never returns when bias=False",
            edited(linear=lambda s: s.replace(HIDDEN_INIT_LOOP, HIDDEN_INIT_LOOP +
                   "        while self.bias is None:   # bias=False: waits forever\n            pass\n")),
            frozenset({"hidden-linear-forward"})),
    BadCase("deleted-test-cells", "a hidden and a visible test cell deleted",
            without("hidden-linear-forward", "xavier-tests")),
    BadCase("edited-test-cells", "a wrong xavier_normal_ whose visible and hidden tests were edited to pass",
            edited(init=lambda s: s.replace("gain * np.sqrt(2.0 / (fan_in + fan_out))",
                                            "gain * np.sqrt(1.0 / (fan_in + fan_out))"),
                   xavier_tests=lambda s: "print('xavier_normal_ passes the tests.')\n",
                   hidden_linear_init=lambda s: "assert True\n"),
            frozenset({"hidden-xavier"})),
    BadCase("deleted-read-only-cells", "the imports and the Module base class deleted",
            without("setup", "module-base")),
    BadCase("edited-read-only-cells", "Parameter.grad starts at 1 and rel_error is replaced",
            edited(module_base=lambda s: s.replace("self.grad = np.zeros_like(data)",
                                                   "self.grad = np.ones_like(data)"),
                   provided_gradients=lambda s: s + "\n\ndef rel_error(a, b):\n    return 0.0\n")),
    BadCase("imports-reference", "Linear taken from minitorch_ref",
            edited(linear=lambda s: "from minitorch_ref.nn import Linear\n"), "hidden"),
    # Every check runs in the grader, where the patch changes nothing: the Linear checks fail
    # where the code is wrong, and the (right) initialisers keep their points.
    BadCase("monkeypatch", "a wrong Linear, with np.allclose and assert helpers patched to pass",
            edited(linear=lambda s: s.replace("self.input.T @ grad_output", "self.input.T @ grad_output / 2")
                   + "\n\nnp.allclose = lambda *args, **kwargs: True\n"
                   "np.testing.assert_allclose = lambda *args, **kwargs: None\n"),
            frozenset({"hidden-linear-backward-params"})),
    BadCase("prints-50mb", "50 MB on one line, then 200,000 short lines",
            edited(linear=lambda s: s + "\n\nprint('x' * 50_000_000)\nfor _ in range(200_000):\n"
                   "    print('spam')\n")),
    # np.empty asks for the address space without writing it: the kernel's limit refuses it at
    # once (a bytearray of zeros wrote 3 GiB first, 20 s on a loaded machine: the cell's limit)
    BadCase("memory-hog", "asks for 64 GiB, 1 GiB at a time, after defining Linear",
            edited(linear=lambda s: s + "\n\nhog = [np.empty(1 << 30, dtype=np.uint8) for _ in range(64)]\n")),
    BadCase("writes-outside", "deletes the gradebook and source/, writes to /tmp, runs rm -rf", _attack),
    BadCase("empty-folder", "a submission folder without a notebook", _empty, "all"),
    BadCase("extra-notebooks", "the notebook plus a copy of the release and an empty notebook", _extra),
    BadCase("renamed-notebook", "the notebook saved as '03_module_linear (1).ipynb'", _renamed),
    BadCase("corrupted-json", "the notebook file cut in half", _corrupted, "all"),
    BadCase("nbformat-v3", "the notebook saved by nbformat 3", _v3),
)
