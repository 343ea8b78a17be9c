"""Learning from imperfect inspections: reports, soft evidence, the learners.

The default (``inspections=None``) and a single perfect method must give the
paper's behaviour bit for bit; an imperfect method's reports are drawn from
its confusion model with the learner's seed and learnt as soft evidence.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skrbal import synthetic_decision_process
from skrbal._learning import soft_rows
from skrbal.active import ActiveLearner, RiskBasedLearner
from skrbal.budget import CostThreshold, SpendCap
from skrbal.inspection import (
    InspectionMethod,
    perfect_inspection,
    report_posterior,
    simulate_reports,
    weighted_copies,
)
from skrbal.metrics import campaign_summary
from skrbal.mixture import BayesianGMMClassifier, SemiSupervisedGMMClassifier
from skrbal.query import EVPISampling

PROCESS = synthetic_decision_process()
# 20 % of the cost, detects damage (states 3, 4) 85 % of the time, 4 % false calls.
CHEAP = InspectionMethod(
    name="cheap",
    cost=1.4,
    confusion=[[0.96, 0.04], [0.96, 0.04], [0.15, 0.85], [0.15, 0.85]],
    outcomes=["no damage found", "damage found"],
)
INIT = [3, 4, 5, 90, 91, 92, 170, 171, 172, 250, 251, 252]
CENTRES = np.array([[-5.19, -0.01], [-0.66, -0.06], [5.75, -0.11], [19.11, 0.02]])


def _stream(seed, n_cycles=3, per_state=80, spread=4.0):
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([1, 2, 3, 4], per_state), n_cycles)
    X = CENTRES[y - 1] + rng.normal(scale=spread, size=(y.size, 2))
    return X, y


def _gmm():
    return BayesianGMMClassifier(mean_precision_prior=0.1)


# ------------------------------------------------------------------ reports
def test_simulated_reports_follow_the_confusion_model_and_the_seed():
    y = np.repeat([1, 2, 3, 4], 20000)
    reports = simulate_reports(y, PROCESS, CHEAP, random_state=3)
    found = (reports == "damage found").reshape(4, -1).mean(axis=1)
    # Binomial standard error sqrt(0.15 * 0.85 / 20000) = 0.0025; 5 of them.
    np.testing.assert_allclose(found, [0.04, 0.04, 0.85, 0.85], atol=0.0125)
    again = simulate_reports(y, PROCESS, CHEAP, random_state=3)
    np.testing.assert_array_equal(reports, again)
    perfect = simulate_reports(y, PROCESS, perfect_inspection(PROCESS), 3)
    np.testing.assert_array_equal(perfect, y)


def test_an_outcome_of_probability_zero_is_never_drawn():
    # Rows summing to 1 - 1e-9 leave a gap past the last positive column.
    method = InspectionMethod(
        name="gap",
        cost=1.0,
        confusion=[[1 - 1e-9, 0.0], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],
    )
    reports = simulate_reports(np.ones(50000, dtype=int), PROCESS, method, 0)
    assert np.all(reports == 0)


def test_weighted_copies_and_their_errors():
    X, y, w = weighted_copies(
        [[1.0], [2.0]], [[0.0, 1.0, 0.0], [0.2, 0.0, 0.8]], ["a", "b", "c"]
    )
    assert X.ravel().tolist() == [1.0, 2.0, 2.0]
    assert y.tolist() == ["b", "a", "c"]
    assert w.tolist() == [1.0, 0.2, 0.8]
    with pytest.raises(ValueError, match="posterior must have shape"):
        weighted_copies([[1.0]], [[0.5, 0.5]], [1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        weighted_copies([[1.0]], [[-0.5, 1.5]], [1, 2])
    # A row summing to 2 gave twice the weight of a label, silently.
    with pytest.raises(ValueError, match=r"posterior row 1 sums to 2, not 1"):
        weighted_copies([[1.0], [2.0]], [[0.5, 0.5], [1.0, 1.0]], [1, 2])
    with pytest.raises(ValueError, match=r"posterior row 0 sums to 0\.5, not 1"):
        weighted_copies([[1.0]], [[0.5, 0.0]], [1, 2])


# ------------------------------------------------------------ soft evidence
def test_weighted_copies_are_fractional_responsibilities_for_the_gmm():
    """One copy per state with weight p is the conjugate update with count p."""
    X, y = _stream(0, n_cycles=1)
    posterior = np.array([0.1, 0.0, 0.3, 0.6])
    x_new = np.array([[4.0, 1.0]])
    model = _gmm().fit(X, y)
    X_c, y_c, w_c = weighted_copies(x_new, posterior[None], PROCESS.classes_)
    model.partial_fit(X_c, y_c, sample_weight=w_c)
    # Independently: the count grows by p, the mean moves by p / (n + p).
    before = _gmm().fit(X, y)
    np.testing.assert_allclose(
        model.class_count_, before.class_count_ + posterior, rtol=1e-12
    )
    data_mean = np.array([X[y == k].mean(axis=0) for k in (1, 2, 3, 4)])
    counts = np.bincount(y)[1:]
    expected = (counts[:, None] * data_mean + posterior[:, None] * x_new) / (
        counts + posterior
    )[:, None]
    fresh = _gmm().fit(
        np.vstack([X, X_c]), np.r_[y, y_c], sample_weight=np.r_[np.ones(len(y)), w_c]
    )
    np.testing.assert_allclose(model.means_, fresh.means_, rtol=1e-10)
    np.testing.assert_allclose(model.covariances_, fresh.covariances_, rtol=1e-10)
    # The MAP mean shrinks to the prior mean (zero) with precision 0.1.
    shrunk = (
        (counts + posterior)[:, None] * expected / (counts + posterior + 0.1)[:, None]
    )
    np.testing.assert_allclose(model.means_, shrunk, rtol=1e-10)


def test_soft_rows_rule_per_estimator():
    x = np.array([[1.0, 2.0]])
    soft = np.array([[0.2, 0.0, 0.8, 0.0]])
    one_hot = np.array([[0.0, 0.0, 1.0, 0.0]])
    classes = PROCESS.classes_
    # sample_weight in partial_fit (GaussianNB): weighted copies.
    X_r, y_r, w, key = soft_rows(GaussianNB(), x, soft, classes, "partial_fit")
    assert y_r.tolist() == [1, 3] and w.tolist() == [0.2, 0.8]
    assert key == "sample_weight"
    # A one-hot posterior is a plain label, unweighted.
    X_r, y_r, w, _ = soft_rows(GaussianNB(), x, one_hot, classes, "partial_fit")
    assert y_r.tolist() == [3] and w is None and X_r is x
    # No sample_weight (k-NN): the most probable state.
    X_r, y_r, w, key = soft_rows(KNeighborsClassifier(), x, soft, classes)
    assert y_r.tolist() == [3] and w is None and key is None
    # A Pipeline routes the weights to its final step.
    pipe = make_pipeline(StandardScaler(), GaussianNB())
    *_, key = soft_rows(pipe, x, soft, classes)
    assert key == "gaussiannb__sample_weight"
    assert soft_rows(pipe, x, soft, classes, "partial_fit")[2] is None


def test_semi_supervised_gmm_sample_weight():
    X, y = _stream(1, n_cycles=1)
    y_semi = np.where(np.arange(len(y)) % 4 == 0, y, -1)
    plain = SemiSupervisedGMMClassifier(classes=[1, 2, 3, 4]).fit(X, y_semi)
    ones = SemiSupervisedGMMClassifier(classes=[1, 2, 3, 4]).fit(
        X, y_semi, sample_weight=np.ones(len(y))
    )
    # Unit weights are the unweighted fit, to the bit.
    np.testing.assert_array_equal(plain.means_, ones.means_)
    assert plain.lower_bound_trace_ == ones.lower_bound_trace_
    # A weight of zero removes the sample.
    keep = np.arange(len(y)) != 7
    weights = keep.astype(float)
    zero = SemiSupervisedGMMClassifier(classes=[1, 2, 3, 4], tol=1e-12).fit(
        X, y_semi, sample_weight=weights
    )
    dropped = SemiSupervisedGMMClassifier(classes=[1, 2, 3, 4], tol=1e-12).fit(
        X[keep], y_semi[keep]
    )
    np.testing.assert_allclose(zero.means_, dropped.means_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"[Nn]egative"):
        SemiSupervisedGMMClassifier().fit(X, y, sample_weight=-np.ones(len(y)))


# ------------------------------------------------------------ the learner
def _history_frames(learner):
    steps = learner.history_.steps[
        ["evpi", "inspected", "known", "action", "perfect_action", "utility"]
    ]
    queries = learner.history_.queries.drop(
        columns=["method", "report", *(f"posterior_{c}" for c in PROCESS.classes_)],
        errors="ignore",
    )
    return steps, queries


@pytest.mark.parametrize(
    ("estimator", "semi"),
    [(GaussianNB(), None), (_gmm(), None), (_gmm(), "em"), (_gmm(), "smoothing")],
)
def test_one_perfect_method_is_todays_learner_bit_for_bit(estimator, semi):
    X, y = _stream(2)
    Xt, yt = _stream(3, n_cycles=1)
    params = dict(estimator=estimator, process=PROCESS, semi_supervised=semi)
    today = RiskBasedLearner(**params).fit(X, y, initial=INIT, X_test=Xt, y_test=yt)
    perfect = RiskBasedLearner(
        **params, inspections=[perfect_inspection(PROCESS)], random_state=0
    ).fit(X, y, initial=INIT, X_test=Xt, y_test=yt)
    assert today.history_.totals["n_inspections"] > 3
    steps_a, queries_a = _history_frames(today)
    steps_b, queries_b = _history_frames(perfect)
    pd.testing.assert_frame_equal(steps_a, steps_b, check_exact=True)
    pd.testing.assert_frame_equal(queries_a, queries_b, check_exact=True)
    np.testing.assert_array_equal(today.labelled_indices_, perfect.labelled_indices_)
    proba = today.predict_proba(Xt)
    np.testing.assert_array_equal(proba, perfect.predict_proba(Xt))
    totals = perfect.history_.totals
    for key, value in today.history_.totals.items():
        assert totals[key] == value, key
    assert totals["spend_by_method"] == {"perfect": totals["inspection_spend"]}
    # The perfect method reports the true state, and its posterior is one-hot.
    queries = perfect.history_.queries.iloc[1:]
    assert (queries["report"] == queries["label"]).all()
    assert (queries["method"] == "perfect").all()


def test_random_query_with_one_perfect_method_is_todays_baseline():
    X, y = _stream(4)
    today = RiskBasedLearner(
        estimator=GaussianNB(),
        process=PROCESS,
        strategy="random",
        n_queries=9,
        random_state=5,
    ).fit(X, y, initial=INIT)
    perfect = clone(today).set_params(inspections=[perfect_inspection(PROCESS)])
    perfect.fit(X, y, initial=INIT)
    pd.testing.assert_frame_equal(*(_history_frames(r)[0] for r in (today, perfect)))


def test_imperfect_reports_in_the_walk():
    X, y = _stream(8)
    methods = [perfect_inspection(PROCESS), CHEAP]
    learner = RiskBasedLearner(
        estimator=_gmm(), process=PROCESS, inspections=methods, random_state=11
    ).fit(X, y, initial=INIT)
    again = clone(learner).fit(X, y, initial=INIT)
    steps, queries = learner.history_.steps, learner.history_.queries.iloc[1:]
    pd.testing.assert_frame_equal(steps, again.history_.steps)  # seeded
    used = steps.loc[steps["inspected"], "method"]
    assert set(used) == {"perfect", "cheap"}  # the test exercises both
    assert steps.loc[~steps["inspected"], "method"].isna().all()
    posterior = queries[[f"posterior_{c}" for c in PROCESS.classes_]].to_numpy()
    np.testing.assert_allclose(posterior.sum(axis=1), 1.0, rtol=1e-12)
    # Each posterior is Bayes' rule on the belief before the inspection.
    cheap = queries[queries["method"] == "cheap"]
    assert set(cheap["report"]) <= {"no damage found", "damage found"}
    # The agent acts on the posterior where the report is not a label.
    soft = cheap.index[posterior[cheap.index - 1].max(axis=1) < 1]
    soft_steps = queries.loc[soft, "step"].to_numpy()
    expected = PROCESS.optimal_action(posterior[soft - 1])
    np.testing.assert_array_equal(steps["action"].to_numpy()[soft_steps], expected)
    assert not steps["known"].to_numpy()[soft_steps].any()
    assert not np.isin(soft_steps, learner.labelled_indices_).any()
    totals = learner.history_.totals
    counts = used.value_counts()
    assert totals["n_inspections_by_method"] == {
        "perfect": counts["perfect"],
        "cheap": counts["cheap"],
    }
    assert totals["spend_by_method"]["cheap"] == pytest.approx(1.4 * counts["cheap"])
    assert totals["inspection_spend"] == pytest.approx(
        7.0 * counts["perfect"] + 1.4 * counts["cheap"]
    )
    # The first posterior recomputed from the initial model's belief.
    first = queries.iloc[0]
    model = _gmm().set_params(classes=PROCESS.classes_).fit(X[INIT], y[INIT])
    belief = model.predict_proba(X[[int(first["step"])]])
    method = methods[[m.name for m in methods].index(first["method"])]
    np.testing.assert_allclose(
        posterior[0],
        report_posterior(belief, [first["report"]], PROCESS, method)[0],
        rtol=1e-12,
    )


def test_random_baseline_spends_the_same_per_method():
    X, y = _stream(9)
    learner = RiskBasedLearner(
        estimator=GaussianNB(),
        process=PROCESS,
        inspections=[perfect_inspection(PROCESS), CHEAP],
        random_state=1,
    ).fit(X, y, initial=INIT)
    baseline = learner.random_baseline(random_state=2).fit(X, y, initial=INIT)
    assert (
        baseline.history_.totals["spend_by_method"]
        == learner.history_.totals["spend_by_method"]
    )


def test_learner_rejects_what_it_cannot_do():
    X, y = _stream(10, n_cycles=1)
    methods = [perfect_inspection(PROCESS), CHEAP]
    with pytest.raises(ValueError, match="callable strategy"):
        RiskBasedLearner(
            estimator=GaussianNB(),
            process=PROCESS,
            inspections=methods,
            strategy=lambda evpi, proba, process: evpi > 1,
        ).fit(X, y, initial=INIT[:6])
    with pytest.raises(ValueError, match="n_queries as a dict"):
        RiskBasedLearner(
            estimator=GaussianNB(),
            process=PROCESS,
            inspections=methods,
            strategy="random",
            n_queries=3,
        ).fit(X, y, initial=INIT[:6])
    with pytest.raises(ValueError, match="'cheap' is imperfect"):
        RiskBasedLearner(
            estimator=_gmm(),
            process=PROCESS,
            inspections=methods,
            semi_supervised="smoothing",
        ).fit(X, y, initial=INIT[:6])
    with pytest.raises(TypeError, match="methods must be a sequence"):
        RiskBasedLearner(
            estimator=GaussianNB(), process=PROCESS, inspections=CHEAP
        ).fit(X, y, initial=INIT[:6])


def test_budget_policy_with_inspections_budgets_the_chosen_method():
    # The learner and the agent share one decision kernel: a budget policy
    # with inspection methods sees the EVSI of the method of largest net value
    # and that method's cost, so CostThreshold() decides as strategy='evpi'
    # (the EVSI rule), and a spend cap is charged each method's own cost.
    X, y = _stream(30, n_cycles=2)
    methods = [perfect_inspection(PROCESS), CHEAP]
    params = dict(estimator=GaussianNB(), process=PROCESS, inspections=methods)
    rule = RiskBasedLearner(**params, random_state=0).fit(X, y, initial=INIT)
    policy = RiskBasedLearner(**params, budget=CostThreshold(), random_state=0).fit(
        X, y, initial=INIT
    )
    assert rule.history_.totals["n_inspections"] > 0
    pd.testing.assert_frame_equal(rule.history_.steps, policy.history_.steps)
    limit = 0.5 * rule.history_.totals["inspection_spend"]
    capped = RiskBasedLearner(
        **params,
        budget=CostThreshold() & SpendCap(limit=limit, period=len(y)),
        random_state=0,
    ).fit(X, y, initial=INIT)
    spend = capped.history_.budget_state["policies"][1]["spent"]
    assert spend == pytest.approx(capped.history_.totals["inspection_spend"])
    assert 0 < spend <= limit


def test_campaign_summary_by_method_checks_its_input():
    methods = [perfect_inspection(PROCESS), CHEAP]
    summary = campaign_summary([1, 2, 4, 4], [0, 0, 1, 1], PROCESS, methods=methods)
    assert summary.n_inspections == 0 and summary.spend_by_method == {
        "perfect": 0.0,
        "cheap": 0.0,
    }
    with pytest.raises(ValueError, match="index of the method used"):
        campaign_summary(
            [1, 2], [0, 0], PROCESS, inspected=[True, False], methods=methods
        )
    with pytest.raises(ValueError, match="must index the 2 methods"):
        campaign_summary([1, 2], [0, 0], PROCESS, inspected=[2, -1], methods=methods)


# ------------------------------------------------------------ the pool
def _pool_learner(inspections=None, update="auto"):
    X, y = _stream(12, n_cycles=1)
    first = [0, 1, 80, 81, 160, 161, 240, 241]
    learner = ActiveLearner(
        estimator=GaussianNB(),
        query_strategy=EVPISampling(process=PROCESS, inspections=inspections),
        X_training=X[first],
        y_training=y[first],
        update=update,
    )
    return learner, X, y


def test_pool_strategy_with_one_perfect_method_ranks_as_evpi():
    learner, X, _ = _pool_learner()
    idx, evpi = learner.query(X, n_instances=5, return_metrics=True)[::2]
    perfect, *_ = _pool_learner([perfect_inspection(PROCESS)])
    idx_p, net = perfect.query(X, n_instances=5, return_metrics=True)[::2]
    np.testing.assert_array_equal(idx, idx_p)
    np.testing.assert_array_equal(net, evpi - PROCESS.inspection_cost)
    choice, _ = perfect.query_strategy.choose(perfect, X[idx])
    np.testing.assert_array_equal(choice, np.where(net > 0, 0, -1))


def test_teach_report_perfect_is_teach_and_soft_is_weighted():
    learner, X, y = _pool_learner([perfect_inspection(PROCESS), CHEAP])
    twin = clone(learner.estimator)
    taught, *_ = _pool_learner()
    rows = [30, 100, 200]
    learner.teach_report(X[rows], y[rows], perfect_inspection(PROCESS))
    taught.teach(X[rows], y[rows])
    np.testing.assert_array_equal(learner.estimator.theta_, taught.estimator.theta_)
    np.testing.assert_array_equal(learner.estimator.var_, taught.estimator.var_)
    assert learner.X_reported_ is None and len(learner.reports_) == 3
    # A cheap report: weighted copies through partial_fit.
    before = clone(learner.estimator).fit(learner.X_training, learner.y_training)
    belief = learner.predict_proba(X[[120]])
    reports = simulate_reports(y[[120]], PROCESS, CHEAP, random_state=4)
    posterior = learner.teach_report(X[[120]], reports, CHEAP)
    np.testing.assert_allclose(
        posterior, report_posterior(belief, reports, PROCESS, CHEAP), rtol=1e-12
    )
    assert posterior.max() < 1
    X_c, y_c, w_c = weighted_copies(X[[120]], posterior, PROCESS.classes_)
    expected = before.partial_fit(X_c, y_c, sample_weight=w_c)
    np.testing.assert_allclose(learner.estimator.theta_, expected.theta_, rtol=1e-12)
    assert learner.reports_[-1]["method"] == "cheap"
    # A later refit keeps the report as weighted copies.
    learner.set_params(update="refit")
    learner.teach(X[[150]], y[[150]])
    refit = clone(twin).fit(
        np.vstack([learner.X_training, X_c]),
        np.r_[learner.y_training, y_c],
        sample_weight=np.r_[np.ones(len(learner.y_training)), w_c],
    )
    np.testing.assert_allclose(learner.estimator.theta_, refit.theta_, rtol=1e-12)


def test_teach_report_needs_a_process():
    learner = ActiveLearner(
        estimator=GaussianNB(), X_training=[[0.0], [1.0]], y_training=[1, 2]
    )
    with pytest.raises(ValueError, match="needs a query strategy with a decision"):
        learner.teach_report([[0.5]], ["damage found"], CHEAP)


def test_a_report_the_model_deems_impossible_is_trusted_alone():
    # GaussianNB cannot be told the labels: without state 2 in the initial
    # set, its belief gives 2 probability zero and the perfect report of a 2
    # is impossible under it. The learner trusts the report, as today.
    X, y = _stream(13)
    initial = INIT[:3] + INIT[6:]
    today = RiskBasedLearner(estimator=GaussianNB(), process=PROCESS)
    with pytest.warns(UserWarning, match="no class for"):
        today.fit(X, y, initial=initial)
    perfect = clone(today).set_params(inspections=[perfect_inspection(PROCESS)])
    with pytest.warns(UserWarning, match="no class for"):
        perfect.fit(X, y, initial=initial)
    assert 2 in y[today.labelled_indices_]
    pd.testing.assert_frame_equal(
        *(_history_frames(r)[0] for r in (today, perfect)), check_exact=True
    )


def test_em_keeps_reports_as_fixed_weighted_responsibilities():
    X, y = _stream(14, n_cycles=2)
    learner = RiskBasedLearner(
        estimator=_gmm(),
        process=PROCESS,
        inspections=[CHEAP],
        semi_supervised="em",
        random_state=3,
    ).fit(X, y, initial=INIT[:9])
    queries = learner.history_.queries.iloc[1:]
    posterior = queries[[f"posterior_{c}" for c in PROCESS.classes_]].to_numpy()
    soft = posterior.max(axis=1) < 1
    assert soft.sum() >= 2  # the test exercises soft reports
    # The final model, refitted independently: every step seen up to the
    # last inspection, unlabelled (-1) unless known, the reported steps
    # replaced by their weighted copies.
    last = int(queries["step"].iloc[-1])
    soft_steps = queries["step"].to_numpy()[soft]
    known = np.zeros(len(y), dtype=bool)
    known[learner.labelled_indices_] = True
    keep = (np.arange(len(y)) <= last) | known
    keep[soft_steps] = False
    X_c, y_c, w_c = weighted_copies(X[soft_steps], posterior[soft], PROCESS.classes_)
    expected = SemiSupervisedGMMClassifier(
        **_gmm().get_params(), warm_start=False
    ).set_params(classes=PROCESS.classes_)
    expected.fit(
        np.vstack([X[keep], X_c]),
        np.r_[np.where(known[keep], y[keep], -1), y_c],
        sample_weight=np.r_[np.ones(keep.sum()), w_c],
    )
    np.testing.assert_allclose(learner.estimator_.means_, expected.means_, rtol=1e-9)


def test_imperfect_reports_keep_dataframe_rows_on_refit():
    # The soft rows of imperfect reports are appended to the labelled rows
    # for a refit; a DataFrame stream must stay one so a ColumnTransformer
    # can still select its columns by name.
    X, y = _stream(8)
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(tag="x")
    by_name = make_pipeline(
        ColumnTransformer([("num", "passthrough", ["a", "b"])]), GaussianNB()
    )
    params = dict(
        process=PROCESS,
        inspections=[perfect_inspection(PROCESS), CHEAP],
        strategy="random",
        n_queries={"perfect": 3, "cheap": 12},
        update="refit",
        random_state=11,
    )
    learner = RiskBasedLearner(estimator=by_name, **params).fit(frame, y, initial=INIT)
    plain = RiskBasedLearner(estimator=make_pipeline(GaussianNB()), **params).fit(
        X, y, initial=INIT
    )
    queries = learner.history_.queries
    posterior = queries[[f"posterior_{c}" for c in PROCESS.classes_]].to_numpy()
    assert (posterior.max(axis=1) < 1).any()  # some reports are soft rows
    pd.testing.assert_frame_equal(learner.history_.steps, plain.history_.steps)
    pd.testing.assert_frame_equal(queries, plain.history_.queries)


def test_a_report_that_warrants_it_is_followed_up_by_a_perfect_inspection():
    X, y = _stream(8)
    methods = [perfect_inspection(PROCESS), CHEAP]
    learner = RiskBasedLearner(
        estimator=_gmm(),
        process=PROCESS,
        inspections=methods,
        follow_up=True,
        random_state=11,
    ).fit(X, y, initial=INIT)
    history = learner.history_
    steps, queries = history.steps, history.queries.iloc[1:]
    followed = queries[queries["follow_up"].notna()]
    assert len(followed) > 0  # the test exercises the follow-up
    assert set(followed["method"]) == {"cheap"}
    assert set(followed["follow_up"]) == {"perfect"}
    columns = [f"posterior_{c}" for c in PROCESS.classes_]
    # A followed-up step learns its true state and acts on it.
    for _, row in followed.iterrows():
        step = int(row["step"])
        np.testing.assert_array_equal(
            row[columns].to_numpy(float), PROCESS.classes_ == y[step]
        )
        assert step in learner.labelled_indices_
        assert steps["action"][step] == PROCESS.perfect_information_action(y[[step]])[0]
    # Exactly where the report's posterior has an EVPI above the perfect
    # cost: every other cheap report is acted on as it is.
    kernel_cost = methods[0].cost_
    acted = queries[(queries["method"] == "cheap") & queries["follow_up"].isna()]
    model = _gmm().set_params(classes=PROCESS.classes_)
    first = queries.iloc[0]
    if first["method"] == "cheap":
        belief = model.fit(X[INIT], y[INIT]).predict_proba(X[[int(first["step"])]])
        posterior = report_posterior(belief, [first["report"]], PROCESS, CHEAP)
        warranted = PROCESS.evpi(posterior)[0] > kernel_cost
        assert warranted == pd.notna(first["follow_up"])
    assert (PROCESS.evpi(acted[columns].to_numpy(float)) <= kernel_cost).all()
    # The follow-ups are paid for.
    totals = history.totals
    counts = steps.loc[steps["inspected"], "method"].value_counts()
    n_follow = len(followed)
    assert totals["n_follow_ups"] == n_follow
    assert totals["n_inspections_by_method"] == {
        "perfect": counts.get("perfect", 0) + n_follow,
        "cheap": counts["cheap"],
    }
    assert totals["inspection_spend"] == pytest.approx(
        7.0 * (counts.get("perfect", 0) + n_follow) + 1.4 * counts["cheap"]
    )
    assert (steps["follow_up"].notna()).sum() == n_follow


def test_follow_up_needs_a_perfect_method_and_a_bool():
    X, y = _stream(8)
    with pytest.raises(ValueError, match="reveals the state"):
        RiskBasedLearner(
            estimator=_gmm(), process=PROCESS, inspections=[CHEAP], follow_up=True
        ).fit(X, y, initial=INIT)
    with pytest.raises(ValueError, match="needs inspections"):
        RiskBasedLearner(estimator=_gmm(), process=PROCESS, follow_up=True).fit(
            X, y, initial=INIT
        )
    with pytest.raises(ValueError, match="follow_up must be a bool"):
        RiskBasedLearner(estimator=_gmm(), process=PROCESS, follow_up="yes").fit(
            X, y, initial=INIT
        )
