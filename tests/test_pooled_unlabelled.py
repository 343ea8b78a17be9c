"""PooledGMMClassifier with the structure's own unlabelled stream (``-1``)."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from skrbal import z24_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.exceptions import UnlabelledClassesWarning
from skrbal.mixture import FleetPrior, PooledGMMClassifier

CLASSES = [1, 2, 3]
SHIFTS = {1: [0.0, 0.0], 2: [-5.0, 0.0], 3: [0.0, -5.0]}


def _structure(rng, level, scale, n_healthy=60, n_damaged=4):
    parts, labels = [], []
    for label in CLASSES:
        n = n_healthy if label == 1 else n_damaged
        parts.append(
            level + scale * (np.asarray(SHIFTS[label]) + rng.normal(size=(n, 2)))
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


def _fit(estimator, X, y, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        return estimator.fit(X, y, **kwargs)


def _correlated(rng, n):
    """Healthy noise whose features move together: narrow across (1, -1)."""
    common, across = rng.normal(size=n), 0.1 * rng.normal(size=n)
    return np.c_[common + across, common - across]


def _narrow_healthy(rng, n, level=(10.0, 20.0)):
    """A healthy stream: seasons along (1, 1), narrow across them."""
    season = 3.0 * np.sin(np.linspace(0.0, 6.0, n))
    return np.asarray(level) + _correlated(rng, n) + np.c_[season, season]


def _commissioned(rng, n_stream=400):
    """Healthy labels of a few days (one season), then an unlabelled stream."""
    X = _narrow_healthy(rng, 50 + n_stream)
    X[:50] = np.array([10.0, 20.0]) + _correlated(rng, 50)
    y = np.r_[np.ones(50, dtype=int), -np.ones(n_stream, dtype=int)]
    return X, y


def test_unlabelled_samples_weigh_into_the_reference_class_by_responsibility(fleet):
    """Brute force: two passes of responsibilities from the labelled model,
    then the reference class fitted with the stream as weighted labels."""
    rng = np.random.RandomState(1)
    X_l, y_l = _structure(rng, np.array([7.0, 9.0]), 1.5, n_damaged=3)
    X_u = np.vstack(
        [
            _narrow_healthy(rng, 80, level=(7.0, 9.0)),
            [7.0, 9.0] + 1.5 * (np.asarray(SHIFTS[2]) + rng.normal(size=(5, 2))),
        ]
    )
    X = np.vstack([X_l, X_u])
    y = np.r_[y_l, -np.ones(len(X_u), dtype=int)]
    clf = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0), X, y
    )

    counts = np.bincount(np.searchsorted(CLASSES, y_l), minlength=3)
    log_prior = np.log(1.0 + counts) - np.log((1.0 + counts).sum())
    weights = np.zeros(len(X_u))  # pass 0: the labelled model
    for _ in range(2):
        model = _fit(
            PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0),
            np.vstack([X_l, X_u]),
            np.r_[y_l, np.ones(len(X_u), dtype=int)],
            sample_weight=np.r_[np.ones(len(X_l)), weights],
        )
        joint = model.class_log_density(X_u) + log_prior
        weights = np.exp(joint[:, 0] - logsumexp(joint, axis=1))
    reference = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0),
        np.vstack([X_l, X_u]),
        np.r_[y_l, np.ones(len(X_u), dtype=int)],
        sample_weight=np.r_[np.ones(len(X_l)), weights],
    )
    X_new = rng.normal([7.0, 9.0], 4.0, size=(25, 2))
    np.testing.assert_allclose(
        clf.class_log_density(X_new), reference.class_log_density(X_new), rtol=1e-9
    )
    np.testing.assert_allclose(clf.transfer_weight_, reference.transfer_weight_)
    assert clf.unlabelled_count_ == pytest.approx(weights.sum())
    # The labels alone set the class prior: the stream does not drown the
    # damage states' prior probability.
    np.testing.assert_array_equal(clf.class_count_, counts)
    # The damaged unlabelled samples get little healthy weight.
    assert np.median(weights[-5:]) < 0.05 and weights[:80].min() > 0.5


def test_partial_fit_equals_fit_with_unlabelled_steps(fleet):
    rng = np.random.RandomState(2)
    X, y = _commissioned(rng, n_stream=120)
    y[[70, 130]] = [2, 1]  # two inspections in the stream
    X[70] = [10.0 - 5 * 0.3, 20.0]
    whole = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0), X, y
    )
    parts = PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlabelledClassesWarning)
        parts.partial_fit(X[:55], y[:55])
    for start in range(55, X.shape[0], 7):
        parts.partial_fit(X[start : start + 7], y[start : start + 7])
    X_new = rng.normal([10.0, 20.0], 2.0, size=(20, 2))
    np.testing.assert_allclose(
        parts.predict_proba(X_new), whole.predict_proba(X_new), rtol=1e-9
    )
    np.testing.assert_allclose(parts.transfer_weight_, whole.transfer_weight_)
    assert parts.unlabelled_count_ == pytest.approx(whole.unlabelled_count_)


def test_the_own_narrow_healthy_spread_raises_the_belief_in_damage(fleet):
    """The failure the stream fixes: the fleet's healthy state is round and
    strong, so a damage across the structure's own narrow healthy direction
    looks healthy to the labels (a window of one season) and the fleet."""
    rng = np.random.RandomState(3)
    X, y = _commissioned(rng)
    labelled = y != -1
    damaged = np.array([[10.8, 19.2]])  # 8 own deviations across the seasons
    with_stream = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0), X, y
    )
    labels_only = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0),
        X[labelled],
        y[labelled],
    )
    assert with_stream.predict_proba(damaged)[0, 0] < 0.05
    assert labels_only.predict_proba(damaged)[0, 0] > 0.9
    # The stream outweighs the fleet's healthy state, and the seasons of the
    # healthy state stay healthy.
    assert with_stream.transfer_weight_[0] < 1e-6
    assert labels_only.transfer_weight_[0] == pytest.approx(0.9)
    seasonal = np.array([[13.0, 23.0], [7.0, 17.0]])
    assert (with_stream.predict_proba(seasonal)[:, 0] > 0.99).all()


def test_a_healthy_stream_unlike_the_fleets_falls_back_to_alone(fleet):
    """Negative transfer bound: a healthy state far narrower than the
    fleet's loses the fleet's weight and is then the structure's own (up to
    the damage states' share of the stream, which differs between the two)."""
    rng = np.random.RandomState(4)
    X = [10.0, 20.0] + 0.05 * rng.normal(size=(650, 2))
    X[:50] = np.array([10.0, 20.0]) + rng.normal(size=(50, 2))
    y = np.r_[np.ones(50, dtype=int), -np.ones(600, dtype=int)]
    shared = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0), X, y
    )
    alone = _fit(PooledGMMClassifier(classes=CLASSES, unlabelled_weight=1.0), X, y)
    assert shared.transfer_weight_[0] < 1e-6
    healthy = [10.0, 20.0] + 0.05 * rng.normal(size=(40, 2))
    np.testing.assert_allclose(
        shared.class_log_density(healthy)[:, 0],
        alone.class_log_density(healthy)[:, 0],
        atol=5e-3,
    )


