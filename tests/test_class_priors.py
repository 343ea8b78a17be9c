"""Per-class priors (class_priors), per-class class weights and the warning
about classes without a label, in the Gaussian-mixture classifiers."""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from skrbal import synthetic_decision_process
from skrbal.exceptions import UnlabelledClassesWarning
from skrbal.mixture import (
    BayesianGMMClassifier,
    SemiSupervisedGMMClassifier,
    process_weight_concentration,
)

TOL = 1e-10


def _healthy_and_damaged(rng, n_healthy=40, n_damaged=3, shift=-3.0):
    """Two features; the damaged class is the healthy one moved by ``shift`` std."""
    healthy = rng.normal(size=(n_healthy, 2)) * [0.5, 0.3] + [1.0, 2.0]
    damaged = rng.normal(size=(n_damaged, 2)) * [0.5, 0.3] + [1.0, 2.0]
    damaged += shift * np.array([0.5, 0.3])
    X = np.vstack([healthy, damaged])
    y = np.r_[np.zeros(n_healthy, int), np.ones(n_damaged, int)]
    return X, y


def _fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        return model.fit(X, y)


# ---------------------------------------------------------------------- #
# the maths, checked by independent routes
# ---------------------------------------------------------------------- #
def _broad_posterior(X, m0, kappa0, v0, S0):
    """Textbook NIW posterior (Murphy 2012, eq. 4.209-4.214)."""
    n = len(X)
    xbar = X.mean(axis=0) if n else np.zeros_like(m0)
    scatter = (X - xbar).T @ (X - xbar) if n else np.zeros_like(S0)
    kappa = kappa0 + n
    mean = (kappa0 * m0 + n * xbar) / kappa
    scale = S0 + scatter + kappa0 * n / kappa * np.outer(xbar - m0, xbar - m0)
    return mean, kappa, v0 + n, scale


def _predictive(mean, kappa, dof, scale):
    d = len(mean)
    df = dof - d + 1
    return stats.multivariate_t(
        loc=mean, shape=(kappa + 1) / (kappa * df) * scale, df=df
    )


def _sequential_log_marginal(X, hyper):
    """``log p(x_1..x_n)`` as the product of one-step-ahead predictives."""
    total = 0.0
    for i in range(len(X)):
        total += _predictive(*_broad_posterior(X[:i], *hyper)).logpdf(X[i])
    return total


def _kappa_of_step(step, cov):
    """The default mean precision: 1 / (Mahalanobis length)^2, within [0.1, 1]."""
    length2 = step @ np.linalg.inv(cov) @ step
    return min(1.0, max(0.1, 1.0 / length2))


def _directed_hyper(X_ref, broad, shift, units="std"):
    """The directed NIW of a class stated ``shift`` away from the reference."""
    mean, _, dof, scale = _broad_posterior(X_ref, *broad)
    d = len(mean)
    cov = scale / (dof + d + 2)
    if units == "std":
        step = shift * np.sqrt(np.diag(cov))
    else:  # relative
        step = shift * np.abs(mean)
    return mean + step, _kappa_of_step(step, cov), d + 2.0, cov


def test_mixture_weights_are_the_marginal_likelihood_update():
    rng = np.random.default_rng(0)
    X, y = _healthy_and_damaged(rng, n_damaged=4)
    model = BayesianGMMClassifier(class_priors={1: {"shift": -2.0, "weight": 0.7}})
    model.fit(X, y)
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    directed = _directed_hyper(X[y == 0], broad, -2.0)
    log_b = np.log(0.3) + _sequential_log_marginal(X[y == 1], broad)
    log_d = np.log(0.7) + _sequential_log_marginal(X[y == 1], directed)
    expected = np.exp(log_d - np.logaddexp(log_b, log_d))
    np.testing.assert_allclose(model.directed_prior_weight_, [0.0, expected], rtol=1e-8)
    assert 0.05 < expected < 0.999  # both components matter in this check


