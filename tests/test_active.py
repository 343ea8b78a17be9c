import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skrbal import synthetic_decision_process
from skrbal._learning import clone_for as _with_process_classes
from skrbal.active import ActiveLearner, RiskBasedLearner
from skrbal.budget import MinimumGap
from skrbal.exceptions import MissingStatesWarning
from skrbal.mixture import BayesianGMMClassifier
from skrbal.query import EVPISampling, evpi_sampling, random_sampling

# Three labelled steps per state: GaussianNB is overconfident on one per class.
INIT = [3, 4, 5, 90, 91, 92, 170, 171, 172, 250, 251, 252]
CENTRES = np.array([[-5.19, -0.01], [-0.66, -0.06], [5.75, -0.11], [19.11, 0.02]])


def _stream(seed, n_cycles=3, per_state=80, spread=4.0):
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([1, 2, 3, 4], per_state), n_cycles)
    X = CENTRES[y - 1] + rng.normal(scale=spread, size=(y.size, 2))
    return X, y


class CountingNB(GaussianNB):
    """GaussianNB that counts how it is trained."""

    calls: list

    def fit(self, X, y, sample_weight=None):
        type(self).calls.append(("fit", len(y)))
        return super().fit(X, y, sample_weight=sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        type(self).calls.append(("partial_fit", len(y)))
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)


# ------------------------------------------------------------ ActiveLearner


def test_active_learner_modal_interface():
    X, y = _stream(0)
    process = synthetic_decision_process()
    CountingNB.calls = []
    learner = ActiveLearner(
        estimator=CountingNB(),
        query_strategy=EVPISampling(process=process),
        X_training=X[[0, 100, 200, 300]],
        y_training=y[[0, 100, 200, 300]],
    )
    for _ in range(3):
        idx, rows = learner.query(X, n_instances=2)
        np.testing.assert_array_equal(rows, X[idx])
        learner.teach(rows, y[idx])
    assert learner.X_training.shape == (10, 2)
    assert learner.y_training.shape == (10,)
    assert CountingNB.calls == [("fit", 4)] + [("partial_fit", 2)] * 3
    assert 0 <= learner.score(X, y) <= 1
    assert learner.predict(X).shape == y.shape
    np.testing.assert_allclose(learner.predict_proba(X).sum(axis=1), 1)
    idx, rows, scores = learner.query(X, n_instances=3, return_metrics=True)
    assert scores.shape == (3,) and np.all(np.diff(scores) <= 0)


def test_teach_partial_fit_matches_refit():
    X, y = _stream(1)
    init = [0, 1, 80, 81]
    incremental = ActiveLearner(
        estimator=GaussianNB(), X_training=X[init], y_training=y[init]
    )
    refit = ActiveLearner(
        estimator=GaussianNB(), X_training=X[init], y_training=y[init], update="refit"
    )
    for batch in ([2, 3], [82], [4, 83, 84]):
        incremental.teach(X[batch], y[batch])
        refit.teach(X[batch], y[batch])
    np.testing.assert_allclose(
        incremental.predict_proba(X), refit.predict_proba(X), rtol=1e-7, atol=1e-12
    )
    assert incremental.n_partial_fits_ == 3 and refit.n_partial_fits_ == 0


def test_new_label_forces_refit():
    X, y = _stream(2)
    learner = ActiveLearner(
        estimator=GaussianNB(), X_training=X[[0, 1]], y_training=y[[0, 1]]
    )
    learner.teach(X[[80]], y[[80]])  # class 2 is new: partial_fit cannot add it
    assert learner.n_partial_fits_ == 0 and learner.n_refits_ == 2
    assert learner.classes_.tolist() == [1, 2]


def test_active_learner_with_pipeline_and_modal_strategy_shape():
    X, y = _stream(3)
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    learner = ActiveLearner(
        estimator=pipe,
        query_strategy=random_sampling,
        X_training=X[::40],
        y_training=y[::40],
    )
    idx, rows = learner.query(X, n_instances=5, random_state=0)
    learner.teach(rows, y[idx])
    assert learner.n_refits_ == 2  # a Pipeline has no partial_fit


