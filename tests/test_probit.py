"""Multinomial-probit expectations by adaptive Gauss-Hermite quadrature."""

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.integrate import quad
from scipy.special import log_ndtr
from scipy.stats import norm

from skrbal._logspace import log_normalise, logsumexp
from skrbal.rvm._probit import (
    gauss_hermite_normal,
    log_expected_cdf_product,
    multinomial_probit_log_proba,
    truncated_probit_means,
)


def _expect(integrand):
    """E_u[integrand(u)] for u ~ N(0, 1) by adaptive scipy quadrature."""
    value, _ = quad(
        lambda u: integrand(u) * norm.pdf(u),
        -np.inf,
        np.inf,
        epsabs=0.0,
        epsrel=1e-12,
        limit=200,
    )
    return value


def _probit_proba_by_quad(scores):
    n_classes = len(scores)
    return np.array(
        [
            _expect(
                lambda u, k=k: np.prod(
                    [
                        norm.cdf(u + scores[k] - scores[j])
                        for j in range(n_classes)
                        if j != k
                    ]
                )
            )
            for k in range(n_classes)
        ]
    )


def _estep_by_quad(scores, observed):
    """Posterior means of the truncated auxiliary scores by scipy.quad."""
    others = [k for k in range(len(scores)) if k != observed]
    offsets = {k: scores[observed] - scores[k] for k in others}

    def cdf_product(u, skip=None):
        return np.prod([norm.cdf(u + offsets[k]) for k in others if k != skip])

    denominator = _expect(cdf_product)
    means = np.array(scores, dtype=float)
    for k in others:
        numerator = _expect(lambda u, k=k: norm.pdf(u + offsets[k]) * cdf_product(u, k))
        means[k] -= numerator / denominator
        means[observed] += numerator / denominator
    return means


@pytest.mark.parametrize("n_nodes", [5, 12, 40])
def test_gauss_hermite_rule_has_standard_normal_moments(n_nodes):
    nodes, log_weights = gauss_hermite_normal(n_nodes)
    weights = np.exp(log_weights)
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-13)
    np.testing.assert_allclose(weights @ nodes, 0.0, atol=1e-13)
    np.testing.assert_allclose(weights @ nodes**2, 1.0, rtol=1e-12)
    np.testing.assert_allclose(weights @ nodes**4, 3.0, rtol=1e-12)


@pytest.mark.parametrize(("n_nodes", "atol"), [(8, 1e-6), (12, 1e-7), (20, 1e-9)])
def test_expected_cdf_is_cdf_of_scaled_offset(n_nodes, atol):
    # E[Phi(u + a)] = P(v < u + a) with v, u iid N(0, 1) = Phi(a / sqrt(2)),
    # also where Phi(a / sqrt(2)) underflows in linear scale.
    a = np.array([-60.0, -38.0, -25.0, -8.0, -2.0, 0.0, 1.5, 6.0, 40.0])
    got = log_expected_cdf_product(a[:, None], n_nodes)
    np.testing.assert_allclose(got, log_ndtr(a / np.sqrt(2.0)), rtol=1e-6, atol=atol)


def test_plain_gauss_hermite_matches_the_identity_for_moderate_offsets():
    # The non-adaptive rule, as written in the brief: u = sqrt(2) x and the
    # weights divided by sqrt(pi).
    nodes, log_weights = gauss_hermite_normal(40)
    for a in (-3.0, -1.0, 0.0, 0.7, 2.5):
        got = np.exp(log_weights) @ norm.cdf(nodes + a)
        np.testing.assert_allclose(got, norm.cdf(a / np.sqrt(2.0)), rtol=1e-10)


@pytest.mark.parametrize(
    "offsets",
    [[0.3, -1.1], [4.0, -6.0], [-5.0, -7.5], [2.0, 0.5, -1.0], [-9.0, 3.0, 8.0]],
)
def test_expected_cdf_product_matches_scipy_quad(offsets):
    offsets = np.asarray(offsets)
    expected = _expect(lambda u: np.prod(norm.cdf(u + offsets)))
    got = np.exp(log_expected_cdf_product(offsets[None, :], 20))[0]
    np.testing.assert_allclose(got, expected, rtol=1e-9)


@pytest.mark.parametrize(
    "scores",
    [
        [0.2, -0.4, 1.1],
        [3.0, -2.0, 0.5],
        [-6.0, 4.0, 1.0],
        [0.0, 0.3, -0.2, 1.5],
        [5.0, -3.0, 2.0, -8.0],
    ],
)
def test_probit_likelihood_matches_scipy_quad_for_three_and_four_classes(scores):
    expected = _probit_proba_by_quad(np.asarray(scores))
    got = np.exp(multinomial_probit_log_proba([scores], n_nodes=20))[0]
    # Quadrature rows sum to one only approximately; the returned rows are
    # renormalised, the reference is not, hence the relative tolerance.
    np.testing.assert_allclose(got, expected / expected.sum(), rtol=1e-7, atol=1e-14)
    np.testing.assert_allclose(expected.sum(), 1.0, rtol=1e-8)


