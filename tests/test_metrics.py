"""Tests for skrbal.metrics: decision accuracy, regret, proportions, scorers."""

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.naive_bayes import GaussianNB

from skrbal import DecisionProcess, synthetic_decision_process, z24_decision_process
from skrbal._scores import macro_f1
from skrbal.metrics import (
    campaign_summary,
    class_proportions,
    decision_accuracy,
    make_decision_scorer,
    utility_regret,
)

# Q(y, d) of the synthetic process, rows y = 1..4, columns d = nothing, repair.
Q_SYNTHETIC = np.array([[9.5, -20.0], [5.0, -20.0], [-11.0, -20.05], [-75.0, -20.85]])

# Beliefs leading to: nothing, nothing, repair, repair.
Y_HAND = np.array([1, 4, 4, 3])
PROBA_HAND = np.array(
    [
        [1.0, 0.0, 0.0, 0.0],  # EU = (9.5, -20)      -> nothing; right for 1
        [0.9, 0.0, 0.0, 0.1],  # EU = (1.05, -20.085) -> nothing; wrong for 4
        [0.5, 0.0, 0.0, 0.5],  # EU = (-32.75, -20.425) -> repair; right for 4
        [0.0, 0.0, 0.0, 1.0],  # repair; wrong for 3
    ]
)


@pytest.fixture
def process():
    return synthetic_decision_process()


@pytest.fixture
def string_process():
    return DecisionProcess(
        transition=[[[0.9, 0.1], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]],
        state_utility=[10.0, -100.0],
        action_utility=[0.0, -20.0],
        inspection_cost=2.0,
        classes=["ok", "bad"],
    )


def _dirichlet_beliefs(rng, n, k):
    # Sparse-ish beliefs so that every action gets chosen sometimes.
    return rng.dirichlet(np.full(k, 0.3), size=n)


# ---------------------------------------------------------------------- #
# decision_accuracy and utility_regret
# ---------------------------------------------------------------------- #
def test_hand_computed_accuracy_and_regret(process):
    assert decision_accuracy(Y_HAND, PROBA_HAND, process) == 0.5
    # (54.15 + 9.05) / 4: missing a failure, then an unnecessary repair.
    assert utility_regret(Y_HAND, PROBA_HAND, process) == pytest.approx(15.8)


def test_sample_weight(process):
    weight = [1.0, 1.0, 0.0, 2.0]
    assert decision_accuracy(
        Y_HAND, PROBA_HAND, process, sample_weight=weight
    ) == pytest.approx(0.25)
    assert utility_regret(
        Y_HAND, PROBA_HAND, process, sample_weight=weight
    ) == pytest.approx((54.15 + 2 * 9.05) / 4)


def test_classes_reorder_and_subset_columns(process):
    reversed_cols = PROBA_HAND[:, ::-1]
    assert (
        decision_accuracy(Y_HAND, reversed_cols, process, classes=[4, 3, 2, 1]) == 0.5
    )
    # A classifier that only knows classes 1 and 4: two columns suffice.
    two_cols = PROBA_HAND[:, [3, 0]]
    assert utility_regret(Y_HAND, two_cols, process, classes=[4, 1]) == pytest.approx(
        15.8
    )


def test_perfect_beliefs_give_accuracy_one_and_zero_regret(process):
    rng = np.random.default_rng(0)
    y = rng.integers(1, 5, size=200)
    proba = np.eye(4)[y - 1]
    assert decision_accuracy(y, proba, process) == 1.0
    assert utility_regret(y, proba, process) == 0.0


@pytest.mark.parametrize("factory", [synthetic_decision_process, z24_decision_process])
def test_regret_is_non_negative_and_matches_loop(factory):
    process = factory()
    q = process.state_action_utility
    rng = np.random.default_rng(1)
    proba = _dirichlet_beliefs(rng, 300, 4)
    y = rng.integers(1, 5, size=300)
    expected = []
    correct = []
    for label, belief in zip(y, proba):
        chosen = int(np.argmax(belief @ q))
        best = int(np.argmax(q[label - 1]))
        expected.append(q[label - 1, best] - q[label - 1, chosen])
        correct.append(chosen == best)
    per_sample = np.array(expected)
    assert (per_sample >= 0).all()
    assert 0 < np.mean(correct) < 1, "the beliefs should make some mistakes"
    assert utility_regret(y, proba, process) == pytest.approx(per_sample.mean())
    assert decision_accuracy(y, proba, process) == pytest.approx(np.mean(correct))


