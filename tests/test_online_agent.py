"""The live agent: equivalence with the stream learner, requests, budgets, errors."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import (
    BayesianGMMClassifier,
    synthetic_decision_process,
    z24_decision_process,
)
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_degradation_stream, make_z24_like, stream_test_split
from skrbal.online import AgentStore, RequestError, RiskBasedAgent, StoreError

# ---------------------------------------------------------------------- #
# recorded streams: commissioning samples first, then the stream
# ---------------------------------------------------------------------- #


def _synthetic():
    X, y, actions = make_degradation_stream(n_cycles=2, n_per_cycle=300, random_state=0)
    split = stream_test_split(X, y, actions, initial_size=8, random_state=3)
    init = split.initial_indices
    rest = np.setdiff1d(np.arange(split.y_stream.size), init)
    # The record's repairs at a commissioning step move to the step before.
    acts = split.actions_stream.copy()
    for i in init[init > 0]:
        acts[i - 1] = max(acts[i - 1], acts[i])
    order = np.concatenate([init, rest])
    actions_full = np.concatenate([np.zeros(init.size, dtype=int), acts[rest]])
    return (
        split.X_stream[order],
        split.y_stream[order],
        init.size,
        synthetic_decision_process(),
        actions_full,
    )


def _z24():
    X, y, _ = make_z24_like(n_samples=600, damage_onset=480, random_state=0)
    rng = np.random.default_rng(0)
    init = np.sort([rng.choice(np.flatnonzero(y == c)) for c in (1, 2, 3, 4)])
    order = np.concatenate([init, np.setdiff1d(np.arange(y.size), init)])
    return X[order], y[order], init.size, z24_decision_process(), None


CASES = {"synthetic": _synthetic, "z24_like": _z24}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    return CASES[request.param]()


def _drive(agent, X, y, n0, actions=None):
    """Feed the stream one step at a time, returning each result at once."""
    evpi, inspected, decided = [], [], []
    if actions is not None:
        for step in range(n0):
            agent.record_action(step, int(actions[step]))
    for t in range(n0, y.size):
        row = agent.observe(X[t : t + 1]).iloc[0]
        if actions is not None:
            agent.record_action(t, int(actions[t]))
        evpi.append(row["evpi"])
        inspected.append(bool(row["inspect"]))
        if row["inspect"]:
            decided.append(agent.record_inspection(int(row["request_id"]), y[t]))
        else:
            decided.append(int(row["action"]))
    return np.array(evpi), np.array(inspected), np.array(decided)


@pytest.mark.parametrize(
    "semi_supervised, em_start",
    [
        (None, "labelled"),
        ("em", "labelled"),
        ("em", "previous"),
        ("smoothing", "labelled"),
    ],
)
def test_agent_decides_as_the_stream_learner(case, semi_supervised, em_start):
    X, y, n0, process, _ = case
    params = dict(
        estimator=BayesianGMMClassifier(),
        process=process,
        semi_supervised=semi_supervised,
        em_start=em_start,
    )
    learner = RiskBasedLearner(**params).fit(X, y, initial=np.arange(n0))
    with RiskBasedAgent(**params).fit(X[:n0], y[:n0]) as agent:
        evpi, inspected, decided = _drive(agent, X, y, n0)
        history = agent.history_.steps
    steps = learner.history_.steps.iloc[n0:]
    assert steps["inspected"].sum() > 0
    np.testing.assert_array_equal(inspected, steps["inspected"])
    np.testing.assert_array_equal(decided, steps["action"])
    np.testing.assert_allclose(evpi, steps["evpi"], rtol=1e-12, atol=1e-12)
    # what the caller was told is what the store holds
    np.testing.assert_array_equal(history["action"].iloc[n0:], decided)
    np.testing.assert_array_equal(history["evpi"].iloc[n0:], evpi)


def test_agent_smooths_with_the_actions_recorded_as_taken():
    X, y, n0, process, actions = _synthetic()
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(), process=process, semi_supervised="smoothing"
    ).fit(X, y, initial=np.arange(n0), actions=actions)
    own = RiskBasedLearner(
        estimator=BayesianGMMClassifier(), process=process, semi_supervised="smoothing"
    ).fit(X, y, initial=np.arange(n0))
    # the recorded actions matter: they change the pseudo-labels
    assert not np.array_equal(own.pseudo_labels_, learner.pseudo_labels_)
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(), process=process, semi_supervised="smoothing"
    ).fit(X[:n0], y[:n0]) as agent:
        _, inspected, _ = _drive(agent, X, y, n0, actions=actions)
        history = agent.history_.steps
    np.testing.assert_array_equal(inspected, learner.history_.steps["inspected"][n0:])
    np.testing.assert_array_equal(history["action"], actions)
    pseudo = agent._campaign.rule.pseudo
    np.testing.assert_array_equal(list(pseudo), learner.pseudo_labelled_indices_)
    np.testing.assert_array_equal(list(pseudo.values()), learner.pseudo_labels_)


# ---------------------------------------------------------------------- #
# a small agent for the mechanics
# ---------------------------------------------------------------------- #
MEANS = np.array([-5.0, -0.7, 5.8, 19.0])


def _samples(labels, seed=0):
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    return rng.normal(MEANS[labels - 1], 1.0)[:, None], labels


def _agent(**params):
    X0, y0 = _samples([1, 2, 3, 4, 1, 2, 3, 4])
    params.setdefault("estimator", GaussianNB(var_smoothing=0.05))
    params.setdefault("process", CHEAP)
    return RiskBasedAgent(**params).fit(X0, y0)


# Inspections cheap enough to be worth it between states 3 and 4 (x near 12.5).
CHEAP = synthetic_decision_process().set_params(inspection_cost=1.0)
AMBIGUOUS = np.array([[12.5], [12.6], [12.4], [12.55], [12.45]])


def _snapshot(agent):
    store = agent.store_
    return (
        store.history(agent.name).to_json(),
        store.requests(agent.name).to_json(),
        json.dumps(store.status(agent.name), sort_keys=True, default=str),
        agent.estimator_.predict_proba(AMBIGUOUS).tobytes(),
        agent._seq,
    )


def test_observe_returns_one_decision_per_row():
    with _agent() as agent:
        decisions = agent.observe(np.vstack([[-5.0], AMBIGUOUS[:1], [19.0]]))
        assert decisions.columns.tolist() == [
            "step", "timestamp", "belief_1", "belief_2", "belief_3", "belief_4",
            "evpi", "inspect", "request_id", "action", "action_name",
        ]  # fmt: skip
        np.testing.assert_array_equal(decisions["step"], [8, 9, 10])
        np.testing.assert_array_equal(decisions["inspect"], [False, True, False])
        assert decisions["request_id"].tolist() == [pd.NA, 1, pd.NA]
        np.testing.assert_array_equal(decisions["action"], [0, 1, 1])
        beliefs = decisions.filter(like="belief_").to_numpy()
        np.testing.assert_allclose(decisions["evpi"], CHEAP.evpi(beliefs))
        assert agent.observe(np.empty((0, 1))).shape[0] == 0


def test_one_block_decides_as_its_rows_one_by_one():
    # A call judges its rows by the model and the requests open when it
    # starts; with pending results ignored, a block is its rows one by one.
    X = np.vstack([AMBIGUOUS, [[-5.0]], AMBIGUOUS])
    with (
        _agent(pending_value="ignore") as one,
        _agent(name="other", pending_value="ignore") as block,
    ):
        rows = pd.concat([one.observe(X[i : i + 1]) for i in range(len(X))])
        together = block.observe(X)
    pd.testing.assert_frame_equal(rows.reset_index(drop=True), together)


def test_an_observation_like_a_pending_one_is_not_requested_again():
    # Issue 20: the one-step agent fed one observation per call kept asking
    # for near-duplicates of what was on its way. Counting the pending result
    # (a fantasy of its outcomes) stops that; ignoring it does not.
    with _agent(pending_value="ignore") as plain, _agent(name="p") as pending:
        asked = [bool(plain.observe(x[None])["inspect"].iloc[0]) for x in AMBIGUOUS]
        counted = [bool(pending.observe(x[None])["inspect"].iloc[0]) for x in AMBIGUOUS]
    assert asked == [True] * 5
    assert counted == [True, False, False, False, False]


def test_results_may_come_late_and_in_any_order():
    with _agent() as agent:
        decisions = agent.observe(AMBIGUOUS[:3])
        ids = decisions["request_id"].dropna().astype(int).tolist()
        assert ids == [1, 2, 3]  # the model learns nothing until a result
        before = agent.estimator_.class_count_.copy()
        agent.observe([[-5.0], [-4.0]])
        assert agent.record_inspection(3, 4) == 1  # optimal for failure: repair
        assert agent.record_inspection(1, 3) == 0
        np.testing.assert_array_equal(
            agent.estimator_.class_count_ - before, [0, 0, 1, 1]
        )
        status = agent.status()
        assert status["n_open"] == 1 and status["n_results"] == 2
        assert status["open_requests"][0]["request_id"] == 2
        assert status["labelled"] == {1: 2, 2: 2, 3: 3, 4: 3}
        assert status["spend"] == 2.0 and status["committed_spend"] == 3.0
        assert status["last_evpi"] == agent.last_evpi_
        history = agent.history_.steps
        assert history.loc[8, "label"] == 3 and history.loc[10, "label"] == 4
        assert history.loc[10, "action"] == 1  # acted after the result


def test_bad_results_raise_and_change_nothing():
    with _agent() as agent:
        agent.observe(AMBIGUOUS[:3])
        agent.record_inspection(1, 2)
        agent.cancel_request(2, reason="access road flooded")
        snapshot = _snapshot(agent)
        for request_id, label, match in [
            (9, 1, "not a request"),
            (True, 1, "not a request"),
            ("1", 1, "not a request"),
            (1, 2, "already has a result"),
            (2, 1, "was cancelled"),
            (3, 7, "unknown label 7"),
            (3, "minor", "label"),
            (3, True, "not labels of the process's states"),  # True == 1
            (3, np.True_, "not labels of the process's states"),
        ]:
            with pytest.raises(RequestError, match=match):
                agent.record_inspection(request_id, label)
            assert _snapshot(agent) == snapshot
        for request_id, match in [(1, "already has a result"), (2, "was cancelled")]:
            with pytest.raises(RequestError, match=match):
                agent.cancel_request(request_id)
        assert _snapshot(agent) == snapshot
        assert agent.store_.requests(agent.name)["note"][1] == "access road flooded"


def test_a_bool_is_not_a_state_when_commissioning():
    X0, _ = _samples([1, 2, 3, 4])
    # True == 1: a bool must not pass for state 1
    with pytest.raises(ValueError, match="True"):
        RiskBasedAgent(estimator=GaussianNB(), process=CHEAP).fit(X0, [True, 2, 3, 4])
    with pytest.raises(ValueError, match="not labels of the process's states"):
        RiskBasedAgent(
            estimator=GaussianNB(),
            process=synthetic_decision_process().set_params(classes=[0, 1, 2, 3]),
        ).fit(X0, np.array([True, False, True, False]))


def test_open_requests_are_capped():
    # (pending results ignored: the rows are near-duplicates of the pending)
    with _agent(max_open_requests=2, pending_value="ignore") as agent:
        first = agent.observe(AMBIGUOUS)
        np.testing.assert_array_equal(
            first["inspect"], [True, True, False, False, False]
        )
        agent.cancel_request(1)
        assert agent.observe(AMBIGUOUS[:2])["inspect"].tolist() == [True, False]
        assert agent.status()["n_open"] == 2


def test_a_step_gets_at_most_one_request(tmp_path):
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError

    from skrbal.online._sql import _schema as schema

    with _agent(store=str(tmp_path / "a.db")) as agent:
        agent.observe(AMBIGUOUS[:1])
        with pytest.raises(IntegrityError), agent.store_.engine.begin() as conn:
            conn.execute(
                insert(schema.requests).values(
                    agent_id=agent.agent_id_, request_id=2, step=8, status="open",
                    evpi=1.0, opened_seq=9,
                )
            )  # fmt: skip


def test_timestamps_keep_one_clock():
    with _agent() as agent:
        with pytest.raises(ValueError, match="commissioned without timestamps"):
            agent.observe(AMBIGUOUS[:1], timestamps=[1.8e9])
        assert agent.observe(AMBIGUOUS[:1])["step"].tolist() == [8]
    X0, y0 = _samples([1, 2, 3, 4])
    with RiskBasedAgent(estimator=GaussianNB(), process=CHEAP).fit(
        X0, y0, timestamps=[1.6e9, 1.6e9, 1.6e9 + 1, 1.6e9 + 2]
    ) as agent:
        stamps = pd.to_datetime(["2024-01-01", "2024-01-02"])
        decisions = agent.observe(AMBIGUOUS[:2], timestamps=stamps)
        # Datetimes in, datetimes out (#28.19); the agent counts in seconds.
        assert decisions["timestamp"].tolist() == stamps.tolist()
        assert agent.history()["timestamp"].tolist()[-2:] == [
            1704067200.0,
            1704153600.0,
        ]
        with pytest.raises(ValueError, match="must come with them"):
            agent.observe(AMBIGUOUS[:1])
        with pytest.raises(ValueError, match="go back in time"):
            agent.observe(AMBIGUOUS[:1], timestamps=[0.0])
        with pytest.raises(ValueError, match="non-decreasing"):
            agent.observe(AMBIGUOUS[:2], timestamps=[1.8e9, 1.7e9])
        with pytest.raises(ValueError, match="1 value"):
            agent.observe(AMBIGUOUS[:1], timestamps=[1.8e9, 1.9e9])
        assert agent.n_steps_ == 6


def test_bad_observations_and_actions_raise():
    with _agent() as agent:
        with pytest.raises(ValueError, match="X has 2 features"):
            agent.observe([[1.0, 2.0]])
        with pytest.raises(ValueError, match="NaN"):
            agent.observe([[np.nan]])
        with pytest.raises(ValueError, match="step must be an observed step"):
            agent.record_action(8, 0)
        with pytest.raises(ValueError, match="action must be an action index"):
            agent.record_action(0, 2)
        assert agent.n_steps_ == 8


def test_bad_parameters_raise():
    X0, y0 = _samples([1, 2, 3, 4])
    process = synthetic_decision_process()
    for params, match in [
        ({"semi_supervised": "self-training"}, "semi_supervised must be"),
        ({"update": "sometimes"}, "update must be"),
        ({"em_start": "random"}, "em_start must be"),
        ({"max_open_requests": 0}, "max_open_requests"),
        ({"name": ""}, "name must be"),
        ({"budget": "half"}, "budget must be a skrbal.budget.BudgetPolicy"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            RiskBasedAgent(estimator=GaussianNB(), process=process, **params).fit(
                X0, y0
            )
    with pytest.raises(ValueError, match="y: unknown label 5"):
        RiskBasedAgent(estimator=GaussianNB(), process=process).fit(X0, [1, 2, 3, 5])
    agent = RiskBasedAgent(estimator=GaussianNB(), process=process)
    with pytest.raises(StoreError, match="is not open"):
        agent.observe(X0)


def test_smoothing_learns_a_late_result_once():
    """A result older than the last anchor replaces that step's pseudo-label."""
    X0, y0 = _samples([1, 2, 3, 4])
    Xs, ys = _samples([1, 1, 2, 2, 3, 3, 3, 3, 2, 2], seed=1)
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=synthetic_decision_process(),
        semi_supervised="smoothing",
        max_open_requests=None,
    ).fit(X0, y0) as agent:
        decisions = agent.observe(Xs)
        ids = decisions["request_id"].dropna().astype(int).tolist()
        steps = decisions["step"][decisions["inspect"]].tolist()
        assert len(ids) >= 2
        # the later result first, then the earlier one
        agent.record_inspection(ids[-1], ys[steps[-1] - 4])
        agent.record_inspection(ids[0], ys[steps[0] - 4])
        labelled = len(agent._campaign.steps.labelled)
        pseudo = agent._campaign.rule.pseudo
        assert steps[0] not in pseudo
        # every step is taught once: as a label or as a pseudo-label
        assert agent.estimator_.class_count_.sum() == labelled + len(pseudo)


