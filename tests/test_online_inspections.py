"""The live agent with imperfect inspections: choice, reports, store, restart."""

import json

import numpy as np
import pandas as pd
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.budget import CostThreshold, SpendCap
from skrbal.datasets import make_degradation_stream, stream_test_split
from skrbal.inspection import InspectionMethod, perfect_inspection, simulate_reports
from skrbal.online import (
    AgentStore,
    ConfigurationError,
    RequestError,
    RiskBasedAgent,
)
from skrbal.online._config import inspections_to_config
from skrbal.online._sql import _schema as schema

SEED = 0


@pytest.fixture(scope="module")
def case():
    """The synthetic stream of test_online_agent: commissioning steps first."""
    X, y, _ = make_degradation_stream(n_cycles=2, n_per_cycle=300, random_state=0)
    split = stream_test_split(X, y, initial_size=8, random_state=3)
    init = split.initial_indices
    order = np.concatenate([init, np.setdiff1d(np.arange(split.y_stream.size), init)])
    return (
        split.X_stream[order],
        split.y_stream[order],
        init.size,
        synthetic_decision_process(),
        None,
    )


def _methods(process):
    drone = InspectionMethod(
        name="drone",
        cost=0.2 * process.inspection_cost,
        confusion=[[0.97, 0.03], [0.9, 0.1], [0.15, 0.85], [0.1, 0.9]],
        outcomes=["no damage", "damage"],
    )
    return [perfect_inspection(process), drone]


def _drive(agent, X, y, start, stop, rng, methods):
    """Observe one step at a time; return each report at once, drawn by rng."""
    frames, answers = [], []
    names = {m.name: m for m in methods or ()}
    for t in range(start, stop):
        row = agent.observe(X[t : t + 1])
        frames.append(row)
        row = row.iloc[0]
        if not row["inspect"]:
            answers.append((int(row["action"]), None))
            continue
        request_id = int(row["request_id"])
        if methods is None:
            answers.append((agent.record_inspection(request_id, y[t]), None))
            continue
        method = names[row["method"]]
        report = simulate_reports([y[t]], agent.process, method, rng)[0]
        answers.append((agent.record_inspection(request_id, report=report), report))
    return pd.concat(frames, ignore_index=True), answers


@pytest.mark.parametrize("semi_supervised", [None, "em"])
def test_agent_chooses_and_reports_as_the_stream_learner(case, semi_supervised):
    X, y, n0, process, _ = case
    methods = _methods(process)
    params = dict(
        estimator=BayesianGMMClassifier(),
        process=process,
        semi_supervised=semi_supervised,
        inspections=methods,
    )
    learner = RiskBasedLearner(**params, random_state=SEED)
    learner.fit(X, y, initial=np.arange(n0))
    with RiskBasedAgent(**params).fit(X[:n0], y[:n0]) as agent:
        rng = np.random.RandomState(SEED)
        decisions, answers = _drive(agent, X, y, n0, y.size, rng, methods)
        history, status = agent.history_.steps, agent.status()
    steps = learner.history_.steps.iloc[n0:]
    queries = learner.history_.queries.iloc[1:]
    used = learner.history_.totals["n_inspections_by_method"]
    assert min(used.values()) > 0  # both methods chosen
    np.testing.assert_array_equal(decisions["inspect"], steps["inspected"])
    expected = steps["method"].astype(object).where(steps["method"].notna(), None)
    assert decisions["method"].tolist() == expected.tolist()
    np.testing.assert_array_equal([a for a, _ in answers], steps["action"])
    np.testing.assert_allclose(decisions["evpi"], steps["evpi"], rtol=1e-12, atol=1e-12)
    reports = [r for _, r in answers if r is not None]
    assert reports == queries["report"].tolist()
    # history: method, report and posterior of each inspected step
    inspected = history.iloc[n0:][decisions["inspect"].to_numpy()]
    assert inspected["method"].tolist() == queries["method"].tolist()
    assert inspected["report"].tolist() == queries["report"].tolist()
    columns = [f"posterior_{c}" for c in process.classes_]
    posterior = inspected[columns].to_numpy()
    # the learner predicts a block of steps at once: beliefs agree to rounding
    np.testing.assert_allclose(
        posterior, queries[columns].to_numpy(), rtol=1e-12, atol=1e-15
    )
    assert np.any((posterior > 0) & (posterior < 1))  # soft evidence was learned
    # spend by method, as campaign_summary splits it
    assert status["n_inspections_by_method"] == used
    assert status["spend_by_method"] == pytest.approx(
        learner.history_.totals["spend_by_method"], rel=1e-12
    )
    assert status["spend"] == pytest.approx(
        learner.history_.totals["inspection_spend"], rel=1e-12
    )