def test_posterior_predictive_matches_monte_carlo():
    rng = np.random.default_rng(1)
    X, y = _healthy_and_damaged(rng, n_damaged=2)
    model = BayesianGMMClassifier(class_priors={1: {"shift": -3.0, "weight": 0.6}})
    model.fit(X, y)
    w_d = model.directed_prior_weight_[1]
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    directed = _directed_hyper(X[y == 0], broad, -3.0)
    X_damaged = X[y == 1]
    # Sample (mu, Sigma) from the mixture posterior; average the Gaussian.
    draws = 40_000
    sample_rng = np.random.default_rng(2)
    component = sample_rng.random(draws) < w_d
    X_test = np.array([[1.0, 2.0], [-0.5, 1.1], [0.0, 1.5], [2.0, 2.5]])
    density = np.zeros((draws, len(X_test)))
    d = X_test.shape[1]
    for use, hyper in ((~component, broad), (component, directed)):
        mean, kappa, dof, scale = _broad_posterior(X_damaged, *hyper)
        n = int(use.sum())
        sigmas = stats.invwishart(df=dof, scale=scale).rvs(n, random_state=sample_rng)
        chol = np.linalg.cholesky(sigmas.reshape(n, d, d))
        # per draw, mu ~ N(mean, sigma / kappa), then the N(mu, sigma) density
        # (vectorised: a loop over 40,000 draws took 10 s of CPU)
        noise = sample_rng.standard_normal((n, d))
        mus = mean + np.einsum("nij,nj->ni", chol, noise) / np.sqrt(kappa)
        diff = X_test[None, :, :, None] - mus[:, None, :, None]
        z = np.linalg.solve(chol[:, None], diff)[..., 0]
        log_det = 2 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        log_norm = 0.5 * (log_det + d * np.log(2 * np.pi))
        density[use] = np.exp(-0.5 * (z**2).sum(axis=2) - log_norm[:, None])
    monte_carlo = density.mean(axis=0)
    stderr = density.std(axis=0) / np.sqrt(draws)
    exact = np.exp(model.class_log_density(X_test)[:, 1])
    assert np.all(np.abs(exact - monte_carlo) < 4 * stderr + 1e-3 * exact)


def test_unlabelled_directed_class_predictive_is_the_prior_mixture():
    rng = np.random.default_rng(3)
    X, y = _healthy_and_damaged(rng, n_damaged=0)
    model = _fit_quietly(
        BayesianGMMClassifier(classes=[0, 1], class_priors={1: {"shift": -3.0}}), X, y
    )
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    directed = _directed_hyper(X, broad, -3.0)
    X_test = rng.normal(size=(5, 2)) + np.array([1.0, 1.5])
    expected = logsumexp(
        [
            np.log(0.1) + _predictive(*broad).logpdf(X_test),
            np.log(0.9) + _predictive(*directed).logpdf(X_test),
        ],
        axis=0,
    )
    np.testing.assert_allclose(model.class_log_density(X_test)[:, 1], expected)
    np.testing.assert_allclose(model.directed_mean_prior_[1], directed[0])
    assert model.directed_prior_weight_[1] == pytest.approx(0.9)
    # Bayes' rule on the mixture predictive and the Dirichlet class prior.
    joint = model.class_log_density(X_test) + np.log([41.0, 1.0]) - np.log(42.0)
    np.testing.assert_allclose(
        model.predict_proba(X_test), np.exp(joint - logsumexp(joint, axis=1)[:, None])
    )


def _broad_reference(rng, n=200):
    """A reference class in physical units that spans a wide range (seasons)."""
    cov = np.array([[0.04, 0.03], [0.03, 0.04]])
    return rng.multivariate_normal([4.0, 5.0], cov, size=n)