def test_store_url_or_object(tmp_path):
    path = tmp_path / "fleet.db"
    with _agent(store=path, name="a"):
        pass
    store = AgentStore(path)
    with _agent(store=store, name="b"):
        pass
    assert store.agent_names() == ["a", "b"]
    store.close()


def test_timestamps_of_results_and_commissioning():
    import datetime

    X0, y0 = _samples([1, 2, 3, 4])
    when = pd.to_datetime(["2023-06-01", "2023-06-02", "2023-06-03", "2023-06-04"])
    with RiskBasedAgent(estimator=GaussianNB(var_smoothing=0.05), process=CHEAP).fit(
        X0, y0, timestamps=when
    ) as agent:
        agent.observe(AMBIGUOUS[:1], timestamps=[np.datetime64("2024-01-01T00:00")])
        stamp = datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)
        agent.record_inspection(1, 4, timestamp=stamp)
        requests = agent.store_.requests(agent.name)
        assert requests["result_timestamp"][0] == 1704153600.0
        assert agent.history_.steps["timestamp"][0] == 1685577600.0
        with pytest.raises(ValueError, match="timestamps must be numbers"):
            agent.observe(AMBIGUOUS[:1], timestamps=["not a date"])


def test_configuration_of_functions_is_stable():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from skrbal.online._config import ConfigurationError, decode_config, encode_config

    pipe = make_pipeline(FunctionTransformer(np.log1p), GaussianNB())
    encoded = encode_config(pipe)
    assert "0x" not in json.dumps(encoded)  # no memory address
    assert encoded == encode_config(
        make_pipeline(FunctionTransformer(np.log1p), GaussianNB())
    )
    with pytest.raises(ConfigurationError, match="no JSON form"):
        decode_config(encoded)
    simple = make_pipeline(FunctionTransformer(), GaussianNB(var_smoothing=0.5))
    rebuilt = decode_config(json.loads(json.dumps(encode_config(simple))))
    assert repr(rebuilt) == repr(simple)