@pytest.mark.parametrize("semi_supervised", [None, "em"])
def test_one_perfect_method_is_todays_agent(case, semi_supervised):
    X, y, n0, process, _ = case
    stop = n0 + 150
    runs = []
    for inspections in (None, [perfect_inspection(process)]):
        with RiskBasedAgent(
            estimator=BayesianGMMClassifier(),
            process=process,
            semi_supervised=semi_supervised,
            inspections=inspections,
        ).fit(X[:n0], y[:n0]) as agent:
            frames, answers = [], []
            for t in range(n0, stop):
                row = agent.observe(X[t : t + 1])
                frames.append(row.drop(columns="method", errors="ignore"))
                if row["inspect"].iloc[0]:
                    rid = int(row["request_id"].iloc[0])
                    answers.append(agent.record_inspection(rid, y[t]))
            history = agent.history_.steps.drop(
                columns=["method", "report", *[f"posterior_{c}" for c in (1, 2, 3, 4)]],
                errors="ignore",
            )
            runs.append(
                (
                    pd.concat(frames, ignore_index=True),
                    answers,
                    history,
                    agent.estimator_.predict_proba(X).tobytes(),
                    agent.budget_state_,
                )
            )
    (fa, aa, ha, pa, ba), (fb, ab, hb, pb, bb) = runs
    assert len(aa) > 0
    pd.testing.assert_frame_equal(fa, fb, check_exact=True)
    assert aa == ab and pa == pb and ba == bb
    pd.testing.assert_frame_equal(ha, hb, check_exact=True)


def test_a_perfect_method_takes_its_report_or_the_label(case):
    X, y, n0, process, _ = case
    methods = _methods(process)
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(), process=process, inspections=methods
    ).fit(X[:n0], y[:n0]) as agent:
        for t in range(n0, y.size):
            row = agent.observe(X[t : t + 1]).iloc[0]
            if row["inspect"] and row["method"] == "perfect":
                action = agent.record_inspection(int(row["request_id"]), y[t])
                # A perfect report reveals the state: the best action for it.
                assert action == process.perfect_information_action([y[t]])[0]
                break
            if row["inspect"]:
                agent.cancel_request(int(row["request_id"]))
        history = agent.history_.steps
        assert history.loc[t, "label"] == y[t]
        assert history.loc[t, "method"] == "perfect"
        assert history.loc[t, f"posterior_{y[t]}"] == 1.0


def _open_drone_request(agent, X, start):
    """Observe until a drone request is open; return its id and the next step."""
    for t in range(start, X.shape[0]):
        row = agent.observe(X[t : t + 1]).iloc[0]
        if row["inspect"]:
            if row["method"] == "drone":
                return int(row["request_id"]), t + 1
            agent.cancel_request(int(row["request_id"]))
    raise AssertionError("no drone request")


def _snapshot(agent, X):
    store = agent.store_
    return (
        store.history(agent.name).to_json(),
        store.requests(agent.name).to_json(),
        json.dumps(store.status(agent.name), sort_keys=True, default=str),
        store.events(agent.name).drop(columns="created_at").to_json(),
        agent.estimator_.predict_proba(X).tobytes(),
        agent._seq,
    )


def test_bad_reports_raise_and_change_nothing(case):
    X, y, n0, process, _ = case
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=process,
        inspections=_methods(process),
    ).fit(X[:n0], y[:n0]) as agent:
        request_id, _ = _open_drone_request(agent, X, n0)
        snapshot = _snapshot(agent, X[:50])
        for kwargs, match in [
            (dict(report="crack"), r"not an outcome of inspection method 'drone'.*"
             r"pass one of \['no damage', 'damage'\]"),
            (dict(report=1), "not an outcome"),
            (dict(report=["damage"]), "not an outcome"),
            (dict(label=3), r"do not reveal the state: pass its report, "
             r"record_inspection\(\d+, report=\.\.\.\)"),
            (dict(label=3, report="damage"), "not both"),
            (dict(), "not neither"),
        ]:  # fmt: skip
            with pytest.raises(RequestError, match=match):
                agent.record_inspection(request_id, **kwargs)
            assert _snapshot(agent, X[:50]) == snapshot
        agent.record_inspection(request_id, report="damage")
        requests = agent.store_.requests(agent.name).set_index("request_id")
        assert requests.loc[request_id, "report"] == "damage"
        assert pd.isna(requests.loc[request_id, "label"])
    with RiskBasedAgent(estimator=BayesianGMMClassifier(), process=process).fit(
        X[:n0], y[:n0]
    ) as plain:
        for t in range(n0, y.size):
            if plain.observe(X[t : t + 1])["inspect"].iloc[0]:
                break
        with pytest.raises(RequestError, match="pass the label"):
            plain.record_inspection(1, report=3)


