"""Checks of the autograd engine of the bonus unit: reused nodes, a second backward pass,
a deep graph (no recursion limit). See ``_tensor_cases`` for how a case is graded."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from autograder.checks._calls import chain_of
from autograder.checks._engine_mistakes import stale_second_pass
from autograder.checks._tensor_cases import (
    Case, Expected, same, check_case, compute, expect_grad, make_leaf, randn, run_backward,
)
from autograder import verdicts
from autograder.checks.autograd_ops import tensor_arithmetic
from autograder.registry import check
from autograder.sandbox import call
from course.testing._trusted import asarray
from course.testing.compare import expect_close
from course.testing.diagnose import Signature, scaled, when
from course.testing.failure import CheckFailure, expect


def _reused() -> list[Case]:
    def ladder(x):
        for _ in range(6):
            x = x * 0.5 + x.tanh()
        return x
    return [
        Case("y = x * x", lambda x: x * x, {"x": randn(3, seed=40)}),
        Case("y = h * h + h, with h = x * 3", lambda x: (lambda h: h * h + h)(x * 3),
             {"x": randn(2, 3, seed=41)}),
        Case("y = (x * 2).tanh() * x + x", lambda x: (x * 2).tanh() * x + x,
             {"x": randn(2, 3, seed=42)}),
        Case("z = (a * b).tanh() * a - b.sigmoid() * b",
             lambda a, b: (a * b).tanh() * a - b.sigmoid() * b,
             {"a": randn(2, 3, seed=43), "b": randn(2, 3, seed=44)}),
        Case("y = h, after h = h * 0.5 + h.tanh() six times from h = x", ladder,
             {"x": randn(4, seed=45)}),
    ]


@check
def tensor_reused_nodes(Tensor):
    """Tensors used several times (x * x, diamonds, a ladder of diamonds): every use adds its
    gradient, and each node passes its gradient on once, in reverse topological order (judged
    with the student's own rules of the operations when those are wrong: their cells')."""
    for seed, case in enumerate(_reused()):
        check_case(Tensor, case, seed, own="engine")


def _twice() -> list[Case]:
    return [
        Case("c = (a * 2) * 3", lambda a: (a * 2) * 3, {"a": np.array(2.0)}),
        Case("y = ((x * 3).tanh() * w).sum()", lambda x, w: ((x * 3).tanh() * w).sum(),
             {"x": randn(2, seed=50), "w": randn(2, seed=55)}),
        Case("y = (x @ W + b).tanh() @ V", lambda x, W, b, V: (x @ W + b).tanh() @ V,
             {"x": randn(3, 2, seed=51), "W": randn(2, 4, seed=52), "b": randn(4, seed=53),
              "V": randn(4, 1, seed=54)}),
        Case("c = a + b", lambda a, b: a + b, {"a": randn(2, seed=56), "b": randn(2, seed=57)}),
    ]


def twice_signatures(name: str, once: Expected) -> tuple[Signature, ...]:
    stale = stale_second_pass(once.root, once.G, once.leaves[name])
    return (
        when("assigned", lambda g, _: same(g, once.grads[name]),
             "after two backward() calls the gradient equals one call's: the leaves' .grad "
             "must accumulate (+=) over backward calls until you reset them, as in PyTorch. "
             "Do not overwrite (or zero) the leaves' gradients inside backward()."),
        when("stale", lambda g, _: stale is not None and same(g, stale),
             "the second backward() sent again the gradients that the first one left in the "
             "intermediate tensors (micrograd's bug): start every backward pass with fresh "
             "(zero) gradients for the intermediate tensors, or keep them in a dict local to "
             "backward(); only the leaves accumulate."),
        when("shared_leaf", lambda g, e: same(g, 1.5 * e),
             "after two backward() calls the gradient is 3 times one call's, not 2: a leaf "
             "stored the array it received without a copy (leaf.grad = g) and then added into "
             "it in place. Add passes the same array to both inputs, so both leaves' .grad "
             "changed together. Store a copy the first time: leaf.grad = np.array(g)."),
    )


@check
def tensor_backward_twice(Tensor):
    """Calling ``backward`` twice on the same graph adds the same gradients once more, exactly as
    PyTorch does (micrograd's engine, which keeps intermediate gradients, adds too much): twice
    the student's own one pass when their operations' rules are wrong (their cells')."""
    for seed, case in enumerate(_twice()):
        check_case(Tensor, case, seed, own="engine")
        once, twice = case.expected(seed), case.expected(seed)
        twice.root.backward(twice.upstream)  # the reference's second pass
        doubled = replace(once, grads={n: t.grad for n, t in twice.leaves.items()})
        leaves, out = compute(Tensor, case)
        for _ in range(2):
            run_backward(case, out, once)
        own = None
        for name, leaf in leaves.items():
            try:
                expect_grad(Tensor, case, name, leaf, doubled, "after two backward() calls",
                            lambda n=name: twice_signatures(n, once), fd=False)
            except CheckFailure:
                own = own if own is not None else _one_pass(Tensor, case, once)
                if not (own and same(getattr(leaf, "grad", None), 2 * own[name])):
                    raise


def _one_pass(Tensor: type, case: Case, once: Expected) -> dict[str, np.ndarray]:
    """The leaves' gradients after one backward pass through a fresh graph of the student's
    (rules and engine as they are: a second pass must add as much again); empty when they
    are all zero, which shows nothing."""
    leaves, out = compute(Tensor, case)
    run_backward(case, out, once)
    grads = {name: asarray(getattr(leaf, "grad", None), dtype=float) for name, leaf in leaves.items()}
    return grads if any(bool((g != 0).any()) for g in grads.values()) else {}


DEPTH, WIDTH, FACTOR = 2500, 1000, 1.0005


RECURSION_HINT = (
    f"\n  Likely mistake: the topological order (or the backward pass) is built by recursion, "
    f"one Python call per node, and a chain of {DEPTH} operations goes deeper than Python's "
    "recursion limit (1000). Use a loop with an explicit stack (a list you append to and pop "
    "from) instead of recursion; do not raise the limit."
)


SHARED_IN_PLACE = when(
    "shared_in_place", lambda got, e: bool(np.all(np.abs(got) > 100 * np.abs(e))),
    "x.grad is far too large: it doubles with every use of x. The gradients were added in "
    "place (+=) into an array another node also holds (Add returns the same G for both of "
    "its inputs), so each += changed both. Add with grads[p] = grads[p] + g instead.")


def _deep_backward(what: str, out) -> None:
    try:
        with np.errstate(all="ignore"):  # a wrong rule overflows; the comparison says so
            call(what, out.backward)
    except CheckFailure as failure:
        if "RecursionError" in str(failure):
            raise CheckFailure(str(failure) + RECURSION_HINT) from None
        raise


LADDER = 8   # diamonds: 2 ** 8 paths from the top to the leaf


def _expect_listed_once(Tensor, topological_order) -> None:
    """topological_order lists each tensor of a ladder of diamonds once, not once per path."""
    y = make_leaf(Tensor, "x", np.array([0.5, -1.0, 2.0]))
    for _ in range(LADDER):
        y = call(f"y = y * 0.5 + y.tanh() ({LADDER} times)", lambda t: t * 0.5 + t.tanh(), y)
    order = call(f"topological_order(y) for {LADDER} stacked diamonds", topological_order, y)
    distinct = len({id(t) for t in order})
    expect(len(order) == distinct, f"topological_order(y) for y = y * 0.5 + y.tanh() applied "
           f"{LADDER} times listed {len(order)} tensors, only {distinct} of them distinct. List "
           "each tensor once: keep a set of visited tensors, or the list (and the backward "
           f"pass) grows with the number of paths, 2 ** {LADDER} here.")


@check
def tensor_deep_graph(Tensor, topological_order):
    """A chain of 2,500 operations (no RecursionError), a tensor used 1,000 times and a ladder
    of diamonds (each node listed and visited once): the engine is iterative and linear in
    the size of the graph (the values at the end of a chain are judged unless the arithmetic
    cell's check has found a rule wrong: a wrong rule is that cell's, ``verdicts``)."""
    _expect_listed_once(Tensor, topological_order)
    x = make_leaf(Tensor, "x", np.array(1.0))
    y = chain_of(f"y = y * {FACTOR} (a chain of {DEPTH})", "mul", x, FACTOR, DEPTH)
    _deep_backward(f"y.backward() at the end of a chain of {DEPTH} multiplications", y)
    rules_right = not verdicts.failed(Tensor, tensor_arithmetic.__name__)
    if rules_right:
        expect_close(f"x.grad after a chain of {DEPTH} multiplications y = y * {FACTOR}",
                     getattr(x, "grad", None), np.array(FACTOR**DEPTH), "x a scalar")
    x = make_leaf(Tensor, "x", np.array(1.5))
    total = chain_of(f"total = total + x ({WIDTH} times)", "add", x, x, WIDTH)
    _deep_backward(f"total.backward() for total = x + x + ... ({WIDTH + 1} terms)", total)
    if rules_right:
        expect_close(f"x.grad for total = x + x + ... + x ({WIDTH + 1} terms)",
                     getattr(x, "grad", None), np.array(WIDTH + 1.0), "x a scalar",
                     (scaled(1 / (WIDTH + 1), "only one use of x counted: add the gradient of "
                                              "every use (+=)."), SHARED_IN_PLACE))