def test_active_learner_errors():
    X, y = _stream(4)
    with pytest.raises(ValueError, match="given together"):
        ActiveLearner(estimator=GaussianNB(), X_training=X)
    with pytest.raises(ValueError, match="update must be one of"):
        ActiveLearner(estimator=GaussianNB(), update="sometimes")
    learner = ActiveLearner(estimator=GaussianNB(), X_training=X, y_training=y)
    with pytest.raises(ValueError, match="X has 2 samples but y has 1"):
        learner.teach(X[:2], y[:1])
    with pytest.raises(ValueError, match="no partial_fit"):
        ActiveLearner(
            estimator=LogisticRegression(),
            X_training=X,
            y_training=y,
            update="partial_fit",
        ).teach(X[:1], y[:1])


def test_active_learner_clone():
    learner = ActiveLearner(estimator=GaussianNB(var_smoothing=1e-3))
    cloned = clone(learner)
    assert cloned.get_params()["estimator__var_smoothing"] == 1e-3


# ------------------------------------------------------------ RiskBasedLearner


def _naive_run(estimator, process, X, y, initial, update):
    """Step-by-step reference: predict one step, maybe inspect, act."""
    model = _with_process_classes(estimator, process)
    known = np.zeros(len(y), dtype=bool)
    known[initial] = True
    labelled = list(np.unique(initial))
    model.fit(X[labelled], y[labelled])
    evpi, inspected, action = [], [], []
    for t in range(len(y)):
        proba = process.align_proba(model.predict_proba(X[t : t + 1]), model.classes_)
        value = process.evpi(proba)[0]
        inspect = (not known[t]) and value > process.inspection_cost
        if inspect:
            known[t] = True
            labelled.append(t)
            if update == "partial_fit" and y[t] in model.classes_:
                model.partial_fit(X[[t]], y[[t]])
            else:
                model.fit(X[labelled], y[labelled])
        evpi.append(value)
        inspected.append(inspect)
        chosen = process.optimal_action(proba)[0]
        action.append(
            process.perfect_information_action(y[[t]])[0] if known[t] else chosen
        )
    return np.array(evpi), np.array(inspected), np.array(action), labelled


@pytest.mark.parametrize("update", ["refit", "partial_fit"])
@pytest.mark.parametrize("block_size", [1, 7, 256])
def test_stream_equals_naive_loop(update, block_size):
    X, y = _stream(5)
    process = synthetic_decision_process()
    initial = INIT
    learner = RiskBasedLearner(
        estimator=GaussianNB(),
        process=process,
        update="auto" if update == "partial_fit" else "refit",
        block_size=block_size,
    ).fit(X, y, initial=initial)
    evpi, inspected, action, labelled = _naive_run(
        GaussianNB(), process, X, y, initial, update
    )
    steps = learner.history_.steps
    assert inspected.sum() > 3  # the comparison must exercise updates
    np.testing.assert_array_equal(steps["inspected"].to_numpy(), inspected)
    np.testing.assert_array_equal(steps["action"].to_numpy(), action)
    np.testing.assert_allclose(steps["evpi"].to_numpy(), evpi, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(learner.labelled_indices_, labelled)


def test_stream_history_and_totals():
    X, y = _stream(6)
    Xt, yt = _stream(7, n_cycles=1)
    process = synthetic_decision_process()
    learner = RiskBasedLearner(estimator=GaussianNB(), process=process).fit(
        X, y, initial=INIT, X_test=Xt, y_test=yt
    )
    steps, queries, totals = (
        learner.history_.steps,
        learner.history_.queries,
        learner.history_.totals,
    )
    n_insp = int(steps["inspected"].sum())
    assert n_insp > 0
    assert totals["n_inspections"] == n_insp == len(queries) - 1
    assert totals["inspection_spend"] == pytest.approx(7.0 * n_insp)
    assert totals["regret"] >= 0
    assert (steps["evpi"][steps["inspected"]] > 7).all()
    np.testing.assert_array_equal(
        queries["step"].iloc[1:].to_numpy(), np.flatnonzero(steps["inspected"])
    )
    np.testing.assert_array_equal(
        queries["label"].iloc[1:].to_numpy(), y[steps["inspected"].to_numpy()]
    )
    proportions = queries[[f"proportion_{c}" for c in (1, 2, 3, 4)]].to_numpy()
    np.testing.assert_allclose(proportions.sum(axis=1), 1)
    assert queries["decision_accuracy"].between(0, 1).all()
    assert queries["f1_macro"].between(0, 1).all()
    # where a label is known the agent acts on it
    known = steps["inspected"] | steps["known"]
    assert (steps["action"][known] == steps["perfect_action"][known]).all()


def test_random_baseline_matches_inspection_count():
    X, y = _stream(8)
    process = synthetic_decision_process()
    evpi_run = RiskBasedLearner(estimator=GaussianNB(), process=process).fit(
        X, y, initial=INIT
    )
    baseline = evpi_run.random_baseline(random_state=0).fit(X, y, initial=INIT)
    n = evpi_run.history_.totals["n_inspections"]
    assert n > 0
    assert baseline.history_.totals["n_inspections"] == n
    again = evpi_run.random_baseline(random_state=0).fit(X, y, initial=INIT)
    np.testing.assert_array_equal(again.labelled_indices_, baseline.labelled_indices_)


def test_callable_query_policy():
    X, y = _stream(9)
    process = synthetic_decision_process()

    def every_confused_step(evpi, proba, process):
        return proba.max(axis=1) < 0.6

    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=process, strategy=every_confused_step
    ).fit(X, y, initial=INIT)
    steps = learner.history_.steps
    assert steps["inspected"].sum() > 0


