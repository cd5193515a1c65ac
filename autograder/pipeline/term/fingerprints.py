"""Fingerprints of a cell's code: copydetect's lexing and k-gram hashes, on Python's normal form.

A cell's code is parsed (after IPython's transformation of magics; a cell magic's body too),
stripped of what does not change what it computes and costs nothing to add or remove
(docstrings and other bare strings, type annotations: ``x: T = v`` becomes ``x = v``), and
printed back by ``ast.unparse``, one statement a line (comments, layout, quotes and
parentheses gone). copydetect (the k-gram fingerprints of Schleimer, Wilkerson and Aiken's
winnowing, as MOSS) then lexes it with Pygments, writing every name ``V``, function names
``F``, class names ``O`` and strings ``S`` (so renaming hides nothing), and hashes every
``K``-character run of each statement, all of them (copydetect's default window: the cells
are small). A k-gram never spans two statements, so neither reordering statements nor dead
code put between them breaks one; a statement shorter than ``K`` is one k-gram. Two prints
are compared by ``containment``: the share of one's lexed code that the other's k-grams
cover, which added code cannot lower.

Python's ``hash`` is salted per process: prints are compared within the process that made
them, never stored.
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

import numpy as np
from copydetect.utils import filter_code, hashed_kgrams

K = 20          # characters of lexed code (about one short statement: ``self.V=V.V(V,V)``)
SEPARATOR = "$"   # never outside a string in ast.unparse's output; Pygments keeps it
BLOCKS = ("body", "orelse", "finalbody")


@functools.cache
def _ipython() -> object:
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager()


def parse(text: str) -> list[ast.AST]:
    """The syntax trees of a cell's code as IPython would run it ([] if it is not Python)."""
    texts = [text]
    if text.lstrip().startswith("%%"):          # a cell magic's body is code too
        texts.append(text.lstrip().partition("\n")[2])
    trees = []
    for code in texts:
        try:
            trees.append(ast.parse(_ipython().transform_cell(code)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return trees


def is_bare_string(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


class _Plain(ast.NodeTransformer):
    """Docstrings, bare strings and type annotations removed (a tree edited in place)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for block in BLOCKS:
            statements = getattr(node, block, None)
            if isinstance(statements, list) and statements:
                kept = [s for s in statements if not is_bare_string(s)]
                setattr(node, block, kept or ([ast.Pass()] if block == "body" else []))
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.returns = None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[self.visit(node.target)],
                                            value=self.visit(node.value)), node)


def normal_code(trees: list[ast.AST]) -> str:
    """The code of ``trees`` in normal form (the trees are edited)."""
    try:
        return "\n".join(ast.unparse(_Plain().visit(tree)) for tree in trees)
    except (RecursionError, ValueError):   # nested too deep to print: nothing this can read
        return ""


def lexed_lines(code: str) -> list[str]:
    """Each statement of normal-form code (one a line) as copydetect lexes it: names ``V``,
    functions ``F``, classes ``O``, strings ``S``, no spaces."""
    marked = "\n".join(SEPARATOR + line for line in code.splitlines())
    return [line for line in filter_code(marked, "cell.py", "python")[0].split(SEPARATOR) if line]


@dataclass(frozen=True)
class Print:
    """The fingerprints of one piece of code: each k-gram's hash and the spans of the lexed
    code (``length`` characters, its statements end to end) where it stands."""

    grams: dict[int, list[tuple[int, int]]]
    length: int

    @classmethod
    def of(cls, code: str) -> Print:
        grams: dict[int, list[tuple[int, int]]] = {}
        start = 0
        for line in lexed_lines(code) if code.strip() else []:
            width = min(K, len(line))      # a statement shorter than K is one k-gram
            for offset, value in enumerate(hashed_kgrams(line, width)):
                grams.setdefault(int(value), []).append((start + offset, start + offset + width))
            start += len(line)
        return cls(grams, start)

    @property
    def hashes(self) -> set[int]:
        return set(self.grams)

    @property
    def size(self) -> int:
        """The characters of lexed code under some k-gram (copydetect's token coverage)."""
        return self.covered(self.grams.keys())

    def covered(self, hashes) -> int:
        """How many characters of the lexed code the k-grams ``hashes`` cover."""
        mask = np.zeros(self.length, dtype=bool)
        for value in self.grams.keys() & hashes:
            for begin, end in self.grams[value]:
                mask[begin:end] = True
        return int(mask.sum())

    def without(self, given: set[int]) -> Print:
        """This print less the k-grams in ``given`` (what the release notebook holds)."""
        return Print({h: s for h, s in self.grams.items() if h not in given}, self.length)


def containment(parts: list[Print], other: set[int]) -> float:
    """The share of the code of ``parts`` that the k-grams ``other`` cover (0 if it has none)."""
    size = sum(p.size for p in parts)
    return sum(p.covered(other) for p in parts) / size if size else 0.0