class _WarningNB(GaussianNB):
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        import warnings

        warnings.warn("few samples", UserWarning, stacklevel=2)
        return super().partial_fit(X, y, classes, sample_weight)


def test_warnings_of_a_fit_are_issued_once_and_stored(tmp_path):
    import warnings

    X0, y0 = _samples([1, 2, 3, 4, 1, 2, 3, 4])
    params = dict(estimator=_WarningNB(var_smoothing=0.05), process=CHEAP)
    with RiskBasedAgent(**params, store=tmp_path / "a.db").fit(X0, y0) as agent:
        agent.observe(AMBIGUOUS[:1])
        with pytest.warns(UserWarning, match="few samples") as record:
            agent.record_inspection(1, 4)
        assert len(record) == 1
        events = agent.store_.events(agent.name)
        assert events["kind"].tolist() == ["commission", "observe", "result"]
        assert events["payload"][2] == {
            "label": 4,
            "warnings": ["UserWarning: few samples"],
            "action": 1,  # what a retry with a client key returns
            "timestamp": None,  # logged, so that verify covers the request's
        }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the replay is silent
        RiskBasedAgent.from_store(
            tmp_path / "a.db", estimator=_WarningNB(var_smoothing=0.05)
        ).close()


def test_plain_agent_keeps_only_labelled_and_awaited_rows():
    rng = np.random.default_rng(1)
    with _agent(max_open_requests=3) as agent:
        for _ in range(20):
            agent.observe(rng.normal(-5.0, 1.0, size=(100, 1)))
        decisions = agent.observe(AMBIGUOUS)
        ids = decisions["request_id"].dropna().astype(int).tolist()
        assert agent.n_steps_ == 8 + 2005 and len(ids) == 3
        agent.record_inspection(ids[0], 4)
        agent.cancel_request(ids[1])
        # 8 commissioning samples, one result, one open request
        assert agent._campaign.steps.n_rows == 10
    with _agent(semi_supervised="em", estimator=BayesianGMMClassifier()) as em:
        em.observe(rng.normal(-5.0, 1.0, size=(50, 1)))
        assert em._campaign.steps.n_steps == 58  # EM refits over every step


