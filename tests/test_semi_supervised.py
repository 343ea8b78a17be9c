"""Tests of the semi-supervised (MAP-EM) Bayesian Gaussian-mixture classifier."""

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier


def _two_clusters(rng, n_unlabelled=400, separation=4.0, n_labelled_per_class=2):
    centres = np.array([[-separation / 2, 0.0], [separation / 2, 0.5]])
    n_per_class = n_labelled_per_class + n_unlabelled // 2
    truth = np.repeat([0, 1], n_per_class)
    X = centres[truth] + rng.normal(size=(len(truth), 2))
    y = np.full(len(truth), -1)
    labelled = np.concatenate(
        [np.arange(n_labelled_per_class), n_per_class + np.arange(n_labelled_per_class)]
    )
    y[labelled] = truth[labelled]
    return X, y, truth, centres


def _overlapping_problem(seed, n=120, n_classes=3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(n_classes, 2))
    truth = rng.integers(0, n_classes, size=n)
    X = centres[truth] + rng.normal(size=(n, 2)) * rng.uniform(0.5, 1.5, (1, 2))
    y = np.where(rng.random(n) < 0.1, truth, -1)
    y[:n_classes] = np.arange(n_classes)  # every class labelled at least once
    return X, y


def _map_objective(clf, X, y):
    """``log p(X_l, y_l, X_u | theta) + log p(theta)`` with scipy densities."""
    K, d = clf.means_.shape
    log_weights = np.log(clf.weights_)
    log_joint = np.column_stack(
        [
            stats.multivariate_normal(clf.means_[k], clf.covariances_[k]).logpdf(X)
            + log_weights[k]
            for k in range(K)
        ]
    )
    labelled = y != -1
    index = np.searchsorted(clf.classes_, y[labelled])
    total = log_joint[labelled, index].sum()
    total += np.logaddexp.reduce(log_joint[~labelled], axis=1).sum()
    m0, k0, v0, S0 = np.zeros(d), 1.0, float(d), np.eye(d)
    for k in range(K):
        sigma = clf.covariances_[k]
        total += stats.multivariate_normal(m0, sigma / k0).logpdf(clf.means_[k])
        total += stats.invwishart(df=v0, scale=S0).logpdf(sigma)
    total += stats.dirichlet(np.full(K, clf.weight_concentration_prior)).logpdf(
        clf.weights_
    )
    return total / len(X)


# ---------------------------------------------------------------------- #
# EM
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", range(6))
def test_objective_never_decreases(seed):
    X, y = _overlapping_problem(seed)
    clf = SemiSupervisedGMMClassifier(tol=1e-10, max_iter=300).fit(X, y)
    trace = np.array(clf.lower_bound_trace_)
    assert len(trace) == clf.n_iter_ > 3  # EM did real work
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace[1:]))
    assert clf.lower_bound_ == trace[-1]


def test_lower_bound_is_the_map_objective():
    X, y = _overlapping_problem(11)
    clf = SemiSupervisedGMMClassifier(weight_concentration_prior=2.0).fit(X, y)
    assert clf.converged_
    np.testing.assert_allclose(clf.lower_bound_, _map_objective(clf, X, y), rtol=1e-10)
    np.testing.assert_allclose(
        clf.weights_, (clf.class_count_ + 1.0) / (len(X) + 3.0), rtol=1e-12
    )


def test_prediction_is_the_weighted_supervised_posterior():
    X, y = _overlapping_problem(12)
    clf = SemiSupervisedGMMClassifier().fit(X, y)
    # One copy of the data per class, weighted by that class's share.
    K = len(clf.classes_)
    weighted = BayesianGMMClassifier().fit(
        np.tile(X, (K, 1)),
        np.repeat(clf.classes_, len(X)),
        sample_weight=clf.label_distributions_.T.ravel(),
    )
    X_test = np.random.default_rng(0).normal(scale=3.0, size=(30, 2))
    np.testing.assert_allclose(
        clf.predict_proba(X_test), weighted.predict_proba(X_test), rtol=1e-9
    )
    np.testing.assert_allclose(clf.class_count_, weighted.class_count_, rtol=1e-12)


def test_without_unlabelled_samples_it_is_the_supervised_model():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(40, 3))
    y = np.arange(40) % 3
    params = {"covariance_prior": 2.0, "mean_precision_prior": 0.3}
    semi = SemiSupervisedGMMClassifier(**params).fit(X, y)
    supervised = BayesianGMMClassifier(**params).fit(X, y)
    X_test = rng.normal(size=(20, 3))
    np.testing.assert_array_equal(
        semi.predict_proba(X_test), supervised.predict_proba(X_test)
    )
    np.testing.assert_array_equal(
        semi.covariance_posterior_, supervised.covariance_posterior_
    )
    assert semi.converged_ and semi.n_iter_ == 1
    np.testing.assert_array_equal(semi.transduction_, y)


