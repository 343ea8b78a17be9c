"""Wrong statements (issue 26): the other labels' check and the size factor.

``class_priors[...]['check']``: healthy labels found where a statement puts
damage count against the statement. ``class_priors[...]['size_factor']``:
the stated size known within a factor, a mixture of directed components
over sizes.
"""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier

CLASSES = [1, 2, 3]


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _cold_labels(rng, shift=6.0, n_healthy=30, n_cold=5):
    """Healthy reference (1), then a healthy 'cold' state (2) up feature 0."""
    X = np.vstack(
        [
            rng.normal(size=(n_healthy, 2)),
            rng.normal(size=(n_cold, 2)) + np.array([shift, 0.0]),
        ]
    )
    y = np.array([1] * n_healthy + [2] * n_cold)
    return X, y


def _stated(shift, check=True, **extra):
    return {3: {"shift": [shift, 0.0], "check": check, **extra}}


def _component_density(X_before, y_before, x, shift, directed, size_factor=1.0):
    """Class 3's broad or directed predictive at ``x`` from the samples before.

    Brute force through the public model: a model without a statement gives
    each class's broad predictive; one with a statement whose directed
    weight is all but one gives class 3's directed predictive (class 3 has
    no label here, so the component weights stay the prior's).
    """
    if directed:
        spec = {
            3: {"shift": [shift, 0.0], "weight": 1 - 1e-15, "size_factor": size_factor}
        }
        model = BayesianGMMClassifier(classes=CLASSES, class_priors=spec)
    else:
        model = BayesianGMMClassifier(classes=CLASSES)
    _fit(model, X_before, y_before)
    return model.class_log_density(x[None])[0]


@pytest.mark.parametrize("size_factor", [1.0, 2.0])
@pytest.mark.parametrize("shift", [6.0, -6.0])
def test_weight_is_the_brute_force_pairwise_prequential_likelihood(shift, size_factor):
    rng = np.random.default_rng(0)
    X, y = _cold_labels(rng)
    evidence = np.zeros(2)
    for i in np.flatnonzero(y == 2):
        before = slice(0, i)
        broad = _component_density(X[before], y[before], X[i], shift, False)
        directed = _component_density(
            X[before], y[before], X[i], shift, True, size_factor
        )
        own = broad[1]  # class 2 has no statement: its broad predictive
        ratio = np.logaddexp(own, broad[2]) - np.logaddexp(own, directed[2])
        evidence[1] += min(ratio, 0.0)
    spec = _stated(shift, size_factor=size_factor)
    checked = _fit(BayesianGMMClassifier(classes=CLASSES, class_priors=spec), X, y)
    # Class 3 has no data: without the check its weights are the prior's.
    log_w = np.log([0.1, 0.9]) + evidence
    expected = np.exp(log_w[1] - logsumexp(log_w))
    np.testing.assert_allclose(checked.directed_prior_weight_[2], expected, rtol=1e-8)


def test_a_statement_where_healthy_labels_land_stops_dominating():
    rng = np.random.default_rng(1)
    X, y = _cold_labels(rng)
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0)),
        X[:30],
        y[:30],
    )
    assert model.directed_prior_weight_[2] == pytest.approx(0.9)
    weights = []
    for i in range(30, 35):
        model.partial_fit(X[[i]], y[[i]])
        weights.append(model.directed_prior_weight_[2])
    assert np.all(np.diff(weights) < 0)
    assert weights[-1] < 0.05
    # Without the check the same labels leave the statement at its prior.
    unchecked = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0, False)),
        X,
        y,
    )
    assert unchecked.directed_prior_weight_[2] == pytest.approx(0.9)
    # The damage the statement described is then found where it is: a step
    # down feature 0 is given to class 3 more than with the statement kept.
    down = np.array([[-6.0, 0.0]])
    assert model.predict_proba(down)[0, 2] > 2 * unchecked.predict_proba(down)[0, 2]


def test_a_statement_away_from_the_healthy_labels_keeps_its_weight():
    rng = np.random.default_rng(1)
    X, y = _cold_labels(rng)
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(-6.0)), X, y
    )
    # Neither lowered nor raised: labels elsewhere do not show where it is.
    assert model.directed_prior_weight_[2] == pytest.approx(0.9, abs=1e-3)