def test_pipeline_without_classes_param_missing_states():
    """Initial set with two of four states; the pipeline learns the others."""
    X, y = _stream(10)
    process = synthetic_decision_process()
    learner = RiskBasedLearner(
        estimator=make_pipeline(StandardScaler(), GaussianNB()), process=process
    )
    with pytest.warns(MissingStatesWarning):
        learner.fit(X, y, initial=[0, 1, 90, 91])
    # Absent states get zero belief, so the run proceeds on the known ones.
    assert learner.estimator_.classes_.tolist() == [1, 2]
    assert learner.history_.totals["n_decisions"] == len(y)
    assert np.isfinite(learner.history_.steps["evpi"]).all()


@pytest.mark.parametrize(
    "params, fit_kwargs, message",
    [
        ({"strategy": "sometimes"}, {}, "strategy must be one of"),
        ({"strategy": "random"}, {}, "needs n_queries"),
        ({"block_size": 0}, {}, "block_size must be a positive"),
        ({"update": "never"}, {}, "update must be one of"),
        ({"history": "steps"}, {}, "history must be one of"),
        ({}, {"initial": []}, "at least one labelled"),
        ({}, {"initial": [10**6]}, "initial indices must lie"),
        ({"strategy": "random", "n_queries": 10**6}, {}, "exceeds the"),
    ],
)
def test_stream_learner_errors(params, fit_kwargs, message):
    X, y = _stream(11)
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process(), **params
    )
    with pytest.raises(ValueError, match=message):
        learner.fit(X, y, **{"initial": [0], **fit_kwargs})


def test_stream_learner_unknown_label():
    X, y = _stream(12)
    y = y.copy()
    y[5] = 9
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process()
    )
    with pytest.raises(ValueError, match="unknown label 9"):
        learner.fit(X, y, initial=[0])


# ------------------------------------------- labels handed over or warned about
# Initial labelled set with states 1 and 2 only (the stream has all four).
PARTIAL = [0, 1, 90, 91]


def _caught(record, category=MissingStatesWarning):
    return [w for w in record if issubclass(w.category, category)]


def test_clone_for_gives_nested_classes():
    process = synthetic_decision_process()
    model = _with_process_classes(
        make_pipeline(StandardScaler(), BayesianGMMClassifier()), process
    )
    np.testing.assert_array_equal(model[-1].classes, [1, 2, 3, 4])
    # A classes parameter the user set is left alone.
    mine = _with_process_classes(
        BayesianGMMClassifier(classes=[1, 2, 3, 4, 5]), process
    )
    assert mine.classes == [1, 2, 3, 4, 5]


