"""Settings for the whole test session."""
from __future__ import annotations

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """The matrices in tests are tiny: on a busy 2-core machine OpenBLAS's threads spin
    against each other and make training tests ten times slower, not faster."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
