import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import special

from skrbal._logspace import exp_normalise, log_normalise, logsumexp

_terms = st.one_of(
    st.floats(-1e300, 1e300), st.sampled_from([-np.inf, -745.0, 709.0, 0.0])
)


@settings(max_examples=200, deadline=None)
@given(
    arrays(float, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=_terms),
    st.sampled_from([0, 1, -1]),
    st.booleans(),
)
def test_logsumexp_matches_scipy(a, axis, keepdims):
    with np.errstate(over="ignore", invalid="ignore"):
        expected = special.logsumexp(a, axis=axis, keepdims=keepdims)
    got = logsumexp(a, axis=axis, keepdims=keepdims)
    assert got.shape == expected.shape
    # Absolute error of a few ulp of 1 near a zero result (scipy uses log1p).
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_impossible_slices_give_minus_inf_and_nan_propagates():
    a = np.array([[-np.inf, -np.inf], [0.0, -np.inf], [np.inf, 0.0], [np.nan, 0.0]])
    np.testing.assert_array_equal(logsumexp(a, axis=1), [-np.inf, 0.0, np.inf, np.nan])
    proba = exp_normalise(a[1:2], axis=1)
    np.testing.assert_array_equal(proba, [[1.0, 0.0]])
    np.testing.assert_array_equal(log_normalise(a[1:2], axis=1), [[0.0, -np.inf]])


@pytest.mark.parametrize("axis", [0, 1])
def test_normalisers_are_distributions_at_extreme_scales(axis):
    rng = np.random.default_rng(0)
    a = rng.normal(scale=1e4, size=(50, 4)) - 1e5  # exp underflows everywhere
    proba = exp_normalise(a, axis=axis)
    np.testing.assert_allclose(proba.sum(axis=axis), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_normalise(a, axis=axis)), proba, atol=1e-15)
    with np.errstate(under="ignore"):
        np.testing.assert_allclose(
            log_normalise(a, axis=axis), special.log_softmax(a, axis=axis), rtol=1e-12
        )
    # The input is left as it was.
    assert np.all(a < -1e4)