def test_stream_pipeline_is_told_every_state():
    """The user guide's Pipeline must not stop inspecting for a missing state."""
    X, y = _stream(10)
    learner = RiskBasedLearner(
        estimator=make_pipeline(StandardScaler(), BayesianGMMClassifier()),
        process=synthetic_decision_process(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingStatesWarning)
        learner.fit(X, y, initial=PARTIAL)
    assert learner.estimator_.classes_.tolist() == [1, 2, 3, 4]
    assert learner.history_.totals["n_inspections"] > 0
    assert learner.history_.warnings == []
    assert (learner.history_.queries["n_missing_states"] == 0).all()


def test_stream_warns_once_and_records_missing_states():
    X, y = _stream(10)
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process()
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        learner.fit(X, y, initial=PARTIAL)
    caught = _caught(record)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "[3, 4]" in message and "impossible" in message
    assert learner.history_.warnings == [message]
    assert learner.history_.totals["n_warnings"] == 1
    missing = learner.history_.queries["n_missing_states"]
    assert missing.iloc[0] == 2
    assert missing.iloc[-1] == 4 - len(learner.estimator_.classes_)


def test_evpi_sampling_warns_about_missing_states():
    X, y = _stream(10)
    clf = GaussianNB().fit(X[PARTIAL], y[PARTIAL])
    with pytest.warns(MissingStatesWarning, match=r"\[3, 4\]"):
        EVPISampling(process=synthetic_decision_process())(clf, X)
    full = GaussianNB().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingStatesWarning)
        evpi_sampling(full, X, process=synthetic_decision_process())


def test_active_learner_gives_pipeline_the_process_states():
    X, y = _stream(10)
    learner = ActiveLearner(
        estimator=make_pipeline(StandardScaler(), BayesianGMMClassifier()),
        query_strategy=EVPISampling(process=synthetic_decision_process()),
        X_training=X[PARTIAL],
        y_training=y[PARTIAL],
    )
    assert learner.classes_.tolist() == [1, 2, 3, 4]
    assert learner.warnings_ == []
    learner.teach(X[[170]], y[[170]])
    assert learner.classes_.tolist() == [1, 2, 3, 4]


def test_active_learner_warns_about_missing_states():
    X, y = _stream(10)
    with pytest.warns(MissingStatesWarning, match=r"\[3, 4\]"):
        learner = ActiveLearner(
            estimator=GaussianNB(),
            query_strategy=EVPISampling(process=synthetic_decision_process()),
            X_training=X[PARTIAL],
            y_training=y[PARTIAL],
        )
    assert len(learner.warnings_) == 1


# ---------------------------------------------------------- atomic teach


def _pool_learner():
    X, y = _stream(13)
    learner = ActiveLearner(
        estimator=GaussianNB(),
        query_strategy=EVPISampling(process=synthetic_decision_process()),
        X_training=X[INIT],
        y_training=y[INIT],
    )
    return learner, X, y


@pytest.mark.parametrize(
    "make_bad, message",
    [
        (lambda X, y: (np.array([[np.nan, 0.0]]), y[[5]]), "NaN"),
        (lambda X, y: (X[[5]], np.array([9])), "unknown label 9"),
        (lambda X, y: (np.ones((1, 3)), y[[5]]), "X has 3 features per sample"),
        (lambda X, y: (X[[5]], np.array(["1"])), "y holds string labels"),
        (
            lambda X, y: (X[[5, 6]], np.array([1, "2"], dtype=object)),
            "y mixes label types",
        ),
        (lambda X, y: (X[[5, 6]], [1, "2"]), "y mixes label types"),
    ],
)
def test_teach_is_atomic(make_bad, message):
    learner, X, y = _pool_learner()
    X_before, y_before = learner.X_training.copy(), learner.y_training.copy()
    X_bad, y_bad = make_bad(X, y)
    with pytest.raises(ValueError, match=message):
        learner.teach(X_bad, y_bad)
    np.testing.assert_array_equal(learner.X_training, X_before)
    np.testing.assert_array_equal(learner.y_training, y_before)
    assert learner.y_training.dtype == y_before.dtype
    # the learner still works
    learner.teach(X[[5]], y[[5]])
    assert len(learner.y_training) == len(y_before) + 1