def test_the_unlabelled_marker_is_checked(fleet):
    X, y = _commissioned(np.random.RandomState(5), n_stream=10)
    with pytest.raises(ValueError, match="string array holding '-1'"):
        PooledGMMClassifier().fit(X, y.astype(str))
    with pytest.raises(ValueError, match="must not contain -1"):
        PooledGMMClassifier(classes=[-1, 1]).fit(X, y)
    with pytest.raises(ValueError, match="no labelled sample"):
        PooledGMMClassifier().fit(X[50:], y[50:])
    # String labels with the integer marker in an object array.
    labels = np.where(y == 1, "healthy", "x").astype(object)
    labels[y == -1] = -1
    clf = _fit(PooledGMMClassifier(classes=["healthy", "damaged"]), X, labels)
    assert clf.unlabelled_count_ > 0
    assert clf.classes_.tolist() == ["damaged", "healthy"]


def test_the_learner_passes_its_unlabelled_steps(fleet):
    rng = np.random.RandomState(6)
    X, _ = _commissioned(rng, n_stream=150)
    y = np.ones(len(X), dtype=int)
    learner = RiskBasedLearner(
        estimator=PooledGMMClassifier(fleet=_z24(fleet)),
        process=z24_decision_process(),
        semi_supervised="em",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner.fit(X, y, initial=np.arange(50))
    assert learner.estimator_.unlabelled_count_ > 0


def _z24(fleet):
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


def test_unlabelled_weight_scales_the_stream_as_sample_weights(fleet):
    rng = np.random.RandomState(7)
    X, y = _commissioned(rng, n_stream=100)
    tempered = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=0.1), X, y
    )
    weighted = _fit(
        PooledGMMClassifier(fleet=fleet, classes=CLASSES, unlabelled_weight=1.0),
        X,
        y,
        sample_weight=np.where(y == -1, 0.1, 1.0),
    )
    X_new = rng.normal([10.0, 20.0], 2.0, size=(10, 2))
    np.testing.assert_allclose(
        tempered.predict_proba(X_new), weighted.predict_proba(X_new), rtol=1e-12
    )
    assert tempered.unlabelled_count_ < 10.0 + 1e-9
