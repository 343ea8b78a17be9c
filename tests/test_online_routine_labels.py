"""Labels the agent did not request: routine inspections (issue 18 item 4).

``RiskBasedAgent.record_label`` teaches the model a label found by an
inspection made anyway, through the update rule a result uses; it is stored
as a request of origin 'routine' made and done in one event, shown by the
status, history and requests, not charged to the budget policy, and
replayed exactly on resume (SQLite and PostgreSQL).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import text

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.exceptions import IdempotencyKeyError, RequestError
from skrbal.online import RiskBasedAgent, StoreError

PROCESS = synthetic_decision_process().set_params(inspection_cost=1.0)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-5.3], [-0.4], [6.1], [18.5]])
Y0 = np.array([1, 2, 3, 4, 1, 2, 3, 4])
# Far from the boundaries: no request at this cost.
QUIET = np.array([[-5.2], [-4.8], [0.2], [6.0], [18.8], [-5.1]])
PROBE = np.linspace(-8.0, 22.0, 25)[:, None]


def _agent(url=None, estimator=None, **params):
    return RiskBasedAgent(
        estimator=estimator or GaussianNB(var_smoothing=0.05),
        process=PROCESS,
        store=url,
        **params,
    )


def test_a_routine_label_teaches_the_model_and_is_stored():
    budget = CostThreshold() & SpendCap(limit=3.0, period=1000)
    # SQL: the routine request is verified against the chain at the end.
    with _agent(":memory:", budget=budget).fit(X0, Y0) as agent:
        decided = agent.observe(QUIET)
        assert not decided["inspect"].any()
        before_model = agent.estimator_.predict_proba(PROBE)
        budget_state = dict(agent.budget_state_)
        assert agent.record_label(9, 1) == 0
        assert not np.array_equal(agent.estimator_.predict_proba(PROBE), before_model)
        # the policy did not decide it: its state is not charged
        assert agent.budget_state_ == budget_state
        status = agent.status()
        assert status["n_routine"] == 1 and status["routine_spend"] == 1.0
        assert status["n_requests"] == 0 and status["spend"] == 0.0
        assert status["labelled"][1] == 3
        requests = agent.store_.requests(agent.name)
        row = requests.iloc[0]
        assert (row["request_id"], row["step"], row["status"]) == (1, 9, "done")
        assert row["origin"] == "routine" and row["label"] == 1
        assert row["evpi"] == decided.loc[1, "evpi"]
        history = agent.history_.steps.set_index("step")
        assert history.loc[9, "label"] == 1
        assert history.loc[9, "request_status"] == "done"
        events = agent.store_.events(agent.name)
        assert events["kind"].tolist() == ["commission", "observe", "result"]
        assert events["payload"].iloc[-1]["origin"] == "routine"
        # later requests are numbered after it
        ambiguous = agent.observe([[12.5]])
        assert ambiguous["request_id"].tolist() == [2]
        assert agent.store_.requests(agent.name)["origin"].tolist() == [
            "routine",
            "agent",
        ]
        agent.store_.verify(agent.name)


def test_a_routine_label_is_refused_where_it_cannot_be():
    with _agent().fit(X0, Y0, timestamps=np.arange(8.0)) as agent:
        with pytest.raises(RequestError, match="has observed nothing yet"):
            agent.record_label(8, 1)
        agent.observe(QUIET, timestamps=100.0 + np.arange(6))
        request = int(agent.observe([[12.5]], timestamps=[200.0])["request_id"][0])
        agent.record_label(9, 1)
        before = (agent.status(), agent._seq, agent.estimator_.theta_.tolist())
        for step, label, message in (
            (3, 1, "step 3 is a commissioning step"),
            (15, 1, r"observations are steps 8 to 14"),
            (-1, 1, "not an observed step"),
            (True, 1, "an int"),
            (14, 4, rf"request {request} waiting for its result: record it as "
             rf"its result, record_inspection\({request}, label\)"),
            (9, 1, r"step 9 is already labelled \(request 2\)"),
            (10, 7, "unknown label 7"),
        ):  # fmt: skip
            with pytest.raises(RequestError, match=message):
                agent.record_label(step, label)
        with pytest.raises(RequestError, match="not an inspection method"):
            agent.record_label(10, 1, method="drone")
        with pytest.raises(RequestError, match="not both"):
            agent.record_label(10, 1, report="crack")
        with pytest.raises(RequestError, match="before step 10 was observed"):
            agent.record_label(10, 1, timestamp=50.0)
        assert (agent.status(), agent._seq, agent.estimator_.theta_.tolist()) == (
            before
        )
        agent.cancel_request(request)
        with pytest.raises(RequestError, match="cancelled"):
            agent.record_label(14, 4)


def test_a_routine_label_is_idempotent_with_a_key():
    with _agent().fit(X0, Y0) as agent:
        agent.observe(QUIET)
        action = agent.record_label(10, 2, key="visit-3")
        before = (agent.status(), agent._seq)
        assert agent.record_label(10, 2, key="visit-3") == action
        assert (agent.status(), agent._seq) == before
        with pytest.raises(IdempotencyKeyError, match="another label"):
            agent.record_label(10, 3, key="visit-3")


@pytest.mark.parametrize("semi_supervised", [None, "em"])
def test_a_resumed_agent_equals_the_uninterrupted_one(store_url, semi_supervised):
    rng = np.random.default_rng(3)
    X = np.concatenate([QUIET, rng.normal(12.0, 3.0, (30, 1)), QUIET])
    params = dict(estimator=BayesianGMMClassifier(), semi_supervised=semi_supervised)
    with _agent(**params).fit(X0, Y0) as reference:
        with _agent(store_url, **params).fit(X0, Y0) as agent:
            for a in (reference, agent):
                decided = a.observe(X[:20])
                quiet = decided.loc[~decided["inspect"], "step"].tolist()
                a.record_label(quiet[0], 1)
                a.record_label(quiet[2], 3)
        with RiskBasedAgent.from_store(store_url) as resumed:
            np.testing.assert_array_equal(
                resumed.estimator_.predict_proba(PROBE),
                reference.estimator_.predict_proba(PROBE),
            )
            # and they go on alike (the labelled rows are kept in memory)
            for a in (reference, resumed):
                a.record_label(quiet[1], 2)
                a.observe(X[20:])
            pd.testing.assert_frame_equal(
                resumed.history_.steps, reference.history_.steps
            )
            pd.testing.assert_frame_equal(
                resumed.store_.requests("agent"), reference.store_.requests("agent")
            )
            assert resumed.status() == reference.status()


def test_the_routine_origin_is_chained():
    with _agent(":memory:").fit(X0, Y0) as agent:
        agent.observe(QUIET)
        agent.record_label(9, 1)
        store = agent.store_
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE skrbal_requests SET origin = NULL"))
        with pytest.raises(StoreError, match=r"skrbal_requests, request 1 \(step 9\)"):
            store.verify(agent.name)


def _stream(n=40, seed=5):
    rng = np.random.default_rng(seed)
    states = rng.integers(1, 5, n)
    means = np.array([-5.0, -0.7, 5.8, 19.0])
    return rng.normal(means[states - 1], 2.5)[:, None], states


@pytest.mark.parametrize("missing", [None, np.nan, ""])
def test_commissioning_with_unlabelled_rows_observes_them(missing):
    X, states = _stream()
    y = np.array(list(Y0) + [missing] * 40, dtype=object)
    labelled = [12, 20, 33]  # later rows with an inspection's label
    y[labelled] = states[[i - 8 for i in labelled]]
    X_all = np.concatenate([X0, X])
    stamps = 1000.0 * np.arange(48)
    with _agent().fit(X_all, y, timestamps=stamps) as agent:
        history, requests = agent.history_.steps, agent.store_.requests("agent")
        status = agent.status()
    # the same by hand: commission, then observe up to each label and learn it
    with _agent().fit(X0, Y0, timestamps=stamps[:8]) as by_hand:
        start = 8
        for row in labelled:
            decided = by_hand.observe(X_all[start : row + 1], stamps[start : row + 1])
            request = decided["request_id"].iloc[-1]
            if pd.isna(request):
                by_hand.record_label(row, y[row], timestamp=stamps[row])
            else:
                by_hand.record_inspection(int(request), y[row], timestamp=stamps[row])
            start = row + 1
        by_hand.observe(X_all[start:], stamps[start:])
        pd.testing.assert_frame_equal(history, by_hand.history_.steps)
        pd.testing.assert_frame_equal(requests, by_hand.store_.requests("agent"))
    assert status["n_commissioning"] == 8 and status["n_observations"] == 40
    assert status["n_routine"] + status["n_results"] == 3


def test_commissioning_with_unlabelled_rows_names_the_row():
    X, _ = _stream(6)
    X_all = np.concatenate([X0, X])
    y = [*list(Y0), None, None, 7, None, 2, None]
    with pytest.raises(ValueError, match=r"y: row 10 \(counted from 0\) holds 7"):
        _agent().fit(X_all, y)
    with pytest.raises(ValueError, match=r"y: row 0 \(counted from 0\) has no label"):
        _agent().fit(X_all, [None, *y[1:]])
    # the checks of a commissioning set apply to the labelled rows alone
    with pytest.raises(ValueError) as alone:
        _agent().fit(X0[:1], Y0[:1])
    with pytest.raises(ValueError) as parts:
        _agent().fit(X_all, [1] + [None] * 13)
    assert str(parts.value) == str(alone.value)


def test_unlabelled_rows_in_an_object_or_float_array():
    """A label column with gaps reads as floats (pandas) or objects."""
    X, _ = _stream(6)
    X_all = np.concatenate([X0, X])
    for y in (
        np.array([*Y0, None, 3, None, None, 2, None], dtype=object),
        np.array([*Y0, np.nan, 3.0, np.nan, np.nan, 2.0, np.nan]),
    ):
        with _agent().fit(X_all, y) as agent:
            status = agent.status()
            assert status["n_routine"] + status["n_results"] == 2


def test_a_routine_report_of_an_imperfect_method_is_soft_evidence(store_url):
    from skrbal.inspection import InspectionMethod, perfect_inspection

    drone = InspectionMethod(
        name="drone",
        cost=0.2,
        confusion=[[0.97, 0.03], [0.9, 0.1], [0.15, 0.85], [0.1, 0.9]],
        outcomes=["no damage", "damage"],
    )
    methods = [perfect_inspection(PROCESS), drone]
    params = dict(
        estimator=BayesianGMMClassifier(), inspections=methods, max_open_requests=1
    )
    with _agent(**params).fit(X0, Y0) as reference:
        with _agent(store_url, **params).fit(X0, Y0) as agent:
            for a in (reference, agent):
                decided = a.observe(QUIET)
                quiet = decided.loc[~decided["inspect"], "step"].tolist()
                with pytest.raises(RequestError, match="reports do not reveal"):
                    a.record_label(quiet[0], 1, method="drone")
                a.record_label(quiet[0], report="damage", method="drone")
                a.record_label(quiet[1], 2, method=methods[0].name)
            status = agent.status()
            assert status["n_routine"] == 2
            assert status["routine_spend"] == pytest.approx(
                0.2 + PROCESS.inspection_cost
            )
            requests = agent.store_.requests("agent")
            routine = requests[requests["origin"] == "routine"]
            assert routine["method"].tolist() == ["drone", methods[0].name]
            assert pd.isna(routine["label"].iloc[0])  # the state stays uncertain
        with RiskBasedAgent.from_store(store_url) as resumed:
            np.testing.assert_array_equal(
                resumed.estimator_.predict_proba(PROBE),
                reference.estimator_.predict_proba(PROBE),
            )
            pd.testing.assert_frame_equal(
                resumed.history_.steps, reference.history_.steps
            )