def test_smoothing_refuses_imperfect_methods(case):
    X, y, n0, process, _ = case
    with pytest.raises(ValueError, match="'drone' is imperfect"):
        RiskBasedAgent(
            estimator=BayesianGMMClassifier(),
            process=process,
            inspections=_methods(process),
            semi_supervised="smoothing",
        ).fit(X[:n0], y[:n0])


@pytest.mark.parametrize("semi_supervised", [None, "em"])
def test_restart_with_an_open_report_continues_identically(
    store_url, case, semi_supervised
):
    X, y, n0, process, _ = case
    methods = _methods(process)
    stop = n0 + 160
    params = dict(
        estimator=BayesianGMMClassifier(),
        process=process,
        inspections=methods,
        semi_supervised=semi_supervised,
    )
    rng = np.random.RandomState(SEED)
    with RiskBasedAgent(**params, name="reference").fit(X[:n0], y[:n0]) as ref:
        request_id, t = _open_drone_request(ref, X, n0)
        ref.record_inspection(request_id, report="damage")
        _drive(ref, X, y, t, stop, rng, methods)
        url = store_url
        with RiskBasedAgent(**params, store=url, name="bridge").fit(
            X[:n0], y[:n0]
        ) as agent:
            assert _open_drone_request(agent, X, n0) == (request_id, t)
        # the methods come back from the store alone, checked
        with RiskBasedAgent.from_store(url, "bridge") as resumed:
            assert inspections_to_config(resumed.inspections) == (
                inspections_to_config(methods)
            )
            resumed.record_inspection(request_id, report="damage")
            _drive(resumed, X, y, t, stop, np.random.RandomState(SEED), methods)
            assert resumed.status()["n_inspections_by_method"]["drone"] > 1
            for what in ("history", "requests"):
                pd.testing.assert_frame_equal(
                    getattr(ref.store_, what)(ref.name),
                    getattr(resumed.store_, what)(resumed.name),
                    check_exact=True,
                )
            sa, sb = ref.status(), resumed.status()
            sa.pop("name"), sb.pop("name")
            assert sa == sb
            np.testing.assert_array_equal(
                ref.estimator_.predict_proba(X), resumed.estimator_.predict_proba(X)
            )


def test_stored_methods_are_json_and_checked(tmp_path, case):
    X, y, n0, process, _ = case
    url = tmp_path / "agents.db"
    RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=process,
        inspections=_methods(process),
        store=url,
    ).fit(X[:n0], y[:n0]).close()
    store = AgentStore(url)
    stored = store.configuration("agent")["settings"]["inspections"]
    assert stored[1] == {
        "name": "drone",
        "cost": 0.2 * process.inspection_cost,
        "confusion": [[0.97, 0.03], [0.9, 0.1], [0.15, 0.85], [0.1, 0.9]],
        "outcomes": ["no damage", "damage"],
    }
    # a damaged entry is refused on resume, naming it
    stored[1]["confusion"][2] = [0.5, 0.6]
    settings = store.configuration("agent")["settings"]
    settings["inspections"] = stored
    with store.engine.begin() as conn:
        conn.execute(schema.agents.update().values(settings=json.dumps(settings)))
    with pytest.raises(ConfigurationError, match=r"'drone': row 2 sums to 1\.1"):
        RiskBasedAgent.from_store(store, "agent")
    store.close()


def test_methods_compose_with_the_budget_policy(case):
    """The policy sees the chosen method's EVSI and is charged its cost."""
    X, y, n0, process, _ = case
    methods = _methods(process)
    limit = 3 * process.inspection_cost
    budget = CostThreshold() & SpendCap(limit=limit, period=10_000)
    with RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=process,
        inspections=methods,
        budget=budget,
    ).fit(X[:n0], y[:n0]) as agent:
        _drive(agent, X, y, n0, y.size, np.random.RandomState(SEED), methods)
        status = agent.status()
    spent = agent.budget_state_["policies"][1]["spent"]
    assert spent == pytest.approx(status["spend"]) and spent <= limit
    assert status["n_inspections_by_method"]["drone"] > 0
    # with unit costs the cap would allow only 3 inspections
    assert sum(status["n_inspections_by_method"].values()) > 3
