"""Tests of the supervised Bayesian Gaussian-mixture classifier."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skrbal.mixture import BayesianGMMClassifier

TOL = 1e-10


def _blobs(rng, n=60, n_features=2, n_classes=3, spread=4.0):
    centres = rng.normal(scale=spread, size=(n_classes, n_features))
    y = np.arange(n) % n_classes
    X = centres[y] + rng.normal(size=(n, n_features))
    return X, y


def _student_t(clf, k):
    """The class-``k`` posterior predictive as a scipy distribution."""
    d = clf.n_features_in_
    kappa = clf.mean_precision_posterior_[k]
    df = clf.degrees_of_freedom_posterior_[k] - d + 1
    shape = (kappa + 1) / (kappa * df) * clf.covariance_posterior_[k]
    return stats.multivariate_t(loc=clf.mean_posterior_[k], shape=shape, df=df)


def _assert_same_model(a, b, tol=TOL):
    np.testing.assert_array_equal(a.classes_, b.classes_)
    for name in (
        "class_count_",
        "mean_posterior_",
        "mean_precision_posterior_",
        "degrees_of_freedom_posterior_",
        "covariance_posterior_",
        "weight_concentration_",
        "means_",
        "covariances_",
    ):
        np.testing.assert_allclose(
            getattr(a, name), getattr(b, name), rtol=tol, atol=tol, err_msg=name
        )


# ---------------------------------------------------------------------- #
# the maths
# ---------------------------------------------------------------------- #
def test_posterior_matches_textbook_update():
    rng = np.random.default_rng(0)
    X, y = _blobs(rng, n=45, n_features=3)
    m0, k0, v0 = np.array([0.5, -1.0, 2.0]), 2.5, 5.0
    S0 = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]])
    clf = BayesianGMMClassifier(
        mean_prior=m0,
        mean_precision_prior=k0,
        degrees_of_freedom_prior=v0,
        covariance_prior=S0,
        weight_concentration_prior=0.7,
    ).fit(X, y)
    for k in range(3):
        Xk = X[y == k]
        n = len(Xk)
        kn = k0 + n
        mn = (k0 * m0 + Xk.sum(0)) / kn
        Sn = S0 + Xk.T @ Xk + k0 * np.outer(m0, m0) - kn * np.outer(mn, mn)
        np.testing.assert_allclose(clf.mean_posterior_[k], mn, rtol=TOL)
        np.testing.assert_allclose(clf.mean_precision_posterior_[k], kn, rtol=TOL)
        np.testing.assert_allclose(clf.degrees_of_freedom_posterior_[k], v0 + n)
        np.testing.assert_allclose(clf.covariance_posterior_[k], Sn, rtol=1e-9)
        np.testing.assert_allclose(clf.means_[k], mn, rtol=TOL)
        np.testing.assert_allclose(clf.covariances_[k], Sn / (v0 + n + 3 + 2))
    np.testing.assert_allclose(clf.weight_concentration_, 0.7 + np.array([15] * 3))
    np.testing.assert_array_equal(clf.class_count_, [15.0, 15.0, 15.0])


def test_class_density_is_the_student_t_predictive():
    rng = np.random.default_rng(1)
    X, y = _blobs(rng, n=40, n_features=3, n_classes=2)
    clf = BayesianGMMClassifier(covariance_prior=0.5).fit(X, y)
    X_test = rng.normal(scale=5.0, size=(25, 3))
    expected = np.column_stack([_student_t(clf, k).logpdf(X_test) for k in (0, 1)])
    np.testing.assert_allclose(
        clf.class_log_density(X_test), expected, rtol=TOL, atol=TOL
    )


def test_predict_proba_is_bayes_rule():
    rng = np.random.default_rng(2)
    X, y = _blobs(rng, n=31, n_classes=3)  # unequal class counts 11, 10, 10
    alpha = 2.0
    clf = BayesianGMMClassifier(weight_concentration_prior=alpha).fit(X, y)
    X_test = rng.normal(scale=4.0, size=(20, 2))
    counts = np.bincount(y)
    prior = (counts + alpha) / (counts.sum() + 3 * alpha)
    joint = np.column_stack(
        [_student_t(clf, k).pdf(X_test) * prior[k] for k in range(3)]
    )
    expected = joint / joint.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(X_test), expected, rtol=1e-9)
    np.testing.assert_allclose(
        clf.predict_joint_log_proba(X_test), np.log(joint), rtol=TOL
    )
    np.testing.assert_allclose(
        clf.predict_log_proba(X_test), np.log(expected), rtol=1e-9, atol=TOL
    )
    np.testing.assert_array_equal(clf.predict(X_test), expected.argmax(axis=1))


def test_empty_class_keeps_the_prior_predictive():
    m0, k0, v0, S0 = np.array([1.0, -1.0]), 0.5, 3.0, np.array([[2.0, 0.5], [0.5, 1]])
    clf = BayesianGMMClassifier(
        mean_prior=m0,
        mean_precision_prior=k0,
        degrees_of_freedom_prior=v0,
        covariance_prior=S0,
        classes=[1, 2, 3, 4],
    ).fit([[0.0, 0.0], [5.0, 5.0]], [1, 2])
    df = v0 - 2 + 1
    prior_t = stats.multivariate_t(loc=m0, shape=(k0 + 1) / (k0 * df) * S0, df=df)
    X_test = np.array([[0.0, 0.0], [3.0, -2.0], [100.0, 7.0]])
    density = clf.class_log_density(X_test)
    for k in (2, 3):
        np.testing.assert_allclose(density[:, k], prior_t.logpdf(X_test), rtol=TOL)
    # Class prior predictive (N_k + alpha) / (N + K alpha) with alpha = 1.
    np.testing.assert_allclose(
        np.exp(clf._log_class_prior), np.array([2, 2, 1, 1]) / 6.0, rtol=TOL
    )
    proba = clf.predict_proba(X_test)
    assert proba.shape == (3, 4)
    assert np.all(proba > 0)
    np.testing.assert_allclose(proba[:, 2], proba[:, 3], rtol=TOL)


# ---------------------------------------------------------------------- #
# incremental learning and weights
# ---------------------------------------------------------------------- #
def test_partial_fit_in_batches_equals_fit():
    rng = np.random.default_rng(3)
    X, y = _blobs(rng, n=90, n_features=3, n_classes=3, spread=50.0)
    X += 1e3  # far from the origin, where the uncentred update would lose digits
    full = BayesianGMMClassifier().fit(X, y)
    batched = BayesianGMMClassifier()
    for chunk in np.array_split(np.arange(len(X)), [7, 8, 40, 41, 70]):
        batched.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
    _assert_same_model(full, batched)
    X_test = X[:10] + rng.normal(size=(10, 3))
    np.testing.assert_allclose(
        batched.predict_proba(X_test), full.predict_proba(X_test), rtol=TOL, atol=TOL
    )


def test_partial_fit_one_sample_at_a_time_equals_fit():
    rng = np.random.default_rng(4)
    X, y = _blobs(rng, n=40, n_classes=4)
    weight = rng.uniform(0.1, 3.0, size=len(X))
    full = BayesianGMMClassifier().fit(X, y, sample_weight=weight)
    streamed = BayesianGMMClassifier(classes=[0, 1, 2, 3])
    for i in range(len(X)):
        streamed.partial_fit(
            X[i : i + 1], y[i : i + 1], sample_weight=weight[i : i + 1]
        )
    _assert_same_model(full, streamed)
    np.testing.assert_allclose(
        streamed.predict_proba(X), full.predict_proba(X), rtol=TOL, atol=TOL
    )


def test_partial_fit_accepts_lists_and_dataframes_like_fit():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [3.0, 3.0], [4.0, 3.5]])
    y = np.array(["a", "a", "b", "b"])
    full = BayesianGMMClassifier().fit(X, y)
    listed = BayesianGMMClassifier().partial_fit(
        X[:2].tolist(), list(y[:2]), ["a", "b"]
    )
    listed.partial_fit(X[2:].tolist(), list(y[2:]))
    _assert_same_model(full, listed)
    frame = pd.DataFrame(X, columns=["f0", "f1"])
    named = BayesianGMMClassifier().partial_fit(frame[:2], y[:2], ["a", "b"])
    named.partial_fit(frame[2:], y[2:])
    _assert_same_model(full, named)
    np.testing.assert_array_equal(named.feature_names_in_, ["f0", "f1"])


def test_sample_weight_two_equals_duplicated_rows():
    rng = np.random.default_rng(5)
    X, y = _blobs(rng, n=30)
    weight = np.ones(len(X))
    weight[::4] = 2.0
    weighted = BayesianGMMClassifier().fit(X, y, sample_weight=weight)
    repeat = np.repeat(np.arange(len(X)), weight.astype(int))
    duplicated = BayesianGMMClassifier().fit(X[repeat], y[repeat])
    _assert_same_model(weighted, duplicated)


def test_zero_weight_equals_removing_the_sample():
    rng = np.random.default_rng(6)
    X, y = _blobs(rng, n=30)
    weight = np.ones(len(X))
    weight[[1, 5, 9]] = 0.0
    keep = weight > 0
    _assert_same_model(
        BayesianGMMClassifier().fit(X, y, sample_weight=weight),
        BayesianGMMClassifier().fit(X[keep], y[keep]),
    )


def test_invariant_to_the_order_of_samples():
    rng = np.random.default_rng(7)
    X, y = _blobs(rng, n=50, n_features=3)
    order = rng.permutation(len(X))
    a = BayesianGMMClassifier().fit(X, y)
    b = BayesianGMMClassifier().fit(X[order], y[order])
    _assert_same_model(a, b)


def test_fit_resets_previous_partial_fit():
    rng = np.random.default_rng(8)
    X, y = _blobs(rng, n=30)
    clf = BayesianGMMClassifier().partial_fit(X + 10, y, classes=[0, 1, 2])
    clf.fit(X, y)
    _assert_same_model(clf, BayesianGMMClassifier().fit(X, y))


def test_many_single_sample_updates_predict_like_a_fit():
    rng = np.random.default_rng(13)
    X, y = _blobs(rng, n=600, n_classes=4)
    X_test = rng.normal(scale=6.0, size=(50, 2))
    full = BayesianGMMClassifier(classes=[0, 1, 2, 3]).fit(X, y)
    streamed = BayesianGMMClassifier(classes=[0, 1, 2, 3]).fit(X[:100], y[:100])
    for i in range(100, len(X)):
        streamed.partial_fit(X[i : i + 1], y[i : i + 1])
    _assert_same_model(full, streamed)
    np.testing.assert_allclose(
        streamed.predict_joint_log_proba(X_test),
        full.predict_joint_log_proba(X_test),
        rtol=TOL,
        atol=TOL,
    )
    np.testing.assert_array_equal(streamed.predict(X_test), full.predict(X_test))


def test_update_leaves_the_other_classes_untouched():
    rng = np.random.default_rng(14)
    X, y = _blobs(rng, n=40, n_classes=4)
    clf = BayesianGMMClassifier().fit(X, y)
    before = pickle.loads(pickle.dumps(clf))
    # Class 3 only has zero weight, so classes 0 and 3 must not move.
    clf.partial_fit(
        X[:6], np.array([1, 2, 1, 3, 2, 3]), sample_weight=[1, 1, 2, 0, 1, 0]
    )
    for name in ("mean_posterior_", "covariance_posterior_", "_t_whiteners"):
        for k in (0, 3):
            np.testing.assert_array_equal(
                getattr(clf, name)[k], getattr(before, name)[k], err_msg=name
            )
    np.testing.assert_array_equal(
        clf.class_count_ - before.class_count_, [0.0, 3.0, 2.0, 0.0]
    )
    weight = np.r_[np.ones(len(X)), 1, 1, 2, 0, 1, 0]
    expected = BayesianGMMClassifier().fit(
        np.vstack([X, X[:6]]), np.r_[y, 1, 2, 1, 3, 2, 3], sample_weight=weight
    )
    _assert_same_model(clf, expected)


@pytest.mark.parametrize(
    "params",
    [
        {"covariance_prior": 3.0},
        {"mean_prior": [1.0, -2.0], "mean_precision_prior": 0.2},
        {"degrees_of_freedom_prior": 7.0, "weight_concentration_prior": 0.5},
    ],
)
def test_set_params_between_partial_fits_applies_to_all_data(params):
    rng = np.random.default_rng(15)
    X, y = _blobs(rng, n=30)
    clf = BayesianGMMClassifier().partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    clf.set_params(**params)
    clf.partial_fit(X[20:21], y[20:21])
    clf.partial_fit(X[21:], y[21:])
    _assert_same_model(clf, BayesianGMMClassifier(**params).fit(X, y))


def test_prior_changed_in_place_is_taken_in():
    rng = np.random.default_rng(16)
    X, y = _blobs(rng, n=30)
    scale = np.eye(2)
    clf = BayesianGMMClassifier(covariance_prior=scale).fit(X[:20], y[:20])
    scale *= 4.0
    clf.partial_fit(X[20:21], y[20:21])  # one class, yet all take the new prior
    expected = BayesianGMMClassifier(covariance_prior=4.0).fit(X[:21], y[:21])
    _assert_same_model(clf, expected)


def test_invalid_or_incompatible_set_params_after_fit_are_rejected():
    rng = np.random.default_rng(17)
    X, y = _blobs(rng, n=30)
    clf = BayesianGMMClassifier(classes=[0, 1, 2]).fit(X, y)
    before = pickle.loads(pickle.dumps(clf))
    clf.set_params(mean_precision_prior=-1.0)
    with pytest.raises(ValueError, match="mean_precision_prior"):
        clf.partial_fit(X[:1], y[:1])
    clf.set_params(mean_precision_prior=1.0, mean_prior=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"mean_prior must have shape \(2,\)"):
        clf.partial_fit(X[:1], y[:1])
    clf.set_params(mean_prior=None, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="call fit to start again"):
        clf.partial_fit(X[:1], y[:1])
    _assert_same_model(clf, before, tol=0)
    clf.set_params(classes=[2, 1, 0])  # the same set, so compatible
    clf.partial_fit(X[:1], y[:1])
    expected = BayesianGMMClassifier().fit(np.vstack([X, X[:1]]), np.r_[y, y[:1]])
    _assert_same_model(clf, expected)


def test_partial_fit_list_input_is_validated():
    clf = BayesianGMMClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit([[np.nan, 0.0]], [0])
    with pytest.raises(ValueError, match="3 features"):
        clf.partial_fit([[0.0, 1.0, 2.0]], [0])
    with pytest.raises(ValueError, match="inhomogeneous"):
        clf.partial_fit([[0.0, 1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match=r"label\(s\) \['a'\] not in classes"):
        clf.partial_fit([[0.0, 1.0]], ["a"])
    _assert_same_model(
        clf, BayesianGMMClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1]), tol=0
    )


# ---------------------------------------------------------------------- #
# labels
# ---------------------------------------------------------------------- #
def test_string_labels():
    rng = np.random.default_rng(9)
    X, y = _blobs(rng, n=30)
    names = np.array(["healthy", "cracked", "broken"])[y]
    clf = BayesianGMMClassifier().fit(X, names)
    np.testing.assert_array_equal(clf.classes_, ["broken", "cracked", "healthy"])
    numeric = BayesianGMMClassifier().fit(X, y)
    order = [2, 1, 0]  # "broken" is label 2, ...
    np.testing.assert_allclose(
        clf.predict_proba(X), numeric.predict_proba(X)[:, order], rtol=TOL
    )
    assert set(clf.predict(X)) <= set(names)


def test_classes_parameter_gives_every_column():
    X = np.array([[0.0, 0.0], [0.2, -0.1], [4.0, 4.0]])
    clf = BayesianGMMClassifier(classes=[4, 3, 2, 1]).fit(X, [1, 1, 3])
    np.testing.assert_array_equal(clf.classes_, [1, 2, 3, 4])
    assert clf.predict_proba(X).shape == (3, 4)
    np.testing.assert_array_equal(clf.class_count_, [2.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(clf.predict(X[:1]), [1])


def test_unknown_label_is_named():
    with pytest.raises(ValueError, match=r"label\(s\) \[7\] not in classes"):
        BayesianGMMClassifier(classes=[1, 2]).fit([[0.0], [1.0]], [1, 7])
    clf = BayesianGMMClassifier().partial_fit([[0.0], [1.0]], [1, 2], classes=[1, 2])
    with pytest.raises(ValueError, match=r"label\(s\) \[5\] not in classes"):
        clf.partial_fit(np.array([[3.0]]), np.array([5]))


def test_rejected_first_partial_fit_leaves_the_model_unfitted():
    clf = BayesianGMMClassifier()
    with pytest.raises(ValueError, match=r"label\(s\) \[9\] not in classes"):
        clf.partial_fit([[0.0], [1.0]], [0, 9], classes=[0, 1])
    assert not hasattr(clf, "classes_")
    clf.partial_fit([[0.0], [1.0]], [0, 1], classes=[0, 1])
    _assert_same_model(clf, BayesianGMMClassifier().fit([[0.0], [1.0]], [0, 1]))


def test_partial_fit_classes_errors():
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        BayesianGMMClassifier().partial_fit([[0.0]], [0])
    clf = BayesianGMMClassifier().partial_fit([[0.0]], [0], classes=[0, 1])
    with pytest.raises(ValueError, match="differs from classes_"):
        clf.partial_fit([[0.0]], [0], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="differs from the classes parameter"):
        BayesianGMMClassifier(classes=[0, 1]).partial_fit([[0.0]], [0], classes=[0, 2])


# ---------------------------------------------------------------------- #
# integration
# ---------------------------------------------------------------------- #
def test_pipeline_with_scaler():
    rng = np.random.default_rng(10)
    X, y = _blobs(rng, n=90, spread=6.0)
    X = X * [1e4, 1e-3]
    pipe = make_pipeline(StandardScaler(), BayesianGMMClassifier()).fit(X, y)
    assert pipe.score(X, y) > 0.9
    assert pipe.predict_proba(X).shape == (90, 3)


def test_pickle_round_trip():
    rng = np.random.default_rng(11)
    X, y = _blobs(rng)
    clf = BayesianGMMClassifier(classes=[0, 1, 2, 3]).fit(X, y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict_proba(X), clf.predict_proba(X))
    clone.partial_fit(X[:3], y[:3])
    clf.partial_fit(X[:3], y[:3])
    _assert_same_model(clone, clf, tol=0)


def test_dataframe_records_feature_names():
    rng = np.random.default_rng(12)
    X, y = _blobs(rng)
    frame = pd.DataFrame(X, columns=["frequency", "damping"])
    clf = BayesianGMMClassifier().fit(frame, y)
    np.testing.assert_array_equal(clf.feature_names_in_, ["frequency", "damping"])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        from_array = clf.predict_proba(X)
    np.testing.assert_allclose(clf.predict_proba(frame), from_array)


# ---------------------------------------------------------------------- #
# errors
# ---------------------------------------------------------------------- #
def test_nan_is_rejected():
    clf = BayesianGMMClassifier()
    with pytest.raises(ValueError, match="NaN"):
        clf.fit([[0.0], [np.nan]], [0, 1])
    clf.fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        clf.predict_proba([[np.nan]])
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(np.array([[np.nan]]), np.array([0]))


def test_wrong_number_of_features():
    clf = BayesianGMMClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="3 features"):
        clf.predict_proba([[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="3 features"):
        clf.partial_fit(np.zeros((1, 3)), np.array([0]))


def test_negative_sample_weight():
    with pytest.raises(ValueError, match="Negative values in data passed to"):
        BayesianGMMClassifier().fit([[0.0], [1.0]], [0, 1], sample_weight=[1.0, -1.0])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"covariance_prior": [[1.0, 2.0], [2.0, 1.0]]}, "positive definite"),
        ({"covariance_prior": [[1.0, 0.5], [0.0, 1.0]]}, "must be symmetric"),
        ({"covariance_prior": np.eye(3)}, r"shape \(2, 2\)"),
        ({"covariance_prior": [[np.inf, 0.0], [0.0, 1.0]]}, "must be finite"),
        ({"mean_prior": [0.0, 0.0, 0.0]}, r"mean_prior must have shape \(2,\)"),
        ({"degrees_of_freedom_prior": 0.5}, "greater than n_features - 1 = 1"),
        ({"mean_precision_prior": 0.0}, "mean_precision_prior"),
        ({"weight_concentration_prior": -1.0}, "weight_concentration_prior"),
    ],
)
def test_invalid_priors_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        BayesianGMMClassifier(**params).fit([[0.0, 0.0], [1.0, 1.0]], [0, 1])


def test_continuous_targets_rejected():
    with pytest.raises(ValueError, match="Unknown label type"):
        BayesianGMMClassifier().fit([[0.0], [1.0]], [0.5, 1.5])


# ---------------------------------------------------------------------- #
# properties
# ---------------------------------------------------------------------- #
@settings(max_examples=examples(40), deadline=None)
@given(
    X=arrays(
        np.float64,
        st.tuples(st.integers(2, 12), st.just(2)),
        elements=st.floats(-10, 10, allow_nan=False),
    ),
    X_test=arrays(
        np.float64,
        st.tuples(st.integers(1, 8), st.just(2)),
        elements=st.floats(-1e3, 1e3, allow_nan=False),
    ),
    seed=st.integers(0, 2**16),
)
def test_predict_proba_is_a_distribution(X, X_test, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=len(X))
    clf = BayesianGMMClassifier(classes=[0, 1, 2]).fit(X, y)
    far = X_test + np.array([1e3, -1e3])  # points 1e3 away from everything
    for points in (X_test, far, X):
        proba = clf.predict_proba(points)
        assert np.isfinite(proba).all()
        assert np.all((proba >= 0) & (proba <= 1))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        log_proba = clf.predict_log_proba(points)
        assert np.isfinite(log_proba).all()
        np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------- #
# numbers at the edge of double precision
# ---------------------------------------------------------------------- #
def _tail_log_joint(clf, direction, log_t):
    """``log p(x, y=k)`` of ``x = t u`` as ``t -> inf``, from the fitted posterior.

    The Student-t log density tends to ``log_norm - (df + d) / 2 (2 log t +
    log(u' P u) - log df)`` with ``P`` the inverse predictive scale; the
    neglected terms are ``O(1 / t)``.
    """
    d = clf.n_features_in_
    out = []
    for k in range(len(clf.classes_)):
        dist = _student_t(clf, k)
        df = dist.df
        quad = direction @ np.linalg.solve(dist.shape, direction)
        log_norm = dist.logpdf(dist.loc) if d else 0.0
        log_prior = np.log(clf.weight_concentration_[k]) - np.log(
            clf.weight_concentration_.sum()
        )
        out.append(
            log_prior + log_norm - 0.5 * (df + d) * (2 * log_t + np.log(quad / df))
        )
    return np.array(out)


@pytest.mark.parametrize("log10_t", [155, 200, 300])
def test_far_points_get_finite_correct_probabilities(log10_t):
    rng = np.random.default_rng(0)
    # Classes of very different sizes: the tails (degrees of freedom) differ.
    X = np.vstack([rng.normal(-2, 1, (5, 2)), rng.normal(2, 1, (60, 2))])
    y = np.repeat([0, 1], [5, 60])
    clf = BayesianGMMClassifier(classes=[0, 1, 2]).fit(X, y)
    direction = np.array([0.6, -0.8])
    x = 10.0**log10_t * direction
    log_proba = clf.predict_log_proba(x[None])[0]
    proba = clf.predict_proba(x[None])[0]
    assert np.isfinite(log_proba).all() and np.isfinite(proba).all()
    expected = _tail_log_joint(clf, direction, log10_t * np.log(10))
    expected -= np.logaddexp.reduce(expected)
    np.testing.assert_allclose(log_proba, expected, rtol=1e-9)
    np.testing.assert_allclose(proba, np.exp(expected), rtol=1e-9, atol=1e-300)
    assert clf.predict(x[None])[0] == clf.classes_[np.argmax(expected)]


def test_one_huge_training_sample_does_not_wipe_out_its_class():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-2, 1, (20, 2)), rng.normal(2, 1, (20, 2))])
    X[0] = [1e4, 0.0]
    y = np.repeat([0, 1], 20)
    X_test = rng.normal(0, 3, (30, 2))
    base = BayesianGMMClassifier().fit(X, y)
    # The NIW model is equivariant under X -> c X with S0 -> c^2 S0, so the
    # scaled model (a sample at 1e154, squares near the float limit) must
    # predict what the unscaled one does.
    scale = 1e150
    scaled = BayesianGMMClassifier(covariance_prior=scale**2).fit(X * scale, y)
    proba = scaled.predict_proba(X_test * scale)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba, base.predict_proba(X_test), rtol=1e-9)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_training_data_beyond_double_precision_is_named():
    # Named by one ValueError, without numpy overflow warnings on the way.
    X = np.array([[0.0, 0.0], [1e160, 0.0], [1.0, 1.0], [2.0, 1.0]])
    y = [0, 0, 1, 1]
    with pytest.raises(ValueError, match=r"overflows double precision.*rescale X"):
        BayesianGMMClassifier().fit(X, y)
    clf = BayesianGMMClassifier(classes=[0, 1]).fit(X[2:], y[2:])
    before = clf.predict_proba(X[2:])
    with pytest.raises(ValueError, match=r"overflows double precision.*rescale X"):
        clf.partial_fit(X[:2], y[:2])
    np.testing.assert_array_equal(clf.predict_proba(X[2:]), before)


@pytest.mark.parametrize("n_features", [1, 2, 3, 6])
def test_squared_mahalanobis_equals_the_per_class_formula(n_features):
    from skrbal.mixture._niw import _squared_mahalanobis

    rng = np.random.default_rng(n_features)
    X, y = _blobs(rng, n=200, n_features=n_features, n_classes=4)
    clf = BayesianGMMClassifier().fit(X, y)
    X_test = rng.normal(scale=5, size=(500, n_features)) + 1e3  # offset data
    got = _squared_mahalanobis(X_test, clf.mean_posterior_, clf._t_whiteners)
    for k, (mean, whitener) in enumerate(zip(clf.mean_posterior_, clf._t_whiteners)):
        z = (X_test - mean) @ whitener
        np.testing.assert_allclose(got[k], (z * z).sum(axis=1), rtol=1e-12)
    # Fortran-ordered and single-sample input take the same path.
    np.testing.assert_allclose(
        _squared_mahalanobis(
            np.asfortranarray(X_test), clf.mean_posterior_, clf._t_whiteners
        ),
        got,
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        clf.predict_proba(X_test[:1]), clf.predict_proba(X_test)[:1], rtol=1e-12
    )


# ---------------------------------------------------------------------- #
# the prior's scale (issue 13, section 2)
# ---------------------------------------------------------------------- #
def _raw_synthetic(n_per_class=4):
    from skrbal.datasets import make_degradation_stream

    X, y, _ = make_degradation_stream(random_state=0)
    idx = np.concatenate([np.flatnonzero(y == k)[:n_per_class] for k in (1, 2, 3, 4)])
    return X[idx], y[idx], X


def test_default_prior_on_raw_features_distorts_and_warns():
    from skrbal.exceptions import PriorScaleWarning

    X, y, _ = _raw_synthetic()
    with pytest.warns(PriorScaleWarning, match="feature 0") as caught:
        clf = BayesianGMMClassifier().fit(X, y)
    assert len([w for w in caught if w.category is PriorScaleWarning]) == 1
    # The paper's prior (mean 0, identity scale) drags the class at 19 to ~15
    # and inflates its first feature's variance tens of times.
    assert X[y == 4, 0].mean() > 19
    assert clf.means_[3, 0] < 15.5
    assert clf.covariances_[3, 0, 0] > 30 * X[y == 4, 0].var()
    assert [type(w) for w in clf.fit_warnings_] == [PriorScaleWarning]


def test_data_prior_is_the_paper_prior_on_standardised_features():
    X, y, X_all = _raw_synthetic()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = BayesianGMMClassifier(mean_prior="data", covariance_prior="data")
        clf.fit(X, y)
        scaled = make_pipeline(StandardScaler(), BayesianGMMClassifier()).fit(X, y)
    assert clf.fit_warnings_ == []
    np.testing.assert_allclose(clf.mean_prior_, X.mean(axis=0), rtol=TOL)
    np.testing.assert_allclose(clf.covariance_prior_, np.diag(X.var(axis=0)), rtol=TOL)
    np.testing.assert_allclose(
        clf.predict_proba(X_all), scaled.predict_proba(X_all), atol=1e-9
    )


def test_data_prior_does_not_depend_on_the_units():
    X, y, X_all = _raw_synthetic()
    params = {"mean_prior": "data", "covariance_prior": "data"}
    clf = BayesianGMMClassifier(**params).fit(X, y)
    milli = BayesianGMMClassifier(**params).fit(1e3 * X - 7.0, y)
    np.testing.assert_allclose(
        clf.predict_proba(X_all), milli.predict_proba(1e3 * X_all - 7.0), atol=1e-9
    )
    with pytest.warns(UserWarning, match="default prior"):
        paper = BayesianGMMClassifier().fit(1e3 * X - 7.0, y)
    assert not np.allclose(
        paper.predict_proba(1e3 * X_all - 7.0), clf.predict_proba(X_all), atol=0.1
    )


def test_data_prior_is_fixed_by_the_first_fit_and_kept_by_partial_fit():
    rng = np.random.default_rng(5)
    X, y = _blobs(rng, n=60)
    params = {"mean_prior": "data", "covariance_prior": "data", "classes": [0, 1, 2]}
    first = BayesianGMMClassifier(**params).partial_fit(X[:20], y[:20])
    streamed = first.partial_fit(X[20:40], y[20:40]).partial_fit(X[40:], y[40:])
    # The prior comes from the first call's data ...
    np.testing.assert_allclose(streamed.mean_prior_, X[:20].mean(axis=0), rtol=TOL)
    # ... so the stream equals fit on the union with that prior pinned ...
    pinned = BayesianGMMClassifier(
        mean_prior=streamed.mean_prior_,
        covariance_prior=streamed.covariance_prior_,
        classes=[0, 1, 2],
    ).fit(X, y)
    _assert_same_model(streamed, pinned)
    # ... and not fit on the union, whose prior is the union's.
    union = BayesianGMMClassifier(**params).fit(X, y)
    assert not np.allclose(union.mean_prior_, streamed.mean_prior_)
    # A parameter changed by set_params: the prior is derived again from all
    # the data seen before the call, as a fit on it followed by the update.
    streamed.set_params(mean_precision_prior=2.0).partial_fit(X[:1], y[:1])
    refit = BayesianGMMClassifier(**params, mean_precision_prior=2.0).fit(X, y)
    refit.partial_fit(X[:1], y[:1])
    np.testing.assert_allclose(streamed.mean_prior_, X.mean(axis=0), rtol=TOL)
    _assert_same_model(streamed, refit)


def test_data_prior_counts_sample_weights_as_repeats():
    rng = np.random.default_rng(6)
    X, y = _blobs(rng, n=30)
    params = {"mean_prior": "data", "covariance_prior": "data"}
    weight = np.where(np.arange(30) % 4 == 0, 2.0, 1.0)
    weighted = BayesianGMMClassifier(**params).fit(X, y, sample_weight=weight)
    repeat = np.repeat(np.arange(30), weight.astype(int))
    repeated = BayesianGMMClassifier(**params).fit(X[repeat], y[repeat])
    np.testing.assert_allclose(weighted.covariance_prior_, repeated.covariance_prior_)
    _assert_same_model(weighted, repeated)


def test_data_scale_of_a_constant_feature_is_an_error():
    X = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0]])
    with pytest.raises(ValueError, match=r"covariance_prior='data'.*\[1\]"):
        BayesianGMMClassifier(covariance_prior="data").fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="mean_prior"):
        BayesianGMMClassifier(mean_prior="mean").fit(X, [0, 1, 1])


def test_explicit_paper_prior_is_the_default_without_the_warning():
    X, y, X_all = _raw_synthetic()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explicit = BayesianGMMClassifier(mean_prior=0.0, covariance_prior=1.0)
        explicit.fit(X, y)
    with pytest.warns(UserWarning):
        default = BayesianGMMClassifier().fit(X, y)
    _assert_same_model(explicit, default, tol=0)
    assert explicit.fit_warnings_ == []
    # Standardised features are on the default prior's scale.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = make_pipeline(StandardScaler(), BayesianGMMClassifier())
        scaled.fit(X_all[:500], np.arange(500) % 2)


def test_semi_supervised_data_prior_uses_every_sample():
    from skrbal.mixture import SemiSupervisedGMMClassifier

    rng = np.random.default_rng(7)
    X, y = _blobs(rng, n=40)
    y_semi = np.where(np.arange(40) < 10, y, -1)
    clf = SemiSupervisedGMMClassifier(mean_prior="data", covariance_prior="data")
    clf.fit(X, y_semi)
    np.testing.assert_allclose(clf.mean_prior_, X.mean(axis=0), rtol=TOL)
    np.testing.assert_allclose(clf.covariance_prior_, np.diag(X.var(axis=0)), rtol=TOL)


def test_prediction_fast_path_keeps_validation():
    rng = np.random.default_rng(8)
    X, y = _blobs(rng, n=30)
    clf = BayesianGMMClassifier().fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), clf.predict_proba(X.tolist()))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.predict_proba(bad)
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(np.hstack([X, X]))
    with pytest.raises(ValueError, match="minimum of 1"):
        clf.predict_proba(X[:0])
    named = BayesianGMMClassifier().fit(pd.DataFrame(X, columns=["a", "b"]), y)
    with pytest.warns(UserWarning, match="feature names"):
        named.predict_proba(X)


def test_the_studies_pin_the_paper_prior_without_warning():
    from skrbal.experiments import get_method

    X, y, _ = _raw_synthetic()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        studied = get_method("gmm-evpi").estimator().fit(X, y)
    with pytest.warns(UserWarning, match="default prior"):
        default = BayesianGMMClassifier().fit(X, y)
    _assert_same_model(studied, default, tol=0)
