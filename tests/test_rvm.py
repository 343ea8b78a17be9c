"""MulticlassRVC: mRVM1 and mRVM2 on small, fast problems."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process.kernels import RBF
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skrbal.rvm import LostClassWarning, MulticlassRVC, NonDiscriminatingFitWarning
from skrbal.rvm._solvers import WARMUP_ITER

METHODS = ["mrvm1", "mrvm2"]
CENTERS = [[-3.0, 0.0], [3.0, 0.0], [0.0, 4.0]]


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(150, centers=CENTERS, cluster_std=1.0, random_state=0)
    X_test, y_test = make_blobs(300, centers=CENTERS, cluster_std=1.0, random_state=1)
    return X, y, X_test, y_test


@pytest.fixture(scope="module")
def fitted(blobs):
    X, y, _, _ = blobs
    # Seeded: mRVM2 starts from random scores, and the global generator's
    # state depends on which tests ran before.
    return {
        method: MulticlassRVC(method=method, random_state=0).fit(X, y)
        for method in METHODS
    }


@pytest.mark.parametrize("method", METHODS)
def test_separable_blobs_high_accuracy_with_few_relevance_vectors(
    fitted, blobs, method
):
    X, _, X_test, y_test = blobs
    model = fitted[method]
    assert model.converged_
    assert model.score(X_test, y_test) >= 0.97
    n_relevance = len(model.relevance_indices_)
    assert 2 <= n_relevance <= 0.1 * len(X)
    np.testing.assert_array_equal(model.relevance_vectors_, X[model.relevance_indices_])
    assert model.coef_.shape == model.alpha_.shape == (n_relevance, 3)
    assert np.all(model.alpha_ > 0)


def test_mrvm2_prunes_from_a_large_start_and_mrvm1_grows_from_one(fitted, blobs):
    X = blobs[0]
    top_down = fitted["mrvm2"].n_relevance_trace_
    assert top_down[0] >= 0.25 * len(X)  # the linearly independent samples
    assert np.all(np.diff(top_down) <= 0)
    assert top_down[-1] == len(fitted["mrvm2"].relevance_indices_) < top_down[0] / 3

    constructive = fitted["mrvm1"].n_relevance_trace_
    assert fitted["mrvm1"].start_ == "zero"  # the papers' start works here
    assert constructive[0] <= 2  # the seed, then at most one change
    assert constructive.max() > constructive[0]
    assert np.all(np.abs(np.diff(constructive)) <= 1)  # one sample per step


@pytest.mark.parametrize("method", METHODS)
def test_traces_and_iteration_count_agree(fitted, method):
    model = fitted[method]
    assert model.n_iter_ == len(model.n_relevance_trace_)
    assert model.n_iter_ == len(model.log_evidence_trace_)
    assert np.all(np.isfinite(model.log_evidence_trace_))


@pytest.mark.parametrize("method", METHODS)
def test_probabilities_scores_and_predictions_are_consistent(fitted, blobs, method):
    model = fitted[method]
    X_test = blobs[2]
    proba = model.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    log_proba = model.predict_log_proba(X_test)
    # A probability near 1 is rounded to a multiple of eps / 2, so its log is
    # off by up to eps in absolute terms; log_proba is not (see below).
    eps = np.finfo(float).eps
    np.testing.assert_allclose(np.log(proba), log_proba, rtol=1e-12, atol=eps)
    # The most probable class keeps its relative precision in log space:
    # log P = log1p(-sum of the other probabilities), which are accurate.
    top = proba.argmax(axis=1)
    rows = np.arange(len(X_test))
    other = np.ones(proba.shape, dtype=bool)
    other[rows, top] = False
    others = np.where(other, proba, 0.0).sum(axis=1)
    np.testing.assert_allclose(log_proba[rows, top], np.log1p(-others), rtol=1e-12)
    scores = model.decision_function(X_test)
    assert scores.shape == (len(X_test), 3)
    predicted = model.predict(X_test)
    np.testing.assert_array_equal(predicted, model.classes_[scores.argmax(axis=1)])
    np.testing.assert_array_equal(predicted, model.classes_[proba.argmax(axis=1)])


@pytest.mark.parametrize("method", METHODS)
def test_binary_decision_function_is_the_score_difference(method):
    X, y = make_blobs(80, centers=[[-2, 0], [2, 0]], random_state=0)
    labels = np.array(["healthy", "damaged"])[y]
    model = MulticlassRVC(random_state=0, method=method).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, ["damaged", "healthy"])
    decision = model.decision_function(X)
    assert decision.shape == (len(X),)
    np.testing.assert_array_equal(
        model.predict(X), np.where(decision > 0, "healthy", "damaged")
    )
    # Two-class probit: P(classes_[1]) = Phi(decision / sqrt(2)), increasing.
    proba = model.predict_proba(X)[:, 1]
    order = np.argsort(decision)
    assert np.all(np.diff(proba[order]) >= 0)


def _callable_rbf(X, Y, gamma=0.5):
    return rbf_kernel(X, Y, gamma=gamma)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("kernel", "kernel_params"),
    [
        ("rbf", None),
        ("linear", None),
        ("poly", None),
        ("laplacian", None),
        ("sigmoid", {"gamma": 0.1, "coef0": 0.0}),
        ("cosine", None),
        (_callable_rbf, {"gamma": 0.3}),
        (RBF(length_scale=2.0), None),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_every_kernel_fits_the_blobs(blobs, method, kernel, kernel_params):
    X, y, X_test, y_test = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MulticlassRVC(
            method=method, kernel=kernel, kernel_params=kernel_params, random_state=0
        ).fit(X, y)
    assert model.score(X_test, y_test) >= 0.95
    assert len(model.relevance_indices_) <= 0.15 * len(X)


def test_kernel_parameters_reach_the_kernel(blobs):
    X, y, _, _ = blobs
    calls = []

    def kernel(A, B, scale):
        calls.append(scale)
        return rbf_kernel(A, B, gamma=0.5) * scale

    MulticlassRVC(random_state=0, kernel=kernel, kernel_params={"scale": 2.0}).fit(X, y)
    assert calls and set(calls) == {2.0}
    wide = MulticlassRVC(random_state=0, kernel="rbf", gamma=1e-3).fit(X, y)
    narrow = MulticlassRVC(random_state=0, kernel="rbf", gamma=10.0).fit(X, y)
    assert len(narrow.relevance_indices_) > len(wide.relevance_indices_)


def test_default_gamma_is_one_over_n_features(blobs):
    X, y, X_test, _ = blobs
    default = MulticlassRVC(random_state=0, method="mrvm1").fit(X, y)
    explicit = MulticlassRVC(random_state=0, method="mrvm1", gamma=1 / X.shape[1]).fit(
        X, y
    )
    np.testing.assert_allclose(
        default.predict_proba(X_test), explicit.predict_proba(X_test)
    )


def test_grid_search_over_kernel_and_gamma(blobs):
    X, y, X_test, y_test = blobs
    grid = GridSearchCV(
        MulticlassRVC(random_state=0, method="mrvm1"),
        param_grid=[
            {"kernel": ["rbf", "laplacian"], "gamma": [0.05, 0.5]},
            {"kernel": ["linear"]},
        ],
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
        n_jobs=1,
    )
    grid.fit(X, y)
    assert len(grid.cv_results_["params"]) == 5
    assert grid.best_params_["kernel"] in {"rbf", "laplacian", "linear"}
    assert grid.best_score_ >= 0.95
    assert grid.score(X_test, y_test) >= 0.95


def test_grid_search_with_the_decision_scorer():
    metrics = pytest.importorskip("skrbal.metrics")
    from skrbal import synthetic_decision_process

    centers = [[0, 0], [3, 0], [0, 3], [3, 3]]
    X, y = make_blobs(120, centers=centers, cluster_std=0.7, random_state=0)
    y = y + 1  # the process's health states are labelled 1..4
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), MulticlassRVC(random_state=0, method="mrvm2")),
        param_grid={"multiclassrvc__gamma": [0.1, 1.0]},
        scoring=metrics.make_decision_scorer(synthetic_decision_process()),
        cv=StratifiedKFold(3, shuffle=True, random_state=0),
        n_jobs=1,
    )
    grid.fit(X, y)
    np.testing.assert_array_equal(grid.classes_, [1, 2, 3, 4])
    assert 0.8 <= grid.best_score_ <= 1.0


@pytest.mark.parametrize("method", METHODS)
def test_declared_classes_cover_a_tiny_training_set(method):
    classes = [1, 2, 3, 4]
    X_new = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, -5.0]])
    for X, y in [
        (np.array([[0.0, 0.0]]), np.array([2])),
        (np.array([[0.0, 0.0], [3.0, 3.0]]), np.array([4, 1])),
        (np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 3.0]]), np.array([4, 4, 1])),
    ]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = MulticlassRVC(random_state=0, method=method, classes=classes)
            model.fit(X, y)
        warned = [w for w in caught if w.category is NonDiscriminatingFitWarning]
        # A fit that cannot tell its classes apart says so, once; one that can, not.
        assert len(warned) == (0 if model.discriminates_ else 1)
        np.testing.assert_array_equal(model.classes_, classes)
        proba = model.predict_proba(X_new)
        assert proba.shape == (3, 4)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert set(model.predict(X_new)) <= set(classes)


@pytest.mark.parametrize("method", METHODS)
def test_unseen_declared_class_gets_low_probability(blobs, method):
    X, y, X_test, y_test = blobs
    model = MulticlassRVC(random_state=0, method=method, classes=[0, 1, 2, 3]).fit(X, y)
    proba = model.predict_proba(X_test)
    assert proba.shape == (len(X_test), 4)
    assert proba[:, 3].mean() < 0.05
    assert np.all(proba[:, 3] < proba.max(axis=1))
    assert model.predict_proba(CENTERS)[:, 3].max() < 0.01
    assert model.score(X_test, y_test) >= 0.95


@pytest.mark.parametrize("method", METHODS)
def test_both_methods_discriminate_three_labels_per_class(method):
    # Three labels per class. mRVM1 used to start from the E-step of a zero
    # model and one seed sample: its marginal likelihood found hardly any
    # sample worth including and its first fit was uniform (the largest
    # belief at a class centre was below 0.5, with a
    # NonDiscriminatingFitWarning). Now it starts from one seed per class at
    # scores of the labels' scale and stops after N precision changes.
    X, y = make_blobs(9, centers=CENTERS, cluster_std=0.5, random_state=0)
    model = MulticlassRVC(random_state=0, method=method, classes=[0, 1, 2, 3])
    model, caught = _fit_recording_warnings(model, X, y)
    assert caught == []
    assert model.start_ == ("labels" if method == "mrvm1" else "random")
    at_centres = model.predict_proba(CENTERS)
    np.testing.assert_array_equal(at_centres.argmax(axis=1), [0, 1, 2])
    assert np.diag(at_centres).min() > 0.5
    assert model.discriminates_ and model.lost_classes_.size == 0


def test_mrvm1_run_to_convergence_drains_to_uniform_beliefs():
    # The documented reason for the bound: without it mRVM1's precisions
    # grow until the beliefs are nearly uniform again.
    X, y = make_blobs(9, centers=CENTERS, cluster_std=0.5, random_state=0)
    model = MulticlassRVC(method="mrvm1", classes=[0, 1, 2, 3])
    with pytest.warns(NonDiscriminatingFitWarning, match="mrvm1"):
        model.set_params(max_alpha_updates=None).fit(X, y)
    assert np.diag(model.predict_proba(CENTERS)).max() < 0.5


def test_single_class_needs_declared_classes():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="one class"):
        MulticlassRVC(random_state=0).fit(X, np.zeros(5))
    model = MulticlassRVC(random_state=0, classes=[0, 1]).fit(X, np.zeros(5))
    np.testing.assert_array_equal(model.predict(X), np.zeros(5))


@pytest.mark.parametrize(
    ("classes", "y", "match"),
    [
        ([0, 1], [0, 2, 1], "not in `classes`"),
        ([0, 0, 1], [0, 1, 1], "duplicate"),
        ([1], [1, 1, 1], "at least two"),
        ([[0, 1]], [0, 1, 1], "1-d"),
    ],
)
def test_bad_declared_classes_are_rejected(classes, y, match):
    X = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match=match):
        MulticlassRVC(random_state=0, classes=classes).fit(X, y)


@pytest.mark.parametrize("method", METHODS)
def test_duplicated_samples_and_a_nearly_singular_kernel(blobs, method):
    X, y, X_test, y_test = blobs
    doubled = MulticlassRVC(method=method, random_state=0).fit(
        np.vstack([X, X]), np.r_[y, y]
    )
    assert doubled.score(X_test, y_test) >= 0.97
    assert len(set(map(tuple, doubled.relevance_vectors_))) == len(
        doubled.relevance_vectors_
    ), "a duplicate adds nothing the original does not"
    # gamma -> 0 makes every kernel entry ~1: a rank-one Gram matrix.
    with pytest.warns(NonDiscriminatingFitWarning, match=f"{method}.* 3 training"):
        flat = MulticlassRVC(method=method, gamma=1e-9, random_state=0).fit(X, y)
    assert not flat.discriminates_
    proba = flat.predict_proba(X_test)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("method", METHODS)
def test_warm_start_on_a_grown_training_set_converges_faster(method):
    # Faster over start seeds, not at every one: with numpy 1.24 / scipy 1.10
    # (the declared lower bounds) mRVM2's warm refit from seed 0 took 104
    # iterations against 82 cold, while over six seeds it took 221 against 709.
    X, y = make_blobs(300, centers=CENTERS, cluster_std=1.5, random_state=2)
    n_warm, n_cold = [], []
    for seed in range(4):
        cold = MulticlassRVC(random_state=seed, method=method).fit(X, y)
        warm = MulticlassRVC(random_state=seed, method=method, warm_start=True).fit(
            X[:290], y[:290]
        )
        warm.fit(X, y)
        assert warm.converged_ and cold.converged_
        n_warm.append(warm.n_iter_)
        n_cold.append(cold.n_iter_)
    if method == "mrvm2":
        assert sum(n_warm) < 0.75 * sum(n_cold)
        assert np.sum(np.less(n_warm, n_cold)) >= 3
    # mRVM1's cold start (one seed per class from scores at the labels'
    # scale) settles in about 120 re-estimations here; the warm refit goes on
    # re-estimating the previous relevance vectors' precisions by small steps
    # for longer (about 230), to a solution as good as the cold one was
    # before that start (training accuracy 0.90 against the new cold 0.927).
    # mRVM2 keeps the samples it pruned before out, so the two solutions need
    # not be identical, only as good.
    assert np.mean(warm.predict(X) == cold.predict(X)) >= 0.95
    assert warm.score(X, y) >= cold.score(X, y) - (0.02 if method == "mrvm2" else 0.03)


def test_warm_start_falls_back_to_a_cold_start_when_classes_change(blobs):
    X, y, X_test, _ = blobs
    model = MulticlassRVC(random_state=0, method="mrvm1", warm_start=True)
    model.fit(X[y < 2], y[y < 2])
    model.fit(X, y)
    cold = MulticlassRVC(random_state=0, method="mrvm1").fit(X, y)
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    np.testing.assert_allclose(model.predict_proba(X_test), cold.predict_proba(X_test))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "gaussian"}, "kernel"),
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": -1.0}, "gamma"),
        ({"method": "mrvm3"}, "method"),
        ({"max_iter": 0}, "max_iter"),
        ({"n_quadrature": 1}, "n_quadrature"),
    ],
)
def test_bad_parameters_raise_value_error(blobs, params, match):
    X, y, _, _ = blobs
    with pytest.raises(ValueError, match=match):
        MulticlassRVC(random_state=0, **params).fit(X, y)


def test_bad_data_raise_value_error(fitted, blobs):
    X, y, _, _ = blobs
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MulticlassRVC(random_state=0).fit(bad, y)
    with pytest.raises(ValueError, match="NaN"):
        fitted["mrvm1"].predict(bad)
    with pytest.raises(ValueError, match="features"):
        fitted["mrvm2"].predict_proba(np.ones((3, 5)))
    with pytest.raises(ValueError, match="Unknown label type"):
        MulticlassRVC(random_state=0).fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(ValueError, match="shape"):
        MulticlassRVC(random_state=0, kernel=lambda A, B: np.ones((len(A), 1))).fit(
            X, y
        )


def test_unreachable_prune_threshold_warns(blobs):
    X, y, _, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(UserWarning, match="never prune"):
            model = MulticlassRVC(random_state=0, prune_threshold=1e6, max_iter=30)
            model.fit(X, y)
    # Recorded with the fit's other warnings, for a study to count.
    assert any("never prune" in str(w) for w in model.fit_warnings_)


@pytest.mark.parametrize("method", METHODS)
def test_too_few_iterations_warn_about_convergence(blobs, method):
    X, y, _, _ = blobs
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        model = MulticlassRVC(random_state=0, method=method, max_iter=2).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 2
    assert model.stop_reason_ == "max_iter"


@pytest.mark.parametrize("method", METHODS)
def test_pickle_round_trip(fitted, blobs, method):
    X_test = blobs[2]
    restored = pickle.loads(pickle.dumps(fitted[method]))
    np.testing.assert_array_equal(
        restored.predict_proba(X_test), fitted[method].predict_proba(X_test)
    )


def test_verbose_prints_one_line_per_iteration(blobs, capsys):
    X, y, _, _ = blobs
    model = MulticlassRVC(random_state=0, method="mrvm1", verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    # The converging iteration makes no change and prints nothing.
    assert len(lines) == model.n_iter_ - 1
    assert all(line.startswith("[mRVM1]") for line in lines)
    model = MulticlassRVC(random_state=0, method="mrvm2", verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == model.n_iter_
    assert lines[0].endswith("warm-up") and "pruned" in lines[-1]


def test_predict_proba_in_batches_equals_one_batch(fitted, blobs, monkeypatch):
    import skrbal.rvm._probit as probit

    X_test = blobs[2]
    whole = fitted["mrvm2"].predict_proba(X_test)
    # Room for seven rows of quadrature per batch: 300 rows in 43 batches.
    n_quadrature = fitted["mrvm2"].n_quadrature
    monkeypatch.setattr(probit, "BATCH_FLOATS", 7 * 9 * n_quadrature)
    # Every row is computed on its own, so batching changes nothing at all.
    np.testing.assert_array_equal(fitted["mrvm2"].predict_proba(X_test), whole)


def _fit_recording_warnings(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return model, [w for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("method", METHODS)
def test_a_fit_that_cannot_discriminate_its_classes_warns_once(method):
    # Labels independent of the features: no model can beat the class
    # frequencies, and saying nothing would hand the user uniform beliefs.
    X = np.repeat([[0.0, 0.0], [1.0, 1.0]], 10, axis=0)
    y = np.tile([0, 1], 10)
    model, caught = _fit_recording_warnings(
        MulticlassRVC(method=method, random_state=0), X, y
    )
    assert [w.category for w in caught] == [NonDiscriminatingFitWarning]
    assert issubclass(NonDiscriminatingFitWarning, ConvergenceWarning)
    message = str(caught[0].message)
    assert "cannot discriminate" in message and method in message
    assert not model.discriminates_
    assert [type(w) for w in model.fit_warnings_] == [NonDiscriminatingFitWarning]
    assert str(model.fit_warnings_[0]) == message
    diagnostics = model.fit_warnings_[0].diagnostics
    assert diagnostics["majority_share"] == 0.5
    assert diagnostics["training_accuracy"] <= 0.5
    assert diagnostics["log_loss"] >= 0.95 * diagnostics["class_entropy"]
    restored = pickle.loads(pickle.dumps(model))
    assert restored.fit_warnings_[0].diagnostics == diagnostics


def test_separable_blobs_discriminate_or_warn():
    # Two separable blobs, 20 points per class (SVC: training accuracy 1).
    # The default model ended with one relevance vector, uniform beliefs and
    # accuracy 0.5, silently. It must either discriminate or say so.
    X, y = make_blobs(40, centers=2, random_state=14)
    model, caught = _fit_recording_warnings(MulticlassRVC(random_state=0), X, y)
    if model.score(X, y) < 0.9:
        assert [w.category.__name__ for w in caught] == ["NonDiscriminatingFitWarning"]
        assert not model.discriminates_
    else:
        assert model.discriminates_ and caught == []


@pytest.mark.parametrize("blobs_seed", [14, 24, 28, 29, 32, 37, 38])
@pytest.mark.parametrize("random_state", [0, 1])
def test_mrvm2_random_start_discriminates_separable_blobs(blobs_seed, random_state):
    # From zero auxiliary scores these seven of the first 40 separable
    # two-blob sets ended at one relevance vector and accuracy 0.5.
    X, y = make_blobs(40, centers=2, random_state=blobs_seed)
    model = MulticlassRVC(random_state=random_state).fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.discriminates_


def test_mrvm2_discriminates_ten_labels_of_the_degradation_stream():
    # Raw features, the paper's gamma = 1/D: from zero auxiliary scores the
    # mean test accuracy over these draws was 0.42.
    from skrbal.datasets import make_degradation_stream

    X, y, _ = make_degradation_stream(n_cycles=2, random_state=0)
    rng = np.random.default_rng(0)
    test = rng.choice(len(X), 1000, replace=False)
    pool = np.setdiff1d(np.arange(len(X)), test)
    accuracies = []
    while len(accuracies) < 10:
        labelled = rng.choice(pool, 10, replace=False)
        if np.unique(y[labelled]).size < 4:
            continue
        model = MulticlassRVC(random_state=len(accuracies))
        model.fit(X[labelled], y[labelled])
        accuracies.append(model.score(X[test], y[test]))
    assert np.mean(accuracies) >= 0.6


@pytest.mark.parametrize("method", METHODS)
def test_random_state_makes_fits_reproducible(blobs, method):
    X, y, _, _ = blobs
    first = MulticlassRVC(method=method, random_state=3).fit(X, y)
    again = MulticlassRVC(method=method, random_state=3).fit(X, y)
    np.testing.assert_array_equal(first.relevance_indices_, again.relevance_indices_)
    np.testing.assert_array_equal(first.coef_, again.coef_)
    generator = np.random.RandomState(3)
    from_generator = MulticlassRVC(method=method, random_state=generator).fit(X, y)
    np.testing.assert_array_equal(from_generator.coef_, first.coef_)
    assert generator is from_generator.random_state  # stored as given


def test_mrvm2_start_depends_on_the_seed_mrvm1_does_not():
    X, y = make_blobs(60, centers=CENTERS, cluster_std=2.0, random_state=4)
    coefs = {
        method: [
            MulticlassRVC(method=method, random_state=seed).fit(X, y).coef_
            for seed in (0, 1)
        ]
        for method in METHODS
    }
    np.testing.assert_array_equal(*coefs["mrvm1"])
    a, b = coefs["mrvm2"]
    assert a.shape != b.shape or not np.array_equal(a, b)


def test_prune_threshold_is_the_papers_precision_on_the_papers_basis():
    # The papers threshold the precision of k(., x_i) / sqrt(k(x_i, x_i)); the
    # solver works on unit-norm columns k_i / ||k_i||, whose precision is
    # k_ii / ||k_i||**2 times the papers'. With the RBF kernel on standardised
    # iris ||k_i||**2 is 5 to 52: a threshold of 1e4 on the unit-norm basis
    # pruned at up to 5e5 in the papers' units, beyond the hyperprior's
    # ceiling of 5e4.
    from sklearn.datasets import load_iris

    from skrbal.rvm._solvers import _papers_to_unit_norm

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    gram = rbf_kernel(X, gamma=0.25)
    norms = np.linalg.norm(gram, axis=0)
    np.testing.assert_allclose(_papers_to_unit_norm(gram, norms), norms**-2.0)
    assert 5 < np.min(norms**2) and np.max(norms**2) < 52
    np.testing.assert_allclose(
        _papers_to_unit_norm(4.0 * gram, 4.0 * norms), norms**-2.0 / 4.0
    )
    linear = X @ X.T
    linear[:, 0] = linear[0, :] = 0.0  # a sample at the origin
    linear_norms = np.linalg.norm(linear, axis=0)
    linear_norms[0] = 1.0
    factor = _papers_to_unit_norm(linear, linear_norms)
    assert factor[0] == 1.0 and np.all(np.isfinite(factor))
    # A kernel scaled by a constant changes neither the fit nor the pruning.
    scaled = MulticlassRVC(
        kernel=lambda A, B: 4.0 * rbf_kernel(A, B, gamma=0.25), random_state=0
    ).fit(X, y)
    model = MulticlassRVC(random_state=0).fit(X, y)
    np.testing.assert_array_equal(scaled.relevance_indices_, model.relevance_indices_)
    np.testing.assert_allclose(
        scaled.predict_proba(X), model.predict_proba(X), rtol=1e-3, atol=1e-5
    )


@pytest.mark.parametrize("method", METHODS)
def test_a_fit_that_discriminates_does_not_warn(fitted, blobs, method):
    X, y, _, _ = blobs
    assert fitted[method].discriminates_
    assert fitted[method].fit_warnings_ == []
    _, caught = _fit_recording_warnings(
        make_pipeline(StandardScaler(), MulticlassRVC(random_state=0, method=method)),
        X,
        y,
    )
    assert caught == []


def test_fit_warnings_point_at_the_users_line(blobs):
    # Through a Pipeline or from a parameter check, a fixed stacklevel lands
    # inside scikit-learn; every warning of fit must name the caller's line.
    X, y, _, _ = blobs
    model = make_pipeline(
        StandardScaler(), MulticlassRVC(random_state=0, prune_threshold=1e6, max_iter=2)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    messages = {str(w.message): w.filename for w in caught}
    assert any("never prune" in m for m in messages)
    assert any("did not converge" in m for m in messages)
    assert set(messages.values()) == {__file__}


def _ten_label_draws(n_draws=10):
    """Ten labelled sets of 10 (all four states) of the degradation stream."""
    from skrbal.datasets import make_degradation_stream

    X, y, _ = make_degradation_stream(n_cycles=2, random_state=0)
    rng = np.random.default_rng(0)
    test = rng.choice(len(X), 1000, replace=False)
    pool = np.setdiff1d(np.arange(len(X)), test)
    draws = []
    while len(draws) < n_draws:
        labelled = rng.choice(pool, 10, replace=False)
        if np.unique(y[labelled]).size == 4:
            draws.append(labelled)
    return X, y, test, draws


def test_bounded_alpha_updates_keep_the_classes_that_convergence_loses():
    # Raw features, gamma = 1/D. Run to convergence (max_alpha_updates=None,
    # as the authors' code does when its 2N limit is raised) the precision
    # update drains the weight of a relevance vector with no same-class
    # neighbour in the kernel's reach: on these draws 7 of 10 fits lost a
    # class and the mean test accuracy was 0.70. Stopped after N updates
    # (the paper's criterion) none is lost.
    X, y, test, draws = _ten_label_draws()
    unbounded, bounded = [], []
    for seed, labelled in enumerate(draws):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = MulticlassRVC(random_state=seed, max_alpha_updates=None)
            old.fit(X[labelled], y[labelled])
        assert old.stop_reason_ == "converged"
        # Said, never silent: by LostClassWarning, or by the fit's
        # NonDiscriminatingFitWarning when it lost all but one class.
        said = {LostClassWarning, NonDiscriminatingFitWarning}
        reported = [w for w in caught if w.category in said]
        assert len(reported) == int(old.lost_classes_.size > 0)
        unbounded.append((old.lost_classes_.size, old.score(X[test], y[test])))
        model, caught = _fit_recording_warnings(
            MulticlassRVC(random_state=seed), X[labelled], y[labelled]
        )
        assert caught == []  # the bound is the designed stop: no warning
        assert model.stop_reason_ == "alpha_update_limit"
        assert model.n_iter_ == WARMUP_ITER + len(labelled)
        assert model.lost_classes_.size == 0
        bounded.append(model.score(X[test], y[test]))
    n_lost, accuracy = np.array(unbounded).T
    assert np.sum(n_lost > 0) >= 5 and accuracy.mean() < 0.8
    assert np.mean(bounded) >= 0.95


def test_a_lost_class_is_reported_once_and_recorded():
    X, y, _, draws = _ten_label_draws(1)
    labelled = draws[0]
    model, caught = _fit_recording_warnings(
        MulticlassRVC(random_state=0, max_alpha_updates=None),
        X[labelled],
        y[labelled],
    )
    assert [w.category for w in caught] == [LostClassWarning]
    np.testing.assert_array_equal(model.lost_classes_, [2, 4])
    np.testing.assert_array_equal(caught[0].message.classes, [2, 4])
    assert "[2, 4]" in str(caught[0].message)
    assert model.fit_warnings_ == [caught[0].message]
    # Not one of the lost classes is predicted for its own training samples.
    predicted = model.predict(X[labelled])
    for label in model.lost_classes_:
        assert not np.any(predicted[y[labelled] == label] == label)


@pytest.mark.parametrize(
    ("limit", "expected"), [(3, 3), ("n_samples", 150), ("2n_samples", 300)]
)
def test_alpha_update_limit_bounds_the_iterations(blobs, limit, expected):
    X, y, _, _ = blobs
    model = MulticlassRVC(
        random_state=0, max_alpha_updates=limit, tol=0.0, max_iter=1000
    ).fit(X, y)
    # tol=0 never converges: the limit, counted after the warm-up, stops it.
    assert model.n_iter_ == WARMUP_ITER + expected
    assert model.stop_reason_ == "alpha_update_limit" and not model.converged_


def test_converged_fit_reports_its_stop(fitted):
    for model in fitted.values():
        assert model.converged_ and model.stop_reason_ == "converged"
        assert model.lost_classes_.size == 0


@pytest.mark.parametrize("method", METHODS)
def test_class_prior_is_the_belief_far_from_every_relevance_vector(blobs, method):
    X, y, _, _ = blobs
    far = np.array([[60.0, -60.0], [-80.0, 50.0]])
    uniform = MulticlassRVC(method=method, random_state=0).fit(X, y)
    np.testing.assert_array_equal(uniform.intercept_, 0.0)
    np.testing.assert_allclose(uniform.predict_proba(far), 1 / 3, atol=1e-6)
    prior = [0.8, 0.15, 0.05]
    given = MulticlassRVC(method=method, random_state=0, class_prior=prior)
    given.fit(X, y)
    np.testing.assert_allclose(given.class_prior_, prior)
    np.testing.assert_allclose(given.predict_proba(far), [prior, prior], atol=1e-6)
    # Near the data the model still discriminates.
    assert given.score(X, y) > 0.95
    labels = np.array([0] * 7 + [1] * 2 + [2])
    counts = np.array([7.5, 2.5, 1.5])
    freq = MulticlassRVC(method=method, random_state=0, class_prior="frequencies")
    with warnings.catch_warnings():
        # Ten labels at random: mRVM1 need not discriminate them.
        warnings.simplefilter("ignore", NonDiscriminatingFitWarning)
        freq.fit(X[:10], labels)
    np.testing.assert_allclose(freq.class_prior_, counts / counts.sum())
    np.testing.assert_allclose(
        freq.predict_proba(far)[0], counts / counts.sum(), atol=1e-6
    )


@pytest.mark.parametrize(
    ("prior", "match"),
    [([0.5, 0.5], "one finite probability per class"), ([1, 0, 1], "positive")],
)
def test_bad_class_prior_is_rejected(blobs, prior, match):
    X, y, _, _ = blobs
    with pytest.raises(ValueError, match=match):
        MulticlassRVC(class_prior=prior).fit(X, y)


def test_auto_width_is_reproducible_and_follows_the_feature_scale(blobs):
    X, y, X_test, _ = blobs
    X, y = X[:60], y[:60]
    first = MulticlassRVC(gamma="auto", random_state=0).fit(X, y)
    again = MulticlassRVC(gamma="auto", random_state=0).fit(X, y)
    assert first.gamma_ == again.gamma_
    np.testing.assert_array_equal(first.gamma_log_loss_, again.gamma_log_loss_)
    np.testing.assert_array_equal(first.coef_, again.coef_)
    assert first.gamma_ in first.gamma_candidates_
    # The widest candidate within a standard error of the least loss: no
    # wider one, and none of a smaller loss among the wider ones.
    chosen = list(first.gamma_candidates_).index(first.gamma_)
    assert np.all(first.gamma_log_loss_[:chosen] > first.gamma_log_loss_.min())
    # Features ten times larger: the same kernel matrices up to rounding,
    # which the EM may amplify a little; a width 100 times smaller.
    scaled = MulticlassRVC(gamma="auto", random_state=0).fit(10 * X, y)
    np.testing.assert_allclose(scaled.gamma_, first.gamma_ / 100, rtol=1e-9)
    agree = scaled.predict(10 * X_test) == first.predict(X_test)
    assert agree.mean() >= 0.95


def test_auto_width_is_chosen_again_as_labels_arrive(blobs):
    X, y, _, _ = blobs
    model = MulticlassRVC(gamma="auto", random_state=0, method="mrvm2")
    model.fit(X[:12], y[:12])
    small = model.gamma_candidates_.copy()
    model.fit(X[:60], y[:60])
    assert not np.array_equal(small, model.gamma_candidates_)
    assert model.gamma_ in model.gamma_candidates_


@pytest.mark.parametrize("method", METHODS)
def test_evidence_width_is_reproducible_and_follows_the_feature_scale(blobs, method):
    X, y, X_test, _ = blobs
    X, y = X[:45], y[:45]
    # random_state=None: the candidates are fitted with seed 0, so the
    # width and the fit kept are still reproducible given the data.
    first = MulticlassRVC(gamma="evidence", method=method).fit(X, y)
    again = MulticlassRVC(gamma="evidence", method=method).fit(X, y)
    assert first.gamma_ == again.gamma_
    np.testing.assert_array_equal(first.gamma_log_evidence_, again.gamma_log_evidence_)
    np.testing.assert_array_equal(first.coef_, again.coef_)
    assert first.gamma_ == first.gamma_candidates_[np.argmax(first.gamma_log_evidence_)]
    # Features three times larger: the same kernel matrices up to rounding
    # (which mRVM2's pruning may amplify a little at some candidates), so
    # about the same evidence, and a width nine times smaller.
    scaled = MulticlassRVC(gamma="evidence", method=method).fit(3 * X, y)
    np.testing.assert_allclose(scaled.gamma_, first.gamma_ / 9, rtol=1e-9)
    np.testing.assert_allclose(
        scaled.gamma_log_evidence_, first.gamma_log_evidence_, rtol=0.05
    )
    agree = scaled.predict(3 * X_test) == first.predict(X_test)
    assert agree.mean() >= 0.98


def test_evidence_width_keeps_the_fit_of_the_chosen_width(blobs):
    X, y, X_test, _ = blobs
    X, y = X[:45], y[:45]
    chosen = MulticlassRVC(gamma="evidence", random_state=3).fit(X, y)
    # A peaked evidence: neither end of the grid is chosen here.
    assert 0 < np.argmax(chosen.gamma_log_evidence_) < 8
    fixed = MulticlassRVC(gamma=chosen.gamma_, random_state=3).fit(X, y)
    np.testing.assert_array_equal(chosen.coef_, fixed.coef_)
    np.testing.assert_array_equal(
        chosen.predict_proba(X_test), fixed.predict_proba(X_test)
    )
    assert chosen.get_params()["gamma"] == "evidence"
    assert not hasattr(fixed, "gamma_log_evidence_")


def test_evidence_width_is_chosen_again_as_labels_arrive(blobs):
    X, y, _, _ = blobs
    model = MulticlassRVC(gamma="evidence", random_state=0)
    model.fit(X[:12], y[:12])
    small = model.gamma_candidates_.copy()
    model.fit(X[:60], y[:60])
    assert not np.array_equal(small, model.gamma_candidates_)
    assert model.gamma_ in model.gamma_candidates_


def test_log_evidence_penalises_a_needlessly_narrow_kernel():
    from skrbal.rvm._width import log_evidence

    # Two well separated groups: a kernel narrower than the groups fits the
    # labels no better and pays a larger Occam factor.
    X, y = make_blobs(40, centers=[[-4.0, 0.0], [4.0, 0.0]], random_state=0)
    evidence = {}
    for gamma in (0.05, 20.0):
        model = MulticlassRVC(gamma=gamma, random_state=0).fit(X, y)
        design = rbf_kernel(X, model.relevance_vectors_, gamma=gamma)
        evidence[gamma] = log_evidence(
            design, y, model.coef_, model.alpha_, model.intercept_, 12
        )
    assert evidence[0.05] > evidence[20.0]


# Few iterations keep the checks fast (each fits nine candidates).
@parametrize_with_checks(
    [MulticlassRVC(gamma="evidence", random_state=0, max_iter=30, n_quadrature=6)]
)
def test_evidence_width_passes_the_sklearn_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "linear"}, "has none"),
        ({"kernel_params": {"gamma": 0.1}}, "both set the width"),
    ],
)
@pytest.mark.parametrize("gamma", ["auto", "evidence"])
def test_chosen_width_needs_a_kernel_with_a_width(blobs, params, match, gamma):
    X, y, _, _ = blobs
    with pytest.raises(ValueError, match=match):
        MulticlassRVC(gamma=gamma, **params).fit(X, y)


@pytest.mark.parametrize("method", METHODS)
def test_a_single_labelled_class_is_believed_where_it_was_labelled(method):
    # A campaign that starts from healthy labels only. mRVM1's papers' start
    # ended with beliefs as low as 0.36 in the labelled class, next to
    # uniform over the four declared classes.
    X, _ = make_blobs(
        6, n_features=4, centers=[[0.0] * 4], cluster_std=0.5, random_state=0
    )
    y = np.zeros(6, dtype=int)
    model = MulticlassRVC(method=method, random_state=0, classes=[0, 1, 2, 3])
    model.fit(X, y)
    assert model.predict_proba(X)[:, 0].min() > 0.5
    if method == "mrvm1":
        assert model.start_ == "labels"


@pytest.mark.parametrize("method", METHODS)
def test_linear_term_extrapolates_the_trend_far_from_every_relevance_vector(method):
    # Far from every relevance vector the RBF scores vanish and the beliefs
    # fall to the uniform prior, whatever side of the data the point is on;
    # with a linear term they follow the discriminant learnt from the labels.
    X = np.linspace(-1.0, 1.0, 20)[:, None] + np.repeat([-1.0, 1.0], 10)[:, None]
    y = np.repeat([0, 1], 10)
    far = np.array([[-30.0], [30.0]])
    plain = MulticlassRVC(method=method, random_state=0).fit(X, y)
    np.testing.assert_allclose(plain.predict_proba(far), 0.5, atol=1e-6)
    linear = MulticlassRVC(method=method, linear_term=0.4, random_state=0).fit(X, y)
    proba = linear.predict_proba(far)
    assert proba[0, 0] > 0.99 and proba[1, 1] > 0.99
    # Near the data both models agree on every label.
    np.testing.assert_array_equal(linear.predict(X), plain.predict(X))


def test_warm_start_with_another_linear_term_starts_cold(blobs):
    X, y = blobs[0], blobs[1]
    model = MulticlassRVC(random_state=0, warm_start=True).fit(X[:60], y[:60])
    model.set_params(linear_term=0.4).fit(X, y)
    assert model.start_ == "random"
    model.fit(X, y)
    assert model.start_ == "warm"


def test_evidence_width_with_warm_start_is_chosen_again_as_the_data_grow(blobs):
    X, y, _, _ = blobs
    model = MulticlassRVC(gamma="evidence", warm_start=True, random_state=0)
    model.fit(X[:40], y[:40])
    first = model.gamma_candidates_.copy()
    # Under a quarter more: the width is kept and the fit warm-started.
    model.fit(X[:49], y[:49])
    assert model.start_ == "warm"
    np.testing.assert_array_equal(model.gamma_candidates_, first)
    assert model.gamma_ in first
    # A quarter more: chosen again among candidates of the grown set.
    model.fit(X[:50], y[:50])
    assert not np.array_equal(model.gamma_candidates_, first)
    assert model.gamma_ == model.gamma_candidates_[np.argmax(model.gamma_log_evidence_)]
    # Without warm_start every fit chooses.
    cold = MulticlassRVC(gamma="evidence", random_state=0).fit(X[:40], y[:40])
    cold.fit(X[:49], y[:49])
    assert not np.array_equal(cold.gamma_candidates_, first)


def _rare_class():
    """Two classes of 20 samples and a third of two, between them (1-D)."""
    rng = np.random.RandomState(0)
    X = np.concatenate([rng.normal(0, 0.3, 20), rng.normal(3, 0.3, 20), [1.5, 1.6]])
    return X[:, None], np.array([0] * 20 + [1] * 20 + [2] * 2)


@pytest.mark.parametrize("linear_term", [0.0, 0.1])
def test_mrvm1_keeps_a_class_of_two_labels_with_a_relevance_vector_of_its_own(
    linear_term,
):
    # mRVM1's shared precision asks a sample for sum_k q_ik**2 > K s_i: the
    # two samples of class 2 serve that class alone and never pass it, so the
    # fit used to predict class 2 for neither (lost_classes_ == [2]). The
    # class's own test q_i2**2 > s_i passes: one of them becomes a relevance
    # vector of class 2 alone, with a weight of zero in the other classes.
    X, y = _rare_class()
    model, caught = _fit_recording_warnings(
        MulticlassRVC(method="mrvm1", linear_term=linear_term), X, y
    )
    assert caught == []
    assert model.lost_classes_.size == 0
    np.testing.assert_array_equal(model.predict(X[y == 2]), [2, 2])
    keeper = np.flatnonzero(model.alpha_[:, 2] != model.alpha_[:, 0])
    assert keeper.size == 1 and y[model.relevance_indices_[keeper[0]]] == 2
    np.testing.assert_array_equal(model.coef_[keeper[0], :2], 0.0)
    assert model.coef_[keeper[0], 2] > 0
    assert model.predict_proba([[1.55]])[0, 2] > 0.5


def test_mrvm1_warm_start_judges_its_keepers_again():
    X, y = _rare_class()
    model = MulticlassRVC(method="mrvm1", warm_start=True).fit(X, y)
    more = np.vstack([X, [[3.1], [0.1]]])
    model.fit(more, np.append(y, [1, 0]))
    assert model.start_ == "warm" and model.lost_classes_.size == 0
    # Still one class-2 relevance vector of its own, not carried as shared.
    shared = np.all(model.alpha_ == model.alpha_[:, :1], axis=1)
    assert np.sum(~shared) == 1


def test_mrvm1_a_class_whose_own_test_fails_is_still_reported_lost():
    # Class 2's two samples sit inside class 0's cluster: no sample of it
    # explains its labels better than its sparsity, the class stays lost
    # and LostClassWarning says so.
    rng = np.random.RandomState(0)
    X = np.concatenate([rng.normal(0, 0.3, 20), rng.normal(3, 0.3, 20), [0.0, 0.05]])
    y = np.array([0] * 20 + [1] * 20 + [2] * 2)
    model, caught = _fit_recording_warnings(
        MulticlassRVC(method="mrvm1"), X[:, None], y
    )
    np.testing.assert_array_equal(model.lost_classes_, [2])
    assert [w.category for w in caught] == [LostClassWarning]
    assert np.all(model.alpha_ == model.alpha_[:, :1])