@pytest.mark.parametrize("kind", ["spend_cap", "minimum_gap", "quantile"])
def test_agent_decides_as_the_stream_learner_under_a_budget(kind):
    from skrbal import budget

    X, y, n0, process, _ = _synthetic()
    limit = {
        "spend_cap": budget.SpendCap(limit=14.0, period=150.0),
        "minimum_gap": budget.MinimumGap(gap=40.0),
        # counts every step, the commissioning ones included
        "quantile": budget.QuantileThreshold(rate=0.01, window=50, tolerance=20),
    }[kind]
    policy = budget.CostThreshold() & limit
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(), process=process, budget=policy
    ).fit(X, y, initial=np.arange(n0))
    free = RiskBasedLearner(estimator=BayesianGMMClassifier(), process=process)
    free = free.fit(X, y, initial=np.arange(n0))
    # the budget binds: fewer inspections than the plain rule
    assert 0 < learner.history_.totals["n_inspections"]
    assert (
        learner.history_.totals["n_inspections"] < free.history_.totals["n_inspections"]
    )
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(), process=process, budget=policy
    ).fit(X[:n0], y[:n0]) as agent:
        _, inspected, decided = _drive(agent, X, y, n0)
        state = agent.budget_state_
    steps = learner.history_.steps.iloc[n0:]
    np.testing.assert_array_equal(inspected, steps["inspected"])
    np.testing.assert_array_equal(decided, steps["action"])
    _assert_same_state(state, learner.history_.budget_state)