def test_em_recovers_the_means_better_than_the_labelled_samples_alone():
    rng = np.random.default_rng(14)
    X, y, truth, centres = _two_clusters(rng)
    labelled = y != -1
    supervised = BayesianGMMClassifier().fit(X[labelled], y[labelled])
    semi = SemiSupervisedGMMClassifier().fit(X, y)
    error_supervised = np.linalg.norm(supervised.means_ - centres, axis=1).max()
    error_semi = np.linalg.norm(semi.means_ - centres, axis=1).max()
    assert error_semi < 0.3
    assert error_semi < 0.5 * error_supervised
    assert np.mean(semi.transduction_ == truth) > 0.95
    assert semi.class_count_.sum() == pytest.approx(len(X))


def test_warm_start_needs_fewer_iterations_on_a_grown_dataset():
    rng = np.random.default_rng(15)
    X, y, _, _ = _two_clusters(rng, n_unlabelled=300, separation=2.5)
    X_new = np.vstack([X, rng.normal(size=(6, 2))])
    y_new = np.concatenate([y, np.full(6, -1)])
    params = {"tol": 1e-8, "max_iter": 500}
    cold = SemiSupervisedGMMClassifier(**params).fit(X_new, y_new)
    warm = SemiSupervisedGMMClassifier(warm_start=True, **params).fit(X, y)
    warm.fit(X_new, y_new)
    assert cold.converged_ and warm.converged_
    assert warm.n_iter_ < cold.n_iter_ / 2
    np.testing.assert_allclose(warm.means_, cold.means_, atol=1e-3)


def test_warm_start_with_other_classes_starts_cold():
    rng = np.random.default_rng(16)
    X, y, _, _ = _two_clusters(rng, n_unlabelled=60)
    cold = SemiSupervisedGMMClassifier().fit(X, y)
    warm = SemiSupervisedGMMClassifier(warm_start=True, classes=[0, 1, 2]).fit(X, y)
    warm.set_params(classes=None).fit(X, y)
    np.testing.assert_array_equal(warm.predict_proba(X), cold.predict_proba(X))


def test_convergence_warning():
    X, y = _overlapping_problem(17)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        clf = SemiSupervisedGMMClassifier(max_iter=2, tol=0.0).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 2


def test_convergence_warning_is_recorded_in_fit_warnings():
    # A batch study counts a fit's warnings from fit_warnings_; an EM that
    # ran out of iterations must be among them, and a refit that converges
    # must not keep it.
    X, y = _overlapping_problem(17)
    clf = SemiSupervisedGMMClassifier(max_iter=2, tol=0.0)
    with pytest.warns(ConvergenceWarning):
        clf.fit(X, y)
    assert [type(w) for w in clf.fit_warnings_] == [ConvergenceWarning]
    assert "max_iter=2" in str(clf.fit_warnings_[0])
    clf.set_params(max_iter=500, tol=1e-6).fit(X, y)
    assert clf.converged_ and clf.fit_warnings_ == []


def test_convergence_warning_points_at_the_users_line():
    X, y = _overlapping_problem(17)
    with pytest.warns(ConvergenceWarning, match="max_iter=2") as caught:
        SemiSupervisedGMMClassifier(max_iter=2, tol=0.0).fit(X, y)
    assert {w.filename for w in caught} == {__file__}


def test_verbose_prints_the_objective(capsys):
    X, y = _overlapping_problem(18, n=30)
    clf = SemiSupervisedGMMClassifier(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == clf.n_iter_
    assert lines[-1].startswith(f"EM iteration {clf.n_iter_}: objective")


# ---------------------------------------------------------------------- #
# labels
# ---------------------------------------------------------------------- #
def test_transduction_and_label_distributions():
    rng = np.random.default_rng(19)
    X, y, _, _ = _two_clusters(rng, n_unlabelled=40)
    clf = SemiSupervisedGMMClassifier().fit(X, y)
    labelled = y != -1
    np.testing.assert_array_equal(clf.transduction_[labelled], y[labelled])
    dist = clf.label_distributions_
    assert dist.shape == (len(X), 2)
    np.testing.assert_array_equal(dist[labelled], np.eye(2)[y[labelled]])
    np.testing.assert_allclose(dist.sum(axis=1), 1.0)
    np.testing.assert_array_equal(
        clf.transduction_[~labelled], dist[~labelled].argmax(axis=1)
    )


def test_string_labels_with_object_marker():
    rng = np.random.default_rng(20)
    X, y, truth, _ = _two_clusters(rng, n_unlabelled=60)
    names = np.array(["healthy", "damaged"], dtype=object)[np.maximum(y, 0)]
    names[y == -1] = -1
    clf = SemiSupervisedGMMClassifier().fit(X, names)
    np.testing.assert_array_equal(clf.classes_, ["damaged", "healthy"])
    numeric = SemiSupervisedGMMClassifier().fit(X, y)
    np.testing.assert_allclose(
        clf.predict_proba(X), numeric.predict_proba(X)[:, ::-1], rtol=1e-12
    )
    as_names = np.array(["healthy", "damaged"])[numeric.transduction_]
    np.testing.assert_array_equal(clf.transduction_, as_names)
    assert np.mean(numeric.transduction_ == truth) > 0.8


def test_class_without_labels_can_take_an_unlabelled_cluster():
    rng = np.random.default_rng(21)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 8.0]])
    truth = np.repeat([0, 1, 2], 40)
    X = centres[truth] + 0.5 * rng.normal(size=(120, 2))
    y = np.full(120, -1)
    y[[0, 1, 40, 41]] = [0, 0, 1, 1]
    clf = SemiSupervisedGMMClassifier(classes=[0, 1, 2]).fit(X, y)
    np.testing.assert_allclose(clf.means_, centres, atol=0.5)
    assert np.mean(clf.transduction_ == truth) > 0.95


