"""Settings for the whole test session."""
from __future__ import annotations

import os

import pytest
from threadpoolctl import threadpool_limits


# Kernels and processes the tests start (nbval, nbgrader, the browser test) inherit this.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """The matrices in tests are tiny: on a busy 2-core machine OpenBLAS's threads spin
    against each other and make training tests ten times slower, not faster."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