def _assert_same_state(a, b):
    """Budget states equal; floats (EVPIs) up to the last bits, since a
    block's predict_proba may round differently from a row's."""
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for key in a:
            _assert_same_state(a[key], b[key])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, z in zip(a, b):
            _assert_same_state(x, z)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)
    else:
        assert a == b


def test_clone_shares_the_store_and_copies_nothing_fitted(tmp_path):
    from sklearn.base import clone

    store = AgentStore(tmp_path / "a.db")
    with _agent(store=store, name="a") as agent:
        copy = clone(agent).set_params(name="b")
        assert copy.store is store and not hasattr(copy, "estimator_")
        X0, y0 = _samples([1, 2, 3, 4])
        with copy.fit(X0, y0):
            assert store.agent_names() == ["a", "b"]
    store.close()


def test_history_is_a_bunch_as_the_learners_and_history_warns():
    # One vocabulary (#30.3): the agent's history_ holds steps, queries and
    # totals as RiskBasedLearner's does; history() still answers, and warns.
    X = np.array([[-5.0], [-0.7], [5.8], [19.0]])
    learner = RiskBasedLearner(estimator=GaussianNB(), process=CHEAP)
    learner.fit(np.vstack([X, [[12.5], [-5.0]]]), [1, 2, 3, 4, 3, 1], initial=range(4))
    with RiskBasedAgent(estimator=GaussianNB(), process=CHEAP).fit(
        X, [1, 2, 3, 4]
    ) as agent:
        agent.observe([[12.5], [-5.0]])
        history = agent.history_
        assert {"steps", "queries", "totals", "budget_state"} <= set(history)
        assert {"steps", "queries", "totals"} <= set(learner.history_)
        assert len(history.steps) == 6
        assert history.totals == agent.status()
        pd.testing.assert_frame_equal(
            history.queries, agent.store_.requests(agent.name)
        )
        with pytest.warns(FutureWarning, match=r"history_\.steps"):
            old = agent.history()
        pd.testing.assert_frame_equal(old, history.steps)