def test_string_labels(string_process):
    # Q = [[-1, -10], [-100, -10]]: do nothing when ok, repair when bad.
    y = np.array(["ok", "bad", "bad"])
    proba = np.array([[0.0, 1.0], [0.0, 1.0], [0.5, 0.5]])  # columns: bad, ok
    assert decision_accuracy(y, proba, string_process, classes=["bad", "ok"]) == (
        pytest.approx(2 / 3)
    )
    # Sample 1 believes ok (do nothing) while bad: -10 - (-100) = 90.
    assert utility_regret(
        y, proba, string_process, classes=["bad", "ok"]
    ) == pytest.approx(30.0)


@pytest.mark.parametrize("metric", [decision_accuracy, utility_regret])
def test_errors(metric, process, string_process):
    with pytest.raises(ValueError, match="3 samples but proba has 4 rows"):
        metric(Y_HAND[:3], PROBA_HAND, process)
    with pytest.raises(ValueError, match="unknown label 7"):
        metric([1, 2, 7, 1], PROBA_HAND, process)
    with pytest.raises(ValueError, match="unknown label 9"):
        metric(Y_HAND, np.full((4, 2), 0.5), process, classes=[1, 9])
    with pytest.raises(ValueError, match="unknown label 1"):
        metric([1, 1], [[0.5, 0.5], [0.5, 0.5]], string_process)
    with pytest.raises(ValueError, match="y_true must be 1-d"):
        metric(Y_HAND[:, None], PROBA_HAND, process)
    with pytest.raises(ValueError, match="y_true is empty"):
        metric([], np.zeros((0, 4)), process)
    with pytest.raises(ValueError, match="proba must be 2-d"):
        metric(Y_HAND, PROBA_HAND[0], process)
    with pytest.raises(ValueError, match="sums to"):
        metric(Y_HAND, PROBA_HAND * 0.5, process)
    with pytest.raises(ValueError, match="sample_weight has shape"):
        metric(Y_HAND, PROBA_HAND, process, sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative"):
        metric(Y_HAND, PROBA_HAND, process, sample_weight=[1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="process must be a DecisionProcess"):
        metric(Y_HAND, PROBA_HAND, "synthetic")


# ---------------------------------------------------------------------- #
# class_proportions
# ---------------------------------------------------------------------- #
def test_class_proportions():
    np.testing.assert_allclose(
        class_proportions([3, 1, 3, 3], [1, 2, 3, 4]), [0.25, 0.0, 0.75, 0.0]
    )
    # The order of classes is the order of the result.
    np.testing.assert_allclose(
        class_proportions(["b", "a", "b"], ["b", "c", "a"]), [2 / 3, 0.0, 1 / 3]
    )
    rng = np.random.default_rng(2)
    y = rng.integers(1, 5, size=1000)
    result = class_proportions(y, [1, 2, 3, 4])
    assert result.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(result, np.bincount(y, minlength=5)[1:] / 1000)


def test_class_proportions_errors():
    with pytest.raises(ValueError, match="unknown label 5"):
        class_proportions([1, 5], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="distinct"):
        class_proportions([1], [1, 1, 2])
    with pytest.raises(ValueError, match="y is empty"):
        class_proportions([], [1, 2])
    with pytest.raises(ValueError, match="non-empty 1-d"):
        class_proportions([1], [])


# ---------------------------------------------------------------------- #
# campaign_summary
# ---------------------------------------------------------------------- #
def test_campaign_summary_hand_computed(process):
    summary = campaign_summary(
        [1, 4, 3, 4], [0, 0, 1, 1], process, inspected=[False, False, True, True]
    )
    utility = 9.5 - 75.0 - 20.05 - 20.85
    perfect = 9.5 - 20.85 - 11.0 - 20.85
    assert summary.n_decisions == 4
    assert summary.n_inspections == 2
    assert summary.inspection_spend == 14.0
    assert summary.utility == pytest.approx(utility)
    assert summary.perfect_information_utility == pytest.approx(perfect)
    assert summary.regret == pytest.approx(54.15 + 9.05)
    assert summary.net_utility == pytest.approx(utility - 14.0)
    assert summary.decision_accuracy == 0.5


def test_campaign_summary_agrees_with_regret(process):
    rng = np.random.default_rng(3)
    proba = _dirichlet_beliefs(rng, 100, 4)
    y = rng.integers(1, 5, size=100)
    summary = campaign_summary(y, process.optimal_action(proba), process)
    assert summary.n_inspections == 0 and summary.inspection_spend == 0.0
    assert summary.regret == pytest.approx(100 * utility_regret(y, proba, process))
    assert summary.decision_accuracy == decision_accuracy(y, proba, process)
    assert summary.net_utility == summary.utility


def test_campaign_summary_errors(process):
    with pytest.raises(ValueError, match="actions has shape"):
        campaign_summary([1, 2], [0], process)
    with pytest.raises(ValueError, match="inspected has shape"):
        campaign_summary([1, 2], [0, 0], process, inspected=[True])
    with pytest.raises(ValueError, match="boolean mask"):
        campaign_summary([1, 2], [0, 0], process, inspected=[1, 0])
    with pytest.raises(ValueError, match="action must hold integer action indices"):
        campaign_summary([1, 2], [0, 2], process)
    with pytest.raises(ValueError, match="unknown label 0"):
        campaign_summary([0, 2], [0, 0], process)


# ---------------------------------------------------------------------- #
# make_decision_scorer
# ---------------------------------------------------------------------- #
def _four_class_data(n_per_class=40):
    rng = np.random.default_rng(4)
    means = np.array([[-5.0, 0.0], [-1.0, 0.0], [4.0, 0.0], [12.0, 0.0]])
    # Sorted by class, as a degradation sequence is.
    y = np.repeat([1, 2, 3, 4], n_per_class)
    X = means[y - 1] + rng.normal(scale=2.0, size=(y.size, 2))
    return X, y


def _manual_scores(estimator, X, y, cv, process, metric):
    scores = []
    for train, test in cv.split(X, y):
        fitted = estimator.fit(X[train], y[train])
        proba = fitted.predict_proba(X[test])
        scores.append(metric(y[test], proba, process, classes=fitted.classes_))
    return np.array(scores)


def test_scorer_in_cross_val_score_with_missing_classes(process):
    X, y = _four_class_data()
    # Unshuffled folds of class-sorted data: every training fold lacks the
    # class it is tested on, so predict_proba has 3 columns for 4 states.
    cv = KFold(n_splits=4)
    assert all(len(np.unique(y[train])) == 3 for train, _ in cv.split(X))
    for name, metric, sign in [
        ("accuracy", decision_accuracy, 1.0),
        ("regret", utility_regret, -1.0),
    ]:
        scorer = make_decision_scorer(process, metric=name)
        scores = cross_val_score(GaussianNB(), X, y, scoring=scorer, cv=cv)
        expected = sign * _manual_scores(GaussianNB(), X, y, cv, process, metric)
        np.testing.assert_allclose(scores, expected)
    # The fold tested on class 4 never saw it, so it cannot decide to repair.
    assert scores[3] < 0


def test_scorer_in_grid_search(process):
    X, y = _four_class_data()
    cv = KFold(n_splits=3, shuffle=True, random_state=0)
    grid = GridSearchCV(
        LogisticRegression(max_iter=500),
        {"C": [1e-4, 1.0]},
        scoring=make_decision_scorer(process, metric="regret"),
        cv=cv,
    )
    grid.fit(X, y)
    expected = [
        -_manual_scores(
            LogisticRegression(C=c, max_iter=500), X, y, cv, process, utility_regret
        ).mean()
        for c in [1e-4, 1.0]
    ]
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], expected)
    assert (grid.cv_results_["mean_test_score"] < 0).all()
    # Greater is better: the least regret wins.
    assert grid.best_index_ == int(np.argmax(expected))