def test_set_params_validates_like_init():
    learner, X, y = _pool_learner()
    with pytest.raises(ValueError, match="update must be one of"):
        learner.set_params(update="sometimes")
    assert learner.update == "auto"
    with pytest.raises(TypeError, match="query_strategy must be callable"):
        learner.set_params(query_strategy=3)
    with pytest.raises(ValueError, match="X_training has 2 samples but y_training"):
        learner.set_params(X_training=X[:2], y_training=y[:3])
    assert len(learner.y_training) == len(INIT)
    learner.set_params(X_training=X, y_training=y)
    assert learner.estimator.class_count_.sum() == len(y)


# ---------------------------------------------- messages naming the argument


def test_float_actions_are_named():
    X, y = _stream(11)
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process()
    )
    with pytest.raises(ValueError, match="actions must be integer action indices"):
        learner.fit(X, y, initial=INIT, actions=np.zeros(len(y)))
    with pytest.raises(ValueError, match="actions must index the process's 2"):
        learner.fit(X, y, initial=INIT, actions=np.full(len(y), 5))


def test_mixed_type_labels_are_named():
    X, y = _stream(11)
    mixed = y.astype(object)
    mixed[7] = "2"
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process()
    )
    with pytest.raises(ValueError, match="y mixes label types"):
        learner.fit(X, mixed, initial=INIT)


# ------------------------------------------------ the estimator API (issue 13)
def _frame(X, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "f0": X[:, 0],
            "site": rng.choice(["north", "south"], size=len(X)),
            "f1": X[:, 1],
        }
    )


def test_stream_keeps_dataframes_for_a_column_transformer():
    X, y = _stream(21, n_cycles=2)
    frame = _frame(X)
    by_name = make_pipeline(
        ColumnTransformer([("num", StandardScaler(), ["f0", "f1"])]),
        BayesianGMMClassifier(),
    )
    process = synthetic_decision_process()
    learner = RiskBasedLearner(estimator=by_name, process=process)
    learner.fit(frame, y, initial=INIT, X_test=frame.iloc[:50], y_test=y[:50])
    plain = RiskBasedLearner(
        estimator=make_pipeline(StandardScaler(), BayesianGMMClassifier()),
        process=process,
    ).fit(X, y, initial=INIT)
    assert learner.history_.totals["n_inspections"] > 3
    np.testing.assert_array_equal(learner.labelled_indices_, plain.labelled_indices_)
    pd.testing.assert_frame_equal(learner.history_.steps, plain.history_.steps)
    assert learner.n_features_in_ == 3
    np.testing.assert_array_equal(learner.feature_names_in_, ["f0", "site", "f1"])
    np.testing.assert_array_equal(learner.classes_, [1, 2, 3, 4])
    np.testing.assert_allclose(
        learner.predict_proba(frame.iloc[:20]), plain.predict_proba(X[:20])
    )
    with pytest.raises(ValueError, match="feature names"):
        learner.predict(frame[["f1", "site", "f0"]])


def test_stream_em_keeps_dataframes():
    X, y = _stream(22, n_cycles=1, per_state=40)
    by_name = make_pipeline(
        ColumnTransformer([("num", StandardScaler(), ["f0", "f1"])]),
        BayesianGMMClassifier(),
    )
    learner = RiskBasedLearner(
        estimator=by_name,
        process=synthetic_decision_process(),
        semi_supervised="em",
    ).fit(_frame(X), y, initial=[3, 4, 45, 46, 85, 86, 125, 126])
    assert learner.history_.totals["n_decisions"] == len(y)
    assert hasattr(learner.estimator_[-1], "transduction_")


def test_stream_learner_is_not_fitted_before_fit():
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process()
    )
    for method in (learner.predict, learner.predict_proba):
        with pytest.raises(NotFittedError):
            method(np.zeros((2, 2)))
    X, y = _stream(23, n_cycles=1)
    learner.fit(X, y, initial=INIT)
    assert learner.n_features_in_ == 2 and not hasattr(learner, "feature_names_in_")
    with pytest.raises(ValueError, match="features"):
        learner.predict(np.zeros((2, 3)))


