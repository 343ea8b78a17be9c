"""The fleet's prior and the pooled classifier (issue 29.2)."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import invwishart
from sklearn.base import clone

from skrbal import z24_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.exceptions import UnlabelledClassesWarning
from skrbal.mixture import (
    BayesianGMMClassifier,
    FleetPrior,
    PooledGMMClassifier,
    commissioning_window,
)
from skrbal.online import RiskBasedAgent

CLASSES = [1, 2, 3]
# Damage of the fleet: class 2 lies 5 healthy deviations down on feature 0,
# class 3 on feature 1.
SHIFTS = {1: [0.0, 0.0], 2: [-5.0, 0.0], 3: [0.0, -5.0]}


def _structure(rng, level, scale, shifts=SHIFTS, n_healthy=60, n_damaged=4):
    """A structure's labels: healthy first, then a few of each damage class."""
    parts, labels = [], []
    for label in CLASSES:
        n = n_healthy if label == 1 else n_damaged
        parts.append(
            level + scale * (np.asarray(shifts[label]) + rng.normal(size=(n, 2)))
        )
        labels += [label] * n
    return np.vstack(parts), np.array(labels)


@pytest.fixture(scope="module")
def fleet():
    rng = np.random.RandomState(0)
    records = [
        _structure(rng, rng.uniform(5, 50, 2), rng.uniform(0.5, 3.0)) for _ in range(6)
    ]
    return FleetPrior.from_structures(records, classes=CLASSES, window=50)