def test_scorer_with_string_labels(string_process):
    rng = np.random.default_rng(5)
    y = np.repeat(["ok", "bad"], 30)
    X = np.where(y == "ok", 0.0, 3.0)[:, None] + rng.normal(size=(60, 1))
    scorer = make_decision_scorer(string_process)
    clf = LogisticRegression().fit(X, y)
    expected = decision_accuracy(
        y, clf.predict_proba(X), string_process, classes=clf.classes_
    )
    assert scorer(clf, X, y) == expected
    assert 0.5 < expected <= 1.0


def test_scorer_errors(process):
    with pytest.raises(ValueError, match="metric must be one of"):
        make_decision_scorer(process, metric="f1")
    with pytest.raises(ValueError, match="process must be a DecisionProcess"):
        make_decision_scorer(None)
    X, y = _four_class_data(5)
    regressor = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="has no classes_"):
        make_decision_scorer(process)(regressor, X, y)
    assert "metric='regret'" in repr(make_decision_scorer(process, metric="regret"))


@pytest.mark.parametrize("metric", ["accuracy", "regret"])
def test_scorer_routes_sample_weight_in_cross_validate(process, metric):
    # Weighted decision scores must reach the scorer through metadata routing
    # and equal the scores computed by hand on each test fold.
    import sklearn
    from sklearn.model_selection import cross_validate

    rng = np.random.default_rng(3)
    y = np.repeat([1, 2, 3, 4], 30)
    X = (
        np.array([0.0, 5.0, 10.0, 20.0])[y - 1][:, None]
        + rng.normal(0, 3, 120)[:, None]
    )
    weight = rng.uniform(0.1, 5.0, y.shape[0])
    cv = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_decision_scorer(process, metric=metric)
        scorer.set_score_request(sample_weight=True)
        model = GaussianNB().set_fit_request(sample_weight=False)
        result = cross_validate(
            model, X, y, scoring=scorer, cv=cv, params={"sample_weight": weight}
        )
    expected = []
    metric_fn = decision_accuracy if metric == "accuracy" else utility_regret
    sign = 1.0 if metric == "accuracy" else -1.0
    for train, test in cv.split(X):
        fitted = GaussianNB().fit(X[train], y[train])
        value = metric_fn(
            y[test],
            fitted.predict_proba(X[test]),
            process,
            classes=fitted.classes_,
            sample_weight=weight[test],
        )
        expected.append(sign * value)
    np.testing.assert_allclose(result["test_score"], expected, rtol=1e-12)
    unweighted = cross_val_score(
        GaussianNB(), X, y, scoring=make_decision_scorer(process, metric=metric), cv=cv
    )
    assert not np.allclose(result["test_score"], unweighted)