def test_a_short_step_has_the_mean_precision_of_its_length():
    """A relative step of a few percent against a broad reference class.

    The directed component is the exact NIW predictive with ``kappa = 1 /
    d^2`` clipped to [0.1, 1] (here 1: the step is shorter than one
    reference standard deviation), checked against the textbook formulas.
    """
    rng = np.random.default_rng(11)
    X = _broad_reference(rng)
    y = np.zeros(len(X), int)
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1],
            mean_prior="data",
            covariance_prior="data",
            class_priors={1: {"shift": -0.03, "units": "relative"}},
        ),
        X,
        y,
    )
    broad = (model.mean_prior_, 1.0, 2.0, model.covariance_prior_)
    directed = _directed_hyper(X, broad, -0.03, units="relative")
    assert directed[1] == 1.0
    X_test = rng.normal(size=(6, 2)) * 0.2 + np.array([3.85, 4.85])
    prior_broad = _predictive(*broad)
    expected = logsumexp(
        [
            np.log(0.1) + prior_broad.logpdf(X_test),
            np.log(0.9) + _predictive(*directed).logpdf(X_test),
        ],
        axis=0,
    )
    np.testing.assert_allclose(model.class_log_density(X_test)[:, 1], expected)


def test_a_short_step_beats_the_reference_where_it_is_stated():
    """At its stated location, the stated class explains an observation
    better than the reference class does.

    With a fixed mean precision of 0.1 the directed component was about twice
    as wide as a broad reference class, so a step of a few percent never beat
    it: damage in the late summer stayed "healthy" (issue 26's first-week
    trial).
    """
    rng = np.random.default_rng(12)
    X = _broad_reference(rng)
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1],
            mean_prior="data",
            covariance_prior="data",
            class_priors={1: {"shift": -0.05, "units": "relative"}},
        ),
        X,
        np.zeros(len(X), int),
    )
    mean = model.means_[0]
    points = mean * (1 - np.array([0.05, 0.055]))[:, None]
    density = model.class_log_density(points)
    assert np.all(density[:, 1] > density[:, 0])
    # The stated mean precision is still taken as stated.
    loose = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1],
            mean_prior="data",
            covariance_prior="data",
            class_priors={
                1: {"shift": -0.05, "units": "relative", "mean_precision": 0.1}
            },
        ),
        X,
        np.zeros(len(X), int),
    )
    assert np.all(
        loose.class_log_density(points)[:, 1] < loose.class_log_density(points)[:, 0]
    )


@pytest.mark.parametrize("units", ["std", "relative", "absolute"])
def test_units_of_the_shift(units):
    rng = np.random.default_rng(4)
    X, y = _healthy_and_damaged(rng, n_damaged=0)
    shift = {"std": [-2.0, 1.0], "relative": -0.03, "absolute": [0.1, -0.2]}[units]
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1], class_priors={1: {"shift": shift, "units": units}}
        ),
        X,
        y,
    )
    mean, _, dof, scale = _broad_posterior(X, np.zeros(2), 1.0, 2.0, np.eye(2))
    std = np.sqrt(np.diag(scale / (dof + 4)))
    step = {
        "std": np.multiply(shift, std),
        "relative": np.multiply(shift, np.abs(mean)),
        "absolute": np.array(shift),
    }[units]
    np.testing.assert_allclose(model.directed_mean_prior_[1], mean + step)


