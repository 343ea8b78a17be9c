import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import special

from skrbal._logspace import exp_normalise, log_normalise, logsumexp, sum_leading

_terms = st.one_of(
    st.floats(-1e300, 1e300), st.sampled_from([-np.inf, -745.0, 709.0, 0.0])
)


@settings(max_examples=examples(200), deadline=None)
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
    # scipy's log_softmax takes log(1 + small), so near 0 it is right only to
    # an absolute eps; log_normalise keeps the relative precision there.
    with np.errstate(under="ignore"):
        np.testing.assert_allclose(
            log_normalise(a, axis=axis),
            special.log_softmax(a, axis=axis),
            rtol=1e-12,
            atol=np.finfo(float).eps,
        )
    # The input is left as it was.
    assert np.all(a < -1e4)


def test_log_normalise_keeps_the_precision_of_a_dominant_term():
    """log P of a class near certainty is -log1p(sum of the others), to ulps.

    log(1 + 1e-13) would round the sum to a multiple of the spacing of 1 and
    keep only three digits of it.
    """
    a = np.array([[0.0, -30.0, -40.0], [-31.0, 5.0, -26.0], [2.0, 2.0, -35.0]])
    others = np.exp([[-30.0, -40.0], [-36.0, -31.0], [-37.0, -37.0]]).sum(axis=1)
    peak = [0, 1, 0]
    expected = -np.log1p(others)
    expected[2] = -np.log(2.0) - np.log1p(np.exp(-37.0) / 2)  # a tie at the top
    got = log_normalise(a, axis=1)[np.arange(3), peak]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_allclose(
        log_normalise(a.T, axis=0)[peak, np.arange(3)], expected, rtol=1e-14
    )


@pytest.mark.parametrize(
    "n_terms", [1, 2, 3, 7, 8, 9, 12, 16, 20, 127, 128, 129, 300, 1031]
)
def test_sum_leading_adds_in_numpys_row_order(n_terms):
    # The probit kernels lay their terms along the leading axis; their sums
    # must keep the bits of NumPy's sum along a contiguous row (pairwise
    # blocks of eight), which differ from a term-by-term sum.
    rows = np.random.default_rng(n_terms).normal(size=(500, n_terms)) * 1e3
    rows[:, ::3] *= 1e-9
    assert np.array_equal(sum_leading(np.ascontiguousarray(rows.T)), rows.sum(axis=1))
    assert np.array_equal(
        logsumexp(np.ascontiguousarray(rows.T), axis=0), logsumexp(rows, axis=1)
    )


def test_sum_leading_is_not_a_term_by_term_sum():
    # Guards the test above: for these numbers the plain leading-axis sum
    # differs in the last bits, so equality there is not automatic.
    rows = np.random.default_rng(0).normal(size=(500, 12)) * 1e3
    assert not np.array_equal(
        np.ascontiguousarray(rows.T).sum(axis=0), rows.sum(axis=1)
    )