def test_scorer_routes_sample_weight_in_grid_search(process):
    import sklearn

    rng = np.random.default_rng(4)
    y = np.repeat([1, 2, 3, 4], 20)
    X = np.array([0.0, 5.0, 10.0, 20.0])[y - 1][:, None] + rng.normal(0, 3, 80)[:, None]
    weight = rng.uniform(0.1, 5.0, y.shape[0])
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_decision_scorer(process).set_score_request(sample_weight=True)
        search = GridSearchCV(
            GaussianNB().set_fit_request(sample_weight=False),
            {"var_smoothing": [1e-9, 1e-3]},
            scoring=scorer,
            cv=2,
        ).fit(X, y, sample_weight=weight)
    assert np.isfinite(search.best_score_)


def test_scorer_request_needs_routing_enabled(process):
    with pytest.raises(RuntimeError, match="enable_metadata_routing"):
        make_decision_scorer(process).set_score_request(sample_weight=True)


def test_scorer_refuses_unrequested_sample_weight(process):
    # Without a request, routing must refuse the weights rather than drop them.
    import sklearn
    from sklearn.model_selection import cross_validate

    y = np.repeat([1, 2], 10)
    X = (
        np.r_[np.zeros(10), np.ones(10) * 9][:, None]
        + np.tile(np.arange(10), 2)[:, None] * 0.1
    )
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match="sample_weight"):
            cross_validate(
                GaussianNB().set_fit_request(sample_weight=False),
                X,
                y,
                scoring=make_decision_scorer(process),
                cv=2,
                params={"sample_weight": np.ones(20)},
            )


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), min_size=1, max_size=80),
    st.sampled_from(["int", "float", "str"]),
)
def test_macro_f1_is_sklearns_f1_score_bit_for_bit(pairs, kind):
    # The stream learner scores its held-out set after every query with
    # macro_f1 instead of sklearn's f1_score (a millisecond of input checks
    # per call); the numbers must not change.
    y_true, y_pred = (np.array(column) for column in zip(*pairs))
    if kind == "float":
        y_true, y_pred = y_true.astype(float), y_pred.astype(float)
    elif kind == "str":
        names = np.array(list("abcdef"))
        y_true, y_pred = names[y_true], names[y_pred]
    expected = f1_score(y_true, y_pred, average="macro", zero_division=0)
    assert macro_f1(y_true, y_pred) == expected


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=60),
    st.integers(0, 2**32 - 1),
    st.sampled_from([(1, 2, 3, 4), (1, 3, 4), (4, 2), (2,)]),
    st.sampled_from(["int", "str"]),
)
def test_held_out_scores_are_the_metrics_bit_for_bit(y, seed, columns, kind):
    # The stream learner scores its held-out set after every query with
    # HeldOutScores (the true states' actions and codes worked out once);
    # the numbers must be decision_accuracy's and macro_f1's, whatever
    # subset and order of the states the model's columns hold.
    from skrbal._scores import HeldOutScores

    process = synthetic_decision_process()
    y_true, classes = np.array(y), np.array(columns)
    if kind == "str":
        names = {1: "a", 2: "b", 3: "c", 4: "d"}
        process = process.set_params(classes=["a", "b", "c", "d"])
        y_true = np.array([names[v] for v in y])
        classes = np.array([names[v] for v in columns])
    proba = np.random.default_rng(seed).dirichlet(np.ones(classes.size), y_true.size)
    scores = HeldOutScores(y_true, process)
    for _ in range(2):  # the second call reuses the classes' codes
        accuracy, f1 = scores(proba, classes)
        assert accuracy == decision_accuracy(y_true, proba, process, classes=classes)
        predicted = classes[np.argmax(proba, axis=1)]
        assert f1 == macro_f1(y_true, predicted)
        assert f1 == f1_score(y_true, predicted, average="macro", zero_division=0)