def test_reference_and_stated_classes_labels_do_not_count():
    rng = np.random.default_rng(2)
    # Reference labels only, some of them where the statement puts class 3.
    X = np.vstack(
        [rng.normal(size=(30, 2)), rng.normal(size=(4, 2)) + np.array([6.0, 0.0])]
    )
    y = np.ones(34, dtype=int)
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0)), X, y
    )
    assert model.directed_prior_weight_[2] == pytest.approx(0.9)
    # Class 2 with a statement of its own is not evidence about class 3's.
    X, y = _cold_labels(rng)
    both = {2: {"shift": [6.0, 0.0], "check": True}, **_stated(6.0)}
    model = _fit(BayesianGMMClassifier(classes=CLASSES, class_priors=both), X, y)
    assert model.directed_prior_weight_[2] == pytest.approx(0.9)


@pytest.mark.parametrize("batch", [1, 2, 35])
def test_partial_fit_equals_fit(batch):
    rng = np.random.default_rng(3)
    X, y = _cold_labels(rng)
    # A damaged label late, so the class's own marginal enters as well.
    X = np.vstack([X, [[5.5, 0.3]]])
    y = np.append(y, 3)
    fitted = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0)), X, y
    )
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0)),
        X[:batch],
        y[:batch],
    )
    for start in range(batch, len(y), batch):
        model.partial_fit(X[start : start + batch], y[start : start + batch])
    grid = rng.normal(size=(20, 2)) * 4
    np.testing.assert_allclose(
        model.directed_prior_weight_, fitted.directed_prior_weight_, rtol=1e-9
    )
    np.testing.assert_allclose(
        model.predict_proba(grid), fitted.predict_proba(grid), rtol=1e-9, atol=1e-12
    )


def test_one_statement_sums_the_evidence_of_its_entries():
    rng = np.random.default_rng(4)
    X, y = _cold_labels(rng)
    classes = [1, 2, 3, 4]
    each = {
        3: {"shift": [6.0, 0.0], "check": True},
        4: {"shift": [6.0, 0.0], "check": True},
    }
    apart = _fit(BayesianGMMClassifier(classes=classes, class_priors=each), X, y)
    tied = {k: {**spec, "statement": "up"} for k, spec in each.items()}
    together = _fit(BayesianGMMClassifier(classes=classes, class_priors=tied), X, y)
    # Each entry's evidence is the same; one statement counts it twice.
    w = apart.directed_prior_weight_[2]
    evidence = np.log(w / (1 - w)) - np.log(9.0)
    assert evidence < -1.0
    expected = 1 / (1 + np.exp(-(np.log(9.0) + 2 * evidence)))
    np.testing.assert_allclose(together.directed_prior_weight_[2:], expected)


def test_check_set_after_a_fit_without_it_is_refused():
    rng = np.random.default_rng(5)
    X, y = _cold_labels(rng)
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0, False)),
        X,
        y,
    )
    model.set_params(class_priors=_stated(6.0))
    with pytest.raises(ValueError, match="did not keep its labelled samples"):
        model.partial_fit(X[:1], y[:1])


def test_check_must_be_a_boolean():
    rng = np.random.default_rng(6)
    X, y = _cold_labels(rng)
    model = BayesianGMMClassifier(classes=CLASSES, class_priors=_stated(6.0, "yes"))
    with pytest.raises(ValueError, match=r"\['check'\] must be True or False"):
        _fit(model, X, y)


# ---------------------------------------------------------------------- #
# the size known within a factor: a mixture over sizes
# ---------------------------------------------------------------------- #
def _textbook_posterior(X, m0, kappa0, v0, S0):
    """NIW posterior (Murphy 2012, eq. 4.209-4.214)."""
    n = len(X)
    xbar = X.mean(axis=0) if n else np.zeros_like(m0)
    scatter = (X - xbar).T @ (X - xbar) if n else np.zeros_like(S0)
    kappa = kappa0 + n
    mean = (kappa0 * m0 + n * xbar) / kappa
    scale = S0 + scatter + kappa0 * n / kappa * np.outer(xbar - m0, xbar - m0)
    return mean, kappa, v0 + n, scale


def _textbook_predictive(mean, kappa, dof, scale):
    df = dof - len(mean) + 1
    return stats.multivariate_t(
        loc=mean, shape=(kappa + 1) / (kappa * df) * scale, df=df
    )


def _one_step_ahead(X, hyper):
    """``log p(x_1..x_n)`` as the product of one-step-ahead predictives."""
    return sum(
        _textbook_predictive(*_textbook_posterior(X[:i], *hyper)).logpdf(X[i])
        for i in range(len(X))
    )


def _sized_hyper(X_ref, broad, shift, size):
    mean, _, dof, scale = _textbook_posterior(X_ref, *broad)
    d = len(mean)
    cov = scale / (dof + d + 2)
    step = size * shift * np.sqrt(np.diag(cov))
    kappa = min(1.0, max(0.1, 1.0 / (step @ np.linalg.inv(cov) @ step)))
    return mean + step, kappa, d + 2.0, cov