def test_all_unlabelled_needs_classes():
    X = np.random.default_rng(22).normal(size=(20, 2))
    y = np.full(20, -1)
    with pytest.raises(ValueError, match="no labelled sample"):
        SemiSupervisedGMMClassifier().fit(X, y)
    clf = SemiSupervisedGMMClassifier(classes=[1, 2, 3]).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), 1 / 3)
    np.testing.assert_allclose(clf.means_, clf.means_[[0, 0, 0]])


def test_label_errors():
    X = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match="must not contain -1"):
        SemiSupervisedGMMClassifier(classes=[-1, 1]).fit(X, [1, -1, 1])
    with pytest.raises(ValueError, match=r"label\(s\) \[5\] not in classes"):
        SemiSupervisedGMMClassifier(classes=[0, 1]).fit(X, [0, 5, -1])
    with pytest.raises(ValueError, match="Unknown label type"):
        SemiSupervisedGMMClassifier().fit(X, [0.5, -1, 1.5])


def test_weight_concentration_below_one_is_rejected():
    with pytest.raises(ValueError, match="weight_concentration_prior"):
        SemiSupervisedGMMClassifier(weight_concentration_prior=0.5).fit(
            [[0.0], [1.0]], [0, 1]
        )


def test_no_class_of_classes_gets_zero_weight():
    """alpha = 1 and a class with no data: its weight stays positive."""
    rng = np.random.default_rng(0)
    X, y, _, _ = _two_clusters(rng)
    labelled = y != -1
    # Labelled samples only: class 2 has no count at all (the Dirichlet mode
    # would give it weight exactly 0).
    clf = SemiSupervisedGMMClassifier(classes=[0, 1, 2]).fit(X[labelled], y[labelled])
    assert np.all(clf.weights_ > 0)
    # A warm start from there is not locked out of class 2 for good.
    clf.set_params(warm_start=True).fit(X, y)
    assert np.all(clf.weights_ > 0)
    assert clf.class_count_[2] > 0
    assert np.isfinite(clf.predict_log_proba(X)).all()


def test_label_distributions_come_from_the_final_parameters_e_step():
    X, y = _overlapping_problem(1)
    with pytest.warns(ConvergenceWarning):
        clf = SemiSupervisedGMMClassifier(max_iter=2).fit(X, y)
    # class_count_ are the effective counts the final parameters came from
    np.testing.assert_allclose(clf.label_distributions_.sum(axis=0), clf.class_count_)
    np.testing.assert_array_equal(
        clf.transduction_,
        clf.classes_[np.argmax(clf.label_distributions_, axis=1)],
    )


def test_string_dtype_labels_are_refused():
    X, y = _overlapping_problem(2)
    names = np.array(["a", "b", "c"])
    strings = np.where(y == -1, "-1", names[np.clip(y, 0, None)])
    with pytest.raises(ValueError, match="string array holding '-1'"):
        SemiSupervisedGMMClassifier().fit(X, strings)


def test_string_dtype_labels_without_a_marker_are_all_labelled():
    """A string array holds no -1: every sample is labelled (numpy 1 and 2)."""
    X, y = _overlapping_problem(3)
    names = np.array(["a", "b", "c"])[np.abs(y)]
    semi = SemiSupervisedGMMClassifier().fit(X, names)
    supervised = BayesianGMMClassifier().fit(X, names)
    np.testing.assert_array_equal(semi.transduction_, names)
    np.testing.assert_array_equal(semi.predict_proba(X), supervised.predict_proba(X))