def test_partial_fit_equals_fit_and_follows_the_reference():
    rng = np.random.default_rng(5)
    X, y = _healthy_and_damaged(rng, n_damaged=5)
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    params = {"class_priors": {1: {"shift": -3.0, "reference": 0}}}
    full = BayesianGMMClassifier(**params).fit(X, y)
    stream = BayesianGMMClassifier(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        for i in range(len(X)):
            stream.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    for name in ("means_", "covariances_", "directed_prior_weight_"):
        np.testing.assert_allclose(
            getattr(stream, name), getattr(full, name), rtol=1e-9, atol=1e-12
        )
    X_test = rng.normal(size=(20, 2)) + np.array([1.0, 2.0])
    np.testing.assert_allclose(
        stream.predict_log_proba(X_test), full.predict_log_proba(X_test), atol=1e-9
    )
    assert stream.unlabelled_classes_.size == 0


def test_reference_defaults_to_the_most_labelled_undirected_class():
    rng = np.random.default_rng(6)
    X, y = _healthy_and_damaged(rng, n_damaged=3)
    X = np.vstack([X, X[:2] + 5.0])
    y = np.r_[y, [2, 2]]
    implicit = BayesianGMMClassifier(class_priors={1: {"shift": -1.0}}).fit(X, y)
    explicit = BayesianGMMClassifier(
        class_priors={1: {"shift": -1.0, "reference": 0}}
    ).fit(X, y)
    np.testing.assert_array_equal(
        implicit.directed_mean_prior_[1], explicit.directed_mean_prior_[1]
    )


def test_no_class_priors_is_todays_model():
    rng = np.random.default_rng(7)
    X, y = _healthy_and_damaged(rng, n_damaged=5)
    a = BayesianGMMClassifier().fit(X, y)
    b = BayesianGMMClassifier(class_priors={}, weight_concentration_prior=[1, 1]).fit(
        X, y
    )
    X_test = rng.normal(size=(10, 2))
    np.testing.assert_array_equal(
        a.predict_log_proba(X_test), b.predict_log_proba(X_test)
    )
    np.testing.assert_array_equal(a.directed_prior_weight_, [0.0, 0.0])


# ---------------------------------------------------------------------- #
# robustness to a wrong statement
# ---------------------------------------------------------------------- #
def _degradation_stream(seed):
    """150 healthy steps, then damage growing from 0.5 to 6 healthy std."""
    rng = np.random.default_rng(seed)
    std, centre = np.array([0.5, 0.3]), np.array([1.0, 2.0])
    healthy = rng.normal(size=(150, 2)) * std + centre
    size = np.linspace(0.5, 6.0, 40)[:, None]
    damaged = rng.normal(size=(40, 2)) * std + centre - size * std
    return np.vstack([healthy, damaged]), np.r_[np.ones(150, int), np.full(40, 4)]


def _steps_to_detection(class_priors, seed):
    """Healthy-only commissioning, then the EVPI rule on the stream.

    Returns the number of damaged steps before the first one inspected or
    repaired (``None``: never), and the inspections of healthy steps.
    """
    X, y = _degradation_stream(seed)
    process = synthetic_decision_process()
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[1, 4],
            mean_prior="data",
            covariance_prior="data",
            class_priors=class_priors,
        ),
        X[:50],
        y[:50],
    )
    false_alarms = 0
    for t in range(50, len(X)):
        proba = np.zeros((1, 4))
        proba[:, [0, 3]] = model.predict_proba(X[t : t + 1])
        inspect = process.evpi(proba)[0] > process.inspection_cost
        repair = process.optimal_action(proba)[0] == 1
        if y[t] == 4 and (inspect or repair):
            return t - 150, false_alarms
        if inspect:
            false_alarms += 1
            model.partial_fit(X[t : t + 1], y[t : t + 1])
    return None, false_alarms


@pytest.mark.parametrize(
    "shift",
    [-3.0, 3.0, -1.5, -6.0],
    ids=["right", "wrong-direction", "half-size", "double-size"],
)
def test_a_wrong_statement_does_not_hide_the_state(shift):
    """Damage 3 std down on average; the statement is right, reversed, 0.5x, 2x.

    Every run still finds the damage (by inspecting it, or by a belief that
    repairs), as today's default does; a right statement finds it no later.
    """
    seeds = range(10)
    today = [_steps_to_detection(None, seed)[0] for seed in seeds]
    stated = [_steps_to_detection({4: {"shift": shift}}, seed)[0] for seed in seeds]
    assert None not in today
    assert None not in stated
    if shift in (-3.0, -1.5):
        assert np.median(stated) <= np.median(today)


