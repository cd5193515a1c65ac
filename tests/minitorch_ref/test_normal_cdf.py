"""GELU's normal CDF: exact (SciPy's ndtr) in float64, a vectorised fit in float32 that stays
within a few float32 roundings of the exact value everywhere."""
import numpy as np
import pytest
from scipy import special

from minitorch_ref import nn
from minitorch_ref.nn._normal import normal_cdf

GRID = np.linspace(-12.0, 12.0, 200_001)


def test_float32_is_within_a_few_roundings_of_the_exact_cdf():
    approx = normal_cdf(GRID.astype(np.float32))
    assert approx.dtype == np.float32
    assert np.max(np.abs(approx - special.ndtr(GRID))) < 3e-7


def test_float32_keeps_the_cdfs_landmarks():
    x = np.array([-np.inf, -40.0, -0.0, 0.0, 40.0, np.inf], dtype=np.float32)
    assert normal_cdf(x).tolist() == [0.0, 0.0, 0.5, 0.5, 1.0, 1.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_get_scipys_ndtr(dtype):
    x = GRID.astype(dtype)
    np.testing.assert_array_equal(normal_cdf(x), special.ndtr(x))


def test_float32_gelu_and_its_gradient_agree_with_float64():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)) * 3
    g = rng.standard_normal((64, 32))
    outputs = {}
    for dtype in (np.float32, np.float64):
        gelu = nn.GELU()
        y = gelu(x.astype(dtype))
        outputs[dtype] = (y, gelu.backward(g.astype(dtype)))
    for low, high in zip(outputs[np.float32], outputs[np.float64]):
        np.testing.assert_allclose(low, high, atol=2e-6, rtol=1e-5)