def test_two_class_likelihood_is_the_binary_probit():
    scores = np.array([[0.0, 0.0], [1.0, -2.0], [-30.0, 40.0]])
    log_proba = multinomial_probit_log_proba(scores)
    diff = (scores[:, 1] - scores[:, 0]) / np.sqrt(2.0)
    np.testing.assert_allclose(log_proba[:, 1], log_ndtr(diff), atol=1e-12)
    np.testing.assert_allclose(log_proba[:, 0], log_ndtr(-diff), atol=1e-12)


def test_log_proba_stays_finite_and_ordered_far_in_the_tails():
    scores = np.array([[80.0, 0.0, -80.0, -160.0]])
    log_proba = multinomial_probit_log_proba(scores)
    assert np.all(np.isfinite(log_proba))
    assert np.all(np.diff(log_proba[0]) < 0)
    # P(y = 1) is dominated by f_1 beating f_0: about Phi(-80 / sqrt(2)).
    np.testing.assert_allclose(
        log_proba[0, 1], log_ndtr(-80.0 / np.sqrt(2.0)), rtol=1e-3
    )


@settings(max_examples=examples(40), deadline=None)
@given(
    arrays(
        np.float64,
        shape=st.tuples(st.integers(1, 6), st.integers(2, 5)),
        elements=st.floats(-30, 30),
    )
)
def test_probabilities_are_distributions_ordered_like_the_scores(scores):
    proba = np.exp(multinomial_probit_log_proba(scores))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(proba >= 0)
    # A larger score never gets a smaller probability (up to quadrature error).
    order = np.argsort(scores, axis=1, kind="stable")
    sorted_proba = np.take_along_axis(proba, order, axis=1)
    assert np.all(np.diff(sorted_proba, axis=1) >= -1e-9)


@pytest.mark.parametrize(
    ("scores", "observed"),
    [
        ([0.4, -0.3], 0),
        ([-5.0, 2.0], 0),
        ([0.2, -0.4, 1.1], 0),
        ([3.0, -2.0, 0.5], 2),
        ([-6.0, 4.0, 1.0], 0),
        ([0.0, 0.3, -0.2, 1.5], 1),
        ([5.0, -3.0, 2.0, -8.0], 3),
    ],
)
def test_estep_means_match_scipy_quad(scores, observed):
    expected = _estep_by_quad(np.asarray(scores, dtype=float), observed)
    got = truncated_probit_means([scores], [observed], n_nodes=20)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)


def test_estep_puts_the_observed_class_on_top_on_average():
    rng = np.random.default_rng(0)
    scores = rng.normal(scale=3.0, size=(200, 4))
    y = rng.integers(0, 4, size=200)
    means = truncated_probit_means(scores, y, n_nodes=12)
    observed = means[np.arange(200), y]
    others = np.where(np.eye(4, dtype=bool)[y], -np.inf, means)
    assert np.all(observed > others.max(axis=1))
    # The shifts of the other classes are what the observed one gains.
    np.testing.assert_allclose(means.sum(axis=1), scores.sum(axis=1), atol=1e-9)


def test_estep_has_no_zero_over_zero_for_a_hopelessly_wrong_score():
    # Observed class 0 lies 200 below class 1: both expectations underflow in
    # linear scale. In the limit the shift of class 1 is 200 / 2 = 100.
    means = truncated_probit_means([[-200.0, 0.0, -500.0]], [0])
    assert np.all(np.isfinite(means))
    np.testing.assert_allclose(means[0, 1], -100.0, rtol=1e-3)
    np.testing.assert_allclose(means[0, 0], -100.0, rtol=1e-3)


@pytest.mark.parametrize(
    ("scores", "y", "match"),
    [
        ([0.0, 1.0], [0], "n_classes >= 2"),
        ([[0.0], [1.0]], [0, 0], "n_classes >= 2"),
        ([[0.0, 1.0]], [2], "index"),
        ([[0.0, 1.0]], [0.5], "integer"),
        ([[0.0, 1.0]], [0, 1], "integer class indices"),
    ],
)
def test_estep_rejects_bad_input(scores, y, match):
    with pytest.raises(ValueError, match=match):
        truncated_probit_means(scores, y)