def test_a_wrong_statement_costs_at_most_the_defensive_weight():
    """The class density never falls below (1 - weight) times the broad one."""
    rng = np.random.default_rng(8)
    X, y = _healthy_and_damaged(rng, n_damaged=0)
    X_test = rng.normal(size=(200, 2)) * 3.0
    broad = _fit_quietly(BayesianGMMClassifier(classes=[0, 1]), X, y)
    for shift in (-3.0, 3.0, 0.0, 10.0):
        directed = _fit_quietly(
            BayesianGMMClassifier(
                classes=[0, 1], class_priors={1: {"shift": shift, "weight": 0.8}}
            ),
            X,
            y,
        )
        loss = (
            broad.class_log_density(X_test)[:, 1]
            - directed.class_log_density(X_test)[:, 1]
        )
        assert loss.max() <= -np.log(0.2) + 1e-12


# ---------------------------------------------------------------------- #
# class weights and the warning
# ---------------------------------------------------------------------- #
def test_per_class_concentration():
    rng = np.random.default_rng(9)
    X, y = _healthy_and_damaged(rng, n_damaged=0)
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1, 2], weight_concentration_prior={1: 0.2, 2: 0.05}
        ),
        X,
        y,
    )
    np.testing.assert_allclose(model.weight_concentration_, [41.0, 0.2, 0.05])
    joint = model.predict_joint_log_proba(X[:3]) - model.class_log_density(X[:3])
    np.testing.assert_allclose(joint, np.log([[41.0, 0.2, 0.05]] * 3) - np.log(41.25))
    same = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1, 2], weight_concentration_prior=[1, 0.2, 0.05]
        ),
        X,
        y,
    )
    np.testing.assert_array_equal(
        same.weight_concentration_, model.weight_concentration_
    )


def test_process_weight_concentration():
    process = synthetic_decision_process()
    alpha = process_weight_concentration(process, horizon=3, min_concentration=0.01)
    transition = np.asarray(process.transition)[0]
    state = np.eye(4)[0]
    occupancy = np.zeros(4)
    for _ in range(3):
        state = state @ transition
        occupancy += state / 3
    np.testing.assert_allclose(list(alpha.values()), np.maximum(4 * occupancy, 0.01))
    assert list(alpha) == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="horizon"):
        process_weight_concentration(process, horizon=0)