@pytest.mark.parametrize("n_damaged", [0, 3])
def test_sizes_predictive_is_the_brute_force_mixture(n_damaged):
    rng = np.random.default_rng(7)
    healthy = rng.normal(size=(40, 2)) * [0.5, 0.3] + [1.0, 2.0]
    # Damage at twice the stated size.
    damaged = rng.normal(size=(n_damaged, 2)) * [0.5, 0.3] + [1.0, 2.0]
    damaged -= 6.0 * np.array([0.5, 0.3])
    X, y = np.vstack([healthy, damaged]), np.r_[[0] * 40, [1] * n_damaged]
    spec = {1: {"shift": -3.0, "weight": 0.7, "size_factor": 2.0}}
    model = _fit(BayesianGMMClassifier(classes=[0, 1], class_priors=spec), X, y)
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    hypers = [broad] + [
        _sized_hyper(healthy, broad, -3.0, size)
        for size in 2.0 ** np.linspace(-1, 1, 5)
    ]
    log_prior = np.log([0.3] + [0.7 * b / 16 for b in (1, 4, 6, 4, 1)])
    log_post = log_prior + [_one_step_ahead(damaged, h) for h in hypers]
    post = np.exp(log_post - logsumexp(log_post))
    X_test = np.array([[1.0, 2.0], [-0.5, 1.1], [-2.0, 0.2], [0.0, 1.5]])
    expected = sum(
        p * _textbook_predictive(*_textbook_posterior(damaged, *h)).pdf(X_test)
        for p, h in zip(post, hypers)
    )
    exact = np.exp(model.class_log_density(X_test)[:, 1])
    np.testing.assert_allclose(exact, expected, rtol=1e-8)
    np.testing.assert_allclose(model.directed_prior_weight_[1], post[1:].sum())


def test_a_size_known_within_two_covers_a_doubled_statement():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2)) * [0.5, 0.3] + [1.0, 2.0]
    truth = np.array([[1.0, 2.0]]) - 4.0 * np.array([0.5, 0.3])
    densities = []
    for factor in (1.0, 2.0):
        spec = {1: {"shift": -8.0, "size_factor": factor}}
        model = _fit(
            BayesianGMMClassifier(classes=[0, 1], class_priors=spec),
            X,
            np.zeros(40, int),
        )
        densities.append(model.class_log_density(truth)[0, 1])
    assert densities[1] > densities[0] + 0.5


@pytest.mark.parametrize("batch", [1, 3])
def test_sizes_and_check_partial_fit_equals_fit(batch):
    rng = np.random.default_rng(9)
    X, y = _cold_labels(rng)
    X = np.vstack([X, [[5.5, 0.3], [4.0, -0.2]]])
    y = np.append(y, [3, 3])
    spec = {3: {"shift": [6.0, 0.0], "check": True, "size_factor": 3.0}}
    fitted = _fit(BayesianGMMClassifier(classes=CLASSES, class_priors=spec), X, y)
    model = _fit(
        BayesianGMMClassifier(classes=CLASSES, class_priors=spec),
        X[:batch],
        y[:batch],
    )
    for start in range(batch, len(y), batch):
        model.partial_fit(X[start : start + batch], y[start : start + batch])
    grid = rng.normal(size=(20, 2)) * 4
    np.testing.assert_allclose(
        model.directed_prior_weight_, fitted.directed_prior_weight_, rtol=1e-9
    )
    np.testing.assert_allclose(
        model.predict_proba(grid), fitted.predict_proba(grid), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("factor", [0.5, True, float("inf"), "2"])
def test_size_factor_must_be_at_least_one(factor):
    rng = np.random.default_rng(10)
    X, y = _cold_labels(rng)
    spec = {3: {"shift": [6.0, 0.0], "size_factor": factor}}
    with pytest.raises(ValueError, match=r"\['size_factor'\] .* must be a finite"):
        _fit(BayesianGMMClassifier(classes=CLASSES, class_priors=spec), X, y)


@pytest.mark.parametrize(
    ("key", "value", "allowed"), [("size_factor", 2.0, "1.0"), ("check", True, "False")]
)
def test_semi_supervised_refuses_sizes_and_the_check_by_name(key, value, allowed):
    rng = np.random.default_rng(11)
    X, y = _cold_labels(rng)
    spec = {3: {"shift": [6.0, 0.0], key: value}}
    model = SemiSupervisedGMMClassifier(classes=CLASSES, class_priors=spec)
    with pytest.raises(ValueError, match=rf"\['{key}'\]: it must be {allowed}"):
        _fit(model, X, y)