# ------------------------------------------------ per-query history (issue 14)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"strategy": "random", "n_queries": 30, "random_state": 0},
        {"semi_supervised": "smoothing", "estimator": BayesianGMMClassifier()},
        {"budget": MinimumGap(gap=20)},
    ],
)
def test_history_queries_keeps_the_records_and_totals(params, monkeypatch):
    X, y = _stream(24)
    Xt, yt = _stream(25, n_cycles=1)
    params = {"estimator": GaussianNB(), **params}
    process = synthetic_decision_process()
    full = RiskBasedLearner(process=process, **params)
    full.fit(X, y, initial=INIT, X_test=Xt, y_test=yt)
    # Small chunks, so the totals are summed over several.
    monkeypatch.setattr("skrbal.active._walk._TOTALS_CHUNK", 100)
    lean = RiskBasedLearner(process=process, history="queries", **params)
    lean.fit(X, y, initial=INIT, X_test=Xt, y_test=yt)
    assert lean.history_.steps is None
    assert full.history_.totals["n_inspections"] > 3
    pd.testing.assert_frame_equal(lean.history_.queries, full.history_.queries)
    np.testing.assert_array_equal(lean.labelled_indices_, full.labelled_indices_)
    assert lean.history_.totals.keys() == full.history_.totals.keys()
    for key, value in full.history_.totals.items():
        assert lean.history_.totals[key] == pytest.approx(value, rel=1e-12), key


def test_history_queries_memory_does_not_grow_with_the_stream():
    import tracemalloc

    X, y = _stream(26, n_cycles=250)  # 80,000 steps
    learner = RiskBasedLearner(
        estimator=GaussianNB(),
        process=synthetic_decision_process(),
        history="queries",
        strategy="random",
        n_queries=10,
        random_state=0,
    )
    learner.fit(X[:2000], y[:2000], initial=INIT)  # imports and caches first
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        learner.fit(X, y, initial=INIT)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # history='full' keeps 34 bytes per step and peaks over 100; what is left
    # is transient (the labels' lookup, the random draw).
    assert (kept - base) / len(y) < 1.0
    assert (peak - base) / len(y) < 60.0


def test_history_queries_refuses_inspections_before_walking():
    from skrbal.inspection import InspectionMethod

    cheap = InspectionMethod(
        name="cheap",
        cost=1.4,
        confusion=[[0.96, 0.04], [0.96, 0.04], [0.15, 0.85], [0.15, 0.85]],
        outcomes=["no damage found", "damage found"],
    )
    X, y = _stream(27, n_cycles=1)
    learner = RiskBasedLearner(
        estimator=GaussianNB(),
        process=synthetic_decision_process(),
        inspections=[cheap],
        history="queries",
    )
    with pytest.raises(ValueError, match="history='queries' does not support"):
        learner.fit(X, y, initial=INIT)


def test_query_is_read_with_a_future_warning_under_its_new_names():
    # query= (deprecated) was the budget policy, a strategy or a callable;
    # it is still read, as budget= or strategy= (the agent's vocabulary).
    process = synthetic_decision_process()
    X, y = _stream(0)
    new = RiskBasedLearner(
        estimator=GaussianNB(), process=process, budget=MinimumGap(gap=20)
    ).fit(X, y, initial=INIT)
    old = RiskBasedLearner(
        estimator=GaussianNB(), process=process, query=MinimumGap(gap=20)
    )
    with pytest.warns(FutureWarning, match="budget=...*strategy="):
        old.fit(X, y, initial=INIT)
    pd.testing.assert_frame_equal(old.history_.steps, new.history_.steps)
    with pytest.warns(FutureWarning):
        random = RiskBasedLearner(
            estimator=GaussianNB(), process=process, query="random", n_queries=3
        ).fit(X, y, initial=INIT)
    assert random.history_.totals["n_inspections"] == 3
    with pytest.raises(ValueError, match="budget decides for strategy='evpi'"):
        RiskBasedLearner(
            estimator=GaussianNB(),
            process=process,
            strategy="random",
            n_queries=3,
            budget=MinimumGap(gap=20),
        ).fit(X, y, initial=INIT)