def test_warning_names_the_unlabelled_classes_and_what_they_rest_on():
    rng = np.random.default_rng(10)
    X, y = _healthy_and_damaged(rng, n_damaged=0)
    model = BayesianGMMClassifier(classes=[0, 1, 2], class_priors={2: {"shift": -3.0}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    found = [w for w in caught if w.category is UnlabelledClassesWarning]
    assert len(found) == 1
    message = str(found[0].message)
    assert "[1, 2]" in message
    assert "[1] rests on the broad prior alone" in message
    assert "[2] rests on the directed prior of class_priors (shift -3" in message
    assert "weight 0.1" in message
    recorded = [type(w) for w in model.fit_warnings_]
    assert recorded.count(UnlabelledClassesWarning) == 1
    np.testing.assert_array_equal(model.unlabelled_classes_, [1, 2])
    model.partial_fit(X[:1] - 2.0, [2])
    np.testing.assert_array_equal(model.unlabelled_classes_, [1])
    model.partial_fit(X[:1] - 2.0, [1])
    assert model.unlabelled_classes_.size == 0


def test_no_warning_when_every_class_is_labelled():
    rng = np.random.default_rng(11)
    X, y = _healthy_and_damaged(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabelledClassesWarning)
        model = BayesianGMMClassifier().fit(X, y)
    assert model.unlabelled_classes_.size == 0


@pytest.mark.parametrize(
    "class_priors, message",
    [
        ({5: {"shift": 1.0}}, "not one of the classes"),
        ({1: 1.0}, "must be a dict"),
        ({1: {"shift": 1.0, "size": 2}}, "unknown key"),
        ({1: {"units": "std"}}, "must give a 'shift'"),
        ({1: {"shift": [1.0, 2.0, 3.0]}}, "shape"),
        ({1: {"shift": 1.0, "units": "percent"}}, "units"),
        ({1: {"shift": 1.0, "weight": 1.0}}, "strictly between 0 and 1"),
        ({1: {"shift": 1.0, "reference": 1}}, "another class"),
        ({0: {"shift": 1.0}, 1: {"shift": 1.0}}, "every class"),
        ({1: {"shift": 1.0, "mean_precision": -1.0}}, "positive"),
        ({1: {"shift": 1.0, "degrees_of_freedom": 0.5}}, "n_features - 1"),
        ({1: {"shift": 1.0, "statement": 1.5}}, "must be a name"),
    ],
)
def test_invalid_class_priors_are_named(class_priors, message):
    rng = np.random.default_rng(12)
    X, y = _healthy_and_damaged(rng)
    with pytest.raises(ValueError, match=message):
        BayesianGMMClassifier(class_priors=class_priors).fit(X, y)


def test_invalid_concentrations_are_named():
    rng = np.random.default_rng(13)
    X, y = _healthy_and_damaged(rng)
    with pytest.raises(ValueError, match="shape"):
        BayesianGMMClassifier(weight_concentration_prior=[1.0, 1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="positive"):
        BayesianGMMClassifier(weight_concentration_prior={1: 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=">= 1"):
        SemiSupervisedGMMClassifier(weight_concentration_prior=[1.0, 0.5]).fit(X, y)


# ---------------------------------------------------------------------- #
# the semi-supervised classifier
# ---------------------------------------------------------------------- #
def test_semi_supervised_without_unlabelled_samples_is_the_supervised_model():
    rng = np.random.default_rng(14)
    X, y = _healthy_and_damaged(rng, n_damaged=3)
    params = {
        "class_priors": {1: {"shift": -3.0}},
        "weight_concentration_prior": [1, 2],
    }
    semi = SemiSupervisedGMMClassifier(**params).fit(X, y)
    supervised = BayesianGMMClassifier(**params).fit(X, y)
    X_test = rng.normal(size=(10, 2)) + np.array([1.0, 2.0])
    np.testing.assert_allclose(
        semi.predict_log_proba(X_test), supervised.predict_log_proba(X_test), atol=1e-12
    )


def test_semi_supervised_em_never_decreases_with_a_directed_prior():
    rng = np.random.default_rng(15)
    X, y = _healthy_and_damaged(rng, n_healthy=60, n_damaged=40)
    y_semi = np.where(np.arange(len(X)) < 30, y, -1)
    model = _fit_quietly(
        SemiSupervisedGMMClassifier(
            classes=[0, 1], class_priors={1: {"shift": -3.0}}, tol=1e-10
        ),
        X,
        y_semi,
    )
    trace = np.array(model.lower_bound_trace_)
    assert np.all(np.diff(trace) >= -1e-10)
    assert model.converged_
    # EM finds the damaged cluster without one label of it.
    assert (model.transduction_[y == 1] == 1).mean() >= 0.85
    np.testing.assert_array_equal(model.unlabelled_classes_, [1])
    assert any(isinstance(w, UnlabelledClassesWarning) for w in model.fit_warnings_)


# ---------------------------------------------------------------------- #
# one statement about several classes
# ---------------------------------------------------------------------- #
def _two_damage_states(rng):
    """A healthy class and two damaged ones further down the same direction."""
    X, y = _healthy_and_damaged(rng, n_damaged=4, shift=-2.0)
    severe = rng.normal(size=(2, 2)) * [0.5, 0.3] + [1.0, 2.0]
    severe += -4.0 * np.array([0.5, 0.3])
    return np.vstack([X, severe]), np.r_[y, [2, 2]]


def test_one_statement_is_tested_by_the_labels_of_all_its_classes():
    rng = np.random.default_rng(16)
    X, y = _two_damage_states(rng)
    statement = {
        1: {"shift": -2.0, "weight": 0.3, "statement": "down"},
        2: {"shift": -4.0, "weight": 0.3, "statement": "down"},
    }
    model = BayesianGMMClassifier(class_priors=statement).fit(X, y)
    broad = (np.zeros(2), 1.0, 2.0, np.eye(2))
    log_b, log_d = np.log(0.7), np.log(0.3)
    for k, shift in ((1, -2.0), (2, -4.0)):
        directed = _directed_hyper(X[y == 0], broad, shift)
        log_b += _sequential_log_marginal(X[y == k], broad)
        log_d += _sequential_log_marginal(X[y == k], directed)
    expected = np.exp(log_d - np.logaddexp(log_b, log_d))
    np.testing.assert_allclose(
        model.directed_prior_weight_, [0.0, expected, expected], rtol=1e-8
    )
    # The labels of class 1 alone move the weight of class 2, unlabelled.
    alone = _fit_quietly(
        BayesianGMMClassifier(classes=[0, 1, 2], class_priors=statement),
        X[y < 2],
        y[y < 2],
    )
    assert alone.directed_prior_weight_[2] > 0.9
    np.testing.assert_allclose(
        alone.directed_prior_weight_[2], alone.directed_prior_weight_[1], rtol=1e-12
    )


@pytest.mark.parametrize("names", [(None, None), ("down", "up")])
def test_entries_of_different_statements_are_weighed_apart(names):
    rng = np.random.default_rng(17)
    X, y = _two_damage_states(rng)
    specs = [{"shift": -2.0, "weight": 0.3}, {"shift": -4.0, "weight": 0.3}]
    for spec, name in zip(specs, names):
        if name is not None:
            spec["statement"] = name
    model = _fit_quietly(
        BayesianGMMClassifier(
            classes=[0, 1, 2], class_priors={1: specs[0], 2: specs[1]}
        ),
        X[y < 2],
        y[y < 2],
    )
    np.testing.assert_allclose(model.directed_prior_weight_[2], 0.3, rtol=1e-12)
    assert model.directed_prior_weight_[1] > 0.5


def test_one_statement_partial_fit_equals_fit():
    rng = np.random.default_rng(18)
    X, y = _two_damage_states(rng)
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    params = {
        "class_priors": {
            1: {"shift": -2.0, "reference": 0, "statement": 1},
            2: {"shift": -4.0, "reference": 0, "statement": 1},
        }
    }
    full = BayesianGMMClassifier(**params).fit(X, y)
    stream = BayesianGMMClassifier(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        for i in range(len(X)):
            stream.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1, 2])
    for name in ("means_", "covariances_", "directed_prior_weight_"):
        np.testing.assert_allclose(
            getattr(stream, name), getattr(full, name), rtol=1e-9, atol=1e-12
        )
    X_test = rng.normal(size=(20, 2)) + np.array([1.0, 2.0])
    np.testing.assert_allclose(
        stream.predict_log_proba(X_test), full.predict_log_proba(X_test), atol=1e-9
    )


def test_semi_supervised_em_never_decreases_with_one_statement_for_two_classes():
    rng = np.random.default_rng(19)
    X, y = _two_damage_states(rng)
    extra_X, extra_y = _two_damage_states(np.random.default_rng(20))
    X, y = np.vstack([X, extra_X]), np.r_[y, extra_y]
    y_semi = np.where(np.arange(len(X)) < 30, y, -1)
    model = _fit_quietly(
        SemiSupervisedGMMClassifier(
            classes=[0, 1, 2],
            class_priors={
                1: {"shift": -2.0, "statement": "down"},
                2: {"shift": -4.0, "statement": "down"},
            },
            tol=1e-10,
        ),
        X,
        y_semi,
    )
    trace = np.array(model.lower_bound_trace_)
    assert np.all(np.diff(trace) >= -1e-10)
    np.testing.assert_allclose(
        model.directed_prior_weight_[1], model.directed_prior_weight_[2], rtol=1e-12
    )


def test_one_statement_has_one_weight():
    rng = np.random.default_rng(21)
    X, y = _two_damage_states(rng)
    with pytest.raises(ValueError, match="different weights"):
        BayesianGMMClassifier(
            class_priors={
                1: {"shift": -2.0, "statement": "down"},
                2: {"shift": -4.0, "statement": "down", "weight": 0.5},
            }
        ).fit(X, y)