def test_likelihood_rejects_a_single_class():
    with pytest.raises(ValueError, match="n_classes >= 2"):
        multinomial_probit_log_proba([[1.0], [2.0]])


def _row_layout_reference(scores, y, n_nodes):
    """The quadrature laid out row by row, (..., terms, nodes), summed along
    the last axes: the straightforward form of the kernels, which lay the
    terms and nodes along leading axes for speed."""
    from scipy.special import ndtr

    def log_cdf(z):
        with np.errstate(divide="ignore"):
            out = np.log(ndtr(z))
        tail = z < -30.0
        out[tail] = log_ndtr(z[tail])
        return out

    def log_pdf(z):
        return -0.5 * z * z - 0.5 * np.log(2.0 * np.pi)

    def rule(offsets):
        u = np.zeros(offsets.shape[:-1])
        curvature = np.ones_like(u)
        done = np.zeros(u.shape, dtype=bool)
        for _ in range(50):
            z = u[..., None] + offsets
            lam = np.exp(log_pdf(z) - log_cdf(z))
            grad = lam.sum(axis=-1) - u
            curv = np.clip(lam * (z + lam), 0.0, 1.0).sum(axis=-1) + 1.0
            step = np.where(done, 0.0, grad / curv)
            curvature = np.where(done, curvature, curv)
            u = u + step
            done |= np.abs(step) < 1e-3
            if done.all():
                break
        x, w = np.polynomial.hermite.hermgauss(n_nodes)
        scale = 1.0 / np.sqrt(curvature)
        nodes = u[..., None] + np.sqrt(2.0) * scale[..., None] * x
        log_weights = (
            np.log(w)
            + x * x
            - 0.5 * nodes * nodes
            + np.log(scale)[..., None]
            - 0.5 * np.log(np.pi)
        )
        return nodes, log_weights

    n, k = scores.shape
    diff = scores[:, :, None] - scores[:, None, :]
    offsets = diff[:, ~np.eye(k, dtype=bool)].reshape(n, k, k - 1)
    nodes, log_weights = rule(offsets)
    log_c = log_cdf(nodes[..., None, :] + offsets[..., :, None]).sum(axis=-2)
    log_proba = log_normalise(logsumexp(log_weights + log_c, axis=-1), axis=1)

    others = np.arange(k - 1) + (np.arange(k - 1) >= y[:, None])
    observed = np.take_along_axis(scores, y[:, None], axis=1)
    offsets = observed - np.take_along_axis(scores, others, axis=1)
    nodes, log_weights = rule(offsets)
    z = nodes[:, None, :] + offsets[:, :, None]
    log_c = log_cdf(z)
    log_joint = log_weights + log_c.sum(axis=1)
    log_den = logsumexp(log_joint, axis=-1)
    log_num = logsumexp(log_joint[:, None, :] - log_c + log_pdf(z), axis=-1)
    shift = np.exp(log_num - log_den[:, None])
    means = scores.copy()
    rows = np.arange(n)
    means[rows[:, None], others] -= shift
    means[rows, y] += shift.sum(axis=1)
    return log_proba, means


@pytest.mark.parametrize("n_classes", [3, 4, 6, 10])
@pytest.mark.parametrize("spread", [0.1, 3.0, 300.0])
def test_kernels_give_the_bits_of_the_row_by_row_quadrature(n_classes, spread):
    # The kernels lay terms and nodes along leading axes and drop the rows
    # whose Newton iterations have stopped; the numbers must stay those of
    # the plain formulation, bit for bit (spread 300 reaches the log_ndtr
    # tail; 10 classes, the pairwise sums of more than eight terms).
    rng = np.random.default_rng(n_classes)
    scores = rng.normal(0.0, spread, size=(400, n_classes))
    y = rng.integers(0, n_classes, size=400)
    log_proba, means = _row_layout_reference(scores, y, 12)
    assert np.array_equal(multinomial_probit_log_proba(scores, 12), log_proba)
    assert np.array_equal(truncated_probit_means(scores, y, 12), means)


@pytest.mark.parametrize(
    "proba",
    [[0.7, 0.2, 0.1], [0.97, 0.01, 0.01, 0.01], [0.5, 0.5], [0.25] * 4, [1e-4, 1]],
)
def test_scores_for_proba_inverts_the_likelihood(proba):
    from skrbal.rvm._probit import scores_for_proba

    proba = np.asarray(proba) / np.sum(proba)
    scores = scores_for_proba(proba, 12)
    assert abs(scores.mean()) < 1e-12
    log_p = multinomial_probit_log_proba(scores[None], 12)[0]
    np.testing.assert_allclose(log_p, np.log(proba), atol=1e-8)
