"""How a student hides a paste of provided code: each a function from code to code that still
computes the same (``tests/pipeline/test_copies.py``). (Imported as ``disguises``: pytest puts
this folder on ``sys.path``.)
"""
from __future__ import annotations

import ast
from typing import Callable

SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _blocks(tree: ast.AST):
    for node in ast.walk(tree):
        for block in ("body", "orelse"):
            statements = getattr(node, block, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                yield statements


def annotated(code: str) -> str:
    """One type annotation added (the issue's attack: one per cell): to the last plain
    assignment (``x: object = v``; the solution regions end the functions), else the first
    argument without one, else a return."""
    tree = ast.parse(code)
    plain = [(node.lineno, statements, i) for statements in _blocks(tree)
             for i, node in enumerate(statements) if isinstance(node, ast.Assign)
             and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Name, ast.Attribute))]
    if plain:
        _, statements, i = max(plain, key=lambda found: found[0])
        target = statements[i].targets[0]
        statements[i] = ast.AnnAssign(target, ast.Name("object"), statements[i].value,
                                      int(isinstance(target, ast.Name)))
        return ast.unparse(ast.fix_missing_locations(tree))
    bare = [a for a in ast.walk(tree) if isinstance(a, ast.arg) and a.annotation is None
            and a.arg != "self"] + [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
    if isinstance(bare[0], ast.arg):
        bare[0].annotation = ast.Name("object")
    else:
        bare[0].returns = ast.Name("object")
    return ast.unparse(ast.fix_missing_locations(tree))


def renamed(code: str) -> str:
    """Every local variable and argument (``self`` aside) renamed."""
    tree = ast.parse(code)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg) and a.arg != "self"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = f"my_{node.id}"
        elif isinstance(node, ast.arg) and node.arg in names:
            node.arg = f"my_{node.arg}"
    return ast.unparse(tree)


def _touches(node: ast.stmt) -> tuple[set[str], set[str]]:
    """The names a simple statement reads and writes (an attribute counts as written by both)."""
    reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    writes = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return reads, writes | {ast.unparse(n) for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    if not (isinstance(a, SIMPLE) and isinstance(b, SIMPLE)):
        return False
    (reads_a, writes_a), (reads_b, writes_b) = _touches(a), _touches(b)
    return not (writes_a & (reads_b | writes_b) or writes_b & reads_a)


def reordered(code: str) -> str:
    """Every two neighbouring independent statements swapped."""
    tree = ast.parse(code)
    for statements in _blocks(tree):
        i = 0
        while i + 1 < len(statements):
            if _independent(statements[i], statements[i + 1]):
                statements[i], statements[i + 1] = statements[i + 1], statements[i]
                i += 1
            i += 1
    return ast.unparse(tree)


def padded(code: str) -> str:
    """Dead code after every statement of every function: ``unused = 0``."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.body = [new for old in node.body for new in (old, ast.parse("unused = 0").body[0])]
    return ast.unparse(ast.fix_missing_locations(tree))


def everything(code: str) -> str:
    return padded(reordered(renamed(annotated(code))))


DISGUISES: dict[str, Callable[[str], str]] = {
    "annotated": annotated, "renamed": renamed, "reordered": reordered, "padded": padded,
    "everything": everything}
