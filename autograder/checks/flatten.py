"""Checks of the shape modules Identity and Flatten (with start_dim/end_dim).
See ``_activation_cases`` for how a module is graded."""
from __future__ import annotations

from autograder.checks._activation_cases import (
    BASIC, Family, Input, LARGE, check_backward, check_forward,
)
from autograder.registry import check
from course.testing.diagnose import when
from minitorch_ref import nn as ref


# --------------------------------------------------------------------------- Identity, Flatten
def _flatten_forward_signatures(x, kwargs):
    n = len(x)
    return (
        when("batch_flattened", lambda got, e: e.ndim > 1 and got.shape == (x.size,),
             "the batch dimension was flattened too: keep N and merge only the dims "
             "start_dim..end_dim (with the defaults: x.reshape(len(x), -1))."),
        when("dims_ignored", lambda got, e: got.shape == (n, x.size // n),
             "the output has shape (N, -1) whatever start_dim and end_dim were given: merge only "
             "the dims start_dim..end_dim (negative values count from the end)."),
    )


def _flatten_backward_signatures(x, g, kwargs):
    return (when("not_reshaped", lambda got, e: got.shape == g.shape != e.shape,
                 "dL/dx has the output's shape: backward must reshape grad_output back to the "
                 "input's shape (save x.shape in forward)."),)


FLATTEN_INPUTS = (Input((2, 3, 4, 5)), Input((1, 3, 2, 2), seed=1), Input((4, 3, 5), seed=2),
                  Input((5, 3), seed=3))


IDENTITY = Family("Identity", ref.Identity, (({}, BASIC + LARGE),))


FLATTEN = Family("Flatten", ref.Flatten, (({}, FLATTEN_INPUTS),),
                 _flatten_forward_signatures, _flatten_backward_signatures)


FLATTEN_DIMS = Family("Flatten", ref.Flatten, tuple(
    (kwargs, (Input((2, 3, 4, 5), seed=4), Input((1, 2, 3, 2, 2), seed=5)))
    for kwargs in ({"start_dim": 2}, {"start_dim": 0}, {"start_dim": 1, "end_dim": 2},
                   {"start_dim": -3, "end_dim": -2})
), _flatten_forward_signatures, _flatten_backward_signatures)


@check
def identity_forward(Identity):
    """Returns the input unchanged (same values, shape and dtype)."""
    check_forward(IDENTITY, Identity)


@check
def identity_backward(Identity):
    """dL/dx = grad_output."""
    check_backward(IDENTITY, Identity)


@check
def flatten_forward(Flatten):
    """(N, *dims) -> (N, prod(dims)) with the defaults, batch 1 included."""
    check_forward(FLATTEN, Flatten)


@check
def flatten_backward(Flatten):
    """dL/dx = grad_output reshaped back to the input's shape."""
    check_backward(FLATTEN, Flatten)


@check
def flatten_start_end_dim(Flatten):
    """start_dim / end_dim (also negative): forward merges only those dims, backward undoes it."""
    check_forward(FLATTEN_DIMS, Flatten, extra=())
    check_backward(FLATTEN_DIMS, Flatten)