def _quiet(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        return estimator.fit(X, y)


def test_fleet_prior_learns_where_each_state_lies(fleet):
    assert fleet.n_structures.tolist() == [6, 6, 6]
    # In each structure's window-standardised space, damage lies ~5 down.
    assert fleet.mean[1, 0] < -3.5 and abs(fleet.mean[1, 1]) < 1.5
    assert fleet.mean[2, 1] < -3.5 and abs(fleet.mean[2, 0]) < 1.5
    assert (fleet.mean_precision > 0).all()
    assert (fleet.degrees_of_freedom > 1).all()


def test_commissioning_window_counts_weights():
    y = np.array([1, 1, 2, 1, 1])
    assert commissioning_window(y, 1, 2).tolist() == [0, 1]
    assert commissioning_window(y, 1, 2, [2.0, 1.0, 1.0, 1.0, 1.0]).tolist() == [0]
    assert commissioning_window(y, 1, 2, [0.0, 1.0, 1.0, 1.0, 1.0]).tolist() == [1, 3]


def test_without_fleet_equals_the_mixture_on_window_standardised_features():
    rng = np.random.RandomState(1)
    X, y = _structure(rng, np.array([10.0, 20.0]), 2.0)
    pooled = _quiet(PooledGMMClassifier(classes=CLASSES), X, y)
    window = X[:50]
    Z = (X - window.mean(axis=0)) / window.std(axis=0)
    alone = _quiet(BayesianGMMClassifier(classes=CLASSES), Z, y)
    X_new = rng.normal(15.0, 8.0, size=(30, 2))
    Z_new = (X_new - window.mean(axis=0)) / window.std(axis=0)
    np.testing.assert_allclose(
        pooled.predict_proba(X_new), alone.predict_proba(Z_new), rtol=1e-10
    )
    np.testing.assert_allclose(
        pooled.class_log_density(X_new),
        alone.class_log_density(Z_new) - np.log(window.std(axis=0)).sum(),
        rtol=1e-10,
    )
    assert (pooled.transfer_weight_ == 0).all()


def test_partial_fit_equals_fit(fleet):
    rng = np.random.RandomState(2)
    X, y = _structure(rng, np.array([3.0, 4.0]), 1.0)
    whole = _quiet(PooledGMMClassifier(fleet=fleet, classes=CLASSES), X, y)
    parts = PooledGMMClassifier(fleet=fleet)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        parts.partial_fit(X[:55], y[:55], classes=CLASSES)
    for start in range(55, X.shape[0], 3):
        parts.partial_fit(X[start : start + 3], y[start : start + 3])
    X_new = rng.normal(3.0, 4.0, size=(20, 2))
    np.testing.assert_allclose(
        parts.predict_proba(X_new), whole.predict_proba(X_new), rtol=1e-9
    )
    np.testing.assert_allclose(parts.transfer_weight_, whole.transfer_weight_)


def _mc_posterior(prior, window, later, rng, n_draws=30_000):
    """Monte Carlo ``p(. | later, window)`` of one NIW, and ``p(later | window)``.

    Draws ``(mu, Sigma)`` from the NIW posterior given the window (sampled
    directly, not through the code under test's formulas) and weights each
    draw by the likelihood of the later samples. Returns the log predictive
    density as a function of a point, and the log evidence.
    """
    m0, kappa0, dof0, scale0 = prior
    n = window.shape[0]
    if n:
        xbar = window.mean(axis=0)
        scatter = (window - xbar).T @ (window - xbar)
        kappa, dof = kappa0 + n, dof0 + n
        mean = (kappa0 * m0 + n * xbar) / kappa
        scale = scale0 + scatter + kappa0 * n / kappa * np.outer(xbar - m0, xbar - m0)
    else:
        mean, kappa, dof, scale = m0, kappa0, dof0, scale0
    sigmas = invwishart(df=dof, scale=scale).rvs(n_draws, random_state=rng)
    chol = np.linalg.cholesky(sigmas / kappa)
    mus = mean + np.einsum("nij,nj->ni", chol, rng.standard_normal((n_draws, 2)))
    log_lik = np.zeros(n_draws)
    for point in later:
        log_lik += _log_normal(point, mus, sigmas)
    log_evidence = logsumexp(log_lik) - np.log(n_draws)
    total = logsumexp(log_lik)

    def log_predictive(x):
        return logsumexp(log_lik + _log_normal(x, mus, sigmas)) - total

    return log_predictive, log_evidence


def _log_normal(x, mus, sigmas):
    diff = x - mus
    solved = np.linalg.solve(sigmas, diff[..., None])[..., 0]
    _, logdet = np.linalg.slogdet(sigmas)
    return -0.5 * (np.einsum("ni,ni->n", diff, solved) + logdet + 2 * np.log(2 * np.pi))


def test_pooled_predictive_matches_monte_carlo(fleet):
    """Each class's density: the two components weighted by partial evidence."""
    rng = np.random.RandomState(3)
    X, y = _structure(rng, np.array([7.0, 9.0]), 1.5, n_healthy=53, n_damaged=2)
    clf = _quiet(PooledGMMClassifier(fleet=fleet, classes=CLASSES), X, y)
    Z = (X - clf.normaliser_mean_) / clf.normaliser_scale_
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    draws = np.random.RandomState(4)
    for k, label in enumerate(CLASSES):
        members = Z[y == label]
        window, later = (
            (members[:50], members[50:]) if label == 1 else (members[:0], members)
        )
        fleet_prior = (
            fleet.mean[k],
            fleet.mean_precision[k],
            fleet.degrees_of_freedom[k],
            fleet.scale[k],
        )
        components = [
            _mc_posterior(prior, window, later, draws) for prior in (broad, fleet_prior)
        ]
        log_w = np.log([0.1, 0.9]) + [evidence for _, evidence in components]
        log_w -= logsumexp(log_w)
        # Where the class lies and a step away (the far tails need many more
        # draws than a test can afford).
        for x in (fleet.mean[k], fleet.mean[k] + [1.0, -0.5]):
            expected = logsumexp(
                log_w + [predictive(x) for predictive, _ in components]
            )
            raw = clf.normaliser_mean_ + clf.normaliser_scale_ * x
            jacobian = np.log(clf.normaliser_scale_).sum()
            got = clf.class_log_density(raw[None])[0, k] + jacobian
            assert got == pytest.approx(expected, abs=0.05), (label, x)
        assert clf.transfer_weight_[k] == pytest.approx(np.exp(log_w[1]), abs=0.03)


def test_transfer_falls_back_on_a_structure_unlike_the_fleet(fleet):
    rng = np.random.RandomState(5)
    unlike = {1: [0.0, 0.0], 2: [6.0, 6.0], 3: [-6.0, 6.0]}
    X, y = _structure(rng, np.array([5.0, 5.0]), 1.0, shifts=unlike, n_damaged=8)
    clf = _quiet(PooledGMMClassifier(fleet=fleet, classes=CLASSES), X, y)
    assert clf.transfer_weight_[1:].max() < 0.01
    like = _quiet(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES),
        *_structure(rng, np.array([5.0, 5.0]), 1.0, n_damaged=8),
    )
    assert like.transfer_weight_[1:].min() > 0.9
    # Its damage is then found where its own labels put it.
    assert clf.predict([[11.0, 11.0], [-1.0, 11.0]]).tolist() == [2, 3]


def test_healthy_only_commissioning_places_unseen_states_where_the_fleet_has_them(
    fleet,
):
    rng = np.random.RandomState(6)
    X, y = _structure(rng, np.array([40.0, 2.0]), 0.2)
    healthy = y == 1
    with pytest.warns(UnlabelledClassesWarning, match=r"\[2, 3\].*fleet"):
        clf = PooledGMMClassifier(fleet=fleet, classes=CLASSES).fit(
            X[healthy], y[healthy]
        )
    assert clf.fit_warnings_ and clf.unlabelled_classes_.tolist() == [2, 3]
    accuracy = (clf.predict(X[~healthy]) == y[~healthy]).mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = PooledGMMClassifier(classes=CLASSES).fit(X[healthy], y[healthy])
    assert accuracy == 1.0 > (alone.predict(X[~healthy]) == y[~healthy]).mean()


def test_fleet_must_be_normalised_alike(fleet):
    X, y = _structure(np.random.RandomState(7), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="window=30 differs"):
        PooledGMMClassifier(fleet=fleet, window=30).fit(X, y)
    with pytest.raises(ValueError, match="reference_class=2 differs"):
        PooledGMMClassifier(fleet=fleet, reference_class=2).fit(X, y)
    with pytest.raises(ValueError, match="classes"):
        PooledGMMClassifier(fleet=fleet).fit(X[y < 3], y[y < 3])
    with pytest.raises(ValueError, match="at least 2"):
        FleetPrior.from_structures([(X[:1], y[:1])], classes=CLASSES)


def test_works_in_the_stream_learner(fleet):
    rng = np.random.RandomState(8)
    X, y = _structure(rng, np.array([1.0, 2.0]), 1.0, n_healthy=120, n_damaged=20)
    y = np.where(y == 3, 4, y)  # the Z24 process's states 1..4
    pooled = _fleet_for_z24(fleet)
    learner = RiskBasedLearner(
        estimator=PooledGMMClassifier(fleet=pooled), process=z24_decision_process()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner.fit(X, y, initial=np.arange(50))
    assert learner.history_.totals["n_inspections"] >= 1
    assert learner.estimator_.transfer_weight_.shape == (4,)


def _fleet_for_z24(fleet):
    """The test fleet's classes 1, 2, 3 as the Z24 process's 1, 2, 4 (3 none)."""
    params = fleet.get_params()
    insert = lambda a, v: np.insert(np.asarray(a), 2, v, axis=0)  # noqa: E731
    return FleetPrior(
        classes=np.array([1, 2, 3, 4]),
        mean=insert(params["mean"], 0.0),
        mean_precision=insert(params["mean_precision"], 1.0),
        degrees_of_freedom=insert(params["degrees_of_freedom"], 2.0),
        scale=insert(params["scale"], np.eye(2)),
        n_structures=insert(params["n_structures"], 0),
        reference_class=1,
        window=50,
    )


def test_an_agent_stores_and_rebuilds_it(fleet, tmp_path):
    pooled = PooledGMMClassifier(fleet=_fleet_for_z24(fleet))
    rng = np.random.RandomState(9)
    X = rng.normal(size=(60, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with RiskBasedAgent(
            estimator=pooled, process=z24_decision_process(), store=tmp_path / "a.db"
        ).fit(X, np.ones(60, dtype=int)) as agent:
            first = agent.observe(X[:3])
        again = RiskBasedAgent.from_store(tmp_path / "a.db")
    rebuilt = again.estimator_
    assert isinstance(rebuilt, PooledGMMClassifier)
    np.testing.assert_array_equal(rebuilt.fleet.scale, pooled.fleet.scale)
    np.testing.assert_allclose(
        rebuilt.predict_proba(X[:3]),
        _quiet(
            clone(pooled).set_params(classes=[1, 2, 3, 4]), X, np.ones(60, dtype=int)
        ).predict_proba(X[:3]),
    )
    assert first.shape[0] == 3


def test_a_structure_unlike_the_others_does_not_blur_the_fleets_prior():
    rng = np.random.RandomState(10)
    records = [
        _structure(rng, rng.uniform(5, 50, 2), rng.uniform(0.5, 3.0), n_damaged=6)
        for _ in range(6)
    ]
    unlike = {1: [0.0, 0.0], 2: [6.0, 6.0], 3: [0.0, -5.0]}
    records.append(_structure(rng, np.array([5.0, 5.0]), 1.0, unlike, n_damaged=6))
    fleet = FleetPrior.from_structures(records, classes=CLASSES)
    # Six structures put state 2 five deviations down on feature 0; the
    # unweighted mean of all seven would be about -3.4.
    assert fleet.mean[1, 0] < -4.5
    assert fleet.mean[1, 1] < 1.0


def test_predictions_come_from_one_joint_log_likelihood(fleet):
    """predict, predict_proba and predict_log_proba agree with the joint."""
    X, y = _structure(np.random.RandomState(12), np.array([3.0, 4.0]), 1.0)
    clf = _quiet(PooledGMMClassifier(fleet=fleet, classes=CLASSES), X, y)
    X_new = np.random.RandomState(13).normal(3.0, 3.0, size=(7, 2))
    joint = clf.predict_joint_log_proba(X_new)
    log_proba = joint - logsumexp(joint, axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_log_proba(X_new), log_proba, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X_new), np.exp(log_proba))
    np.testing.assert_array_equal(clf.predict(X_new), clf.classes_[joint.argmax(1)])
    # The joint is the class density (in the normalised units) plus the class
    # prior: its class part is class_log_density's.
    density = clf.class_log_density(X_new)
    spread = joint - density
    np.testing.assert_allclose(spread - spread[:1], 0.0, atol=1e-9)
