"""One decision kernel: the stream learner decides exactly as the deployed agent.

The agent is fed the learner's stream one observation per call, each result
recorded ``result_delay`` observations after its request (the learner's
report, for imperfect methods); over a grid of update rules, budget policies,
inspection methods and delays both must make the same decisions.
"""

import itertools

import numpy as np
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.budget import CostThreshold, MinimumGap, QuantileThreshold, SpendCap
from skrbal.inspection import InspectionMethod, perfect_inspection
from skrbal.online import RiskBasedAgent

PROCESS = synthetic_decision_process()
CENTRES = np.array([-5.0, -0.7, 5.8, 19.0])
CHEAP = InspectionMethod(
    name="cheap",
    cost=1.5,
    confusion=[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.05, 0.95]],
    outcomes=["ok", "damage"],
)
N0 = 8  # commissioning steps: two of each state


def _stream(seed=0, per_state=25, n_cycles=2):
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([1, 2, 3, 4], per_state), n_cycles)
    X = rng.normal(CENTRES[y - 1], 2.5)[:, None]
    first = np.concatenate([np.flatnonzero(y == c)[:2] for c in (1, 2, 3, 4)])
    order = np.concatenate([first, np.setdiff1d(np.arange(y.size), first)])
    return X[order], y[order]


BUDGETS = {
    "threshold": lambda: None,
    "spend-cap": lambda: CostThreshold() & SpendCap(limit=30.0, period=60),
    "gap": lambda: CostThreshold() & MinimumGap(gap=7),
    "quantile": lambda: QuantileThreshold(rate=0.1, window=40, tolerance=10),
}
INSPECTIONS = {"perfect": None, "two-methods": [perfect_inspection(PROCESS), CHEAP]}
GRID = list(
    itertools.product(
        [None, "em", "smoothing"], sorted(BUDGETS), sorted(INSPECTIONS), [0, 3]
    )
)


def _drive(agent, X, y, n0, delay, reports):
    """Observe one step per call; record each result ``delay`` steps later."""
    inspected, methods, actions, due = [], [], {}, {}
    for t in range(n0, y.size):
        row = agent.observe(X[t : t + 1]).iloc[0]
        inspected.append(bool(row["inspect"]))
        methods.append(row.get("method") if row["inspect"] else None)
        actions[t] = int(row["action"])
        if row["inspect"]:
            due.setdefault(t + delay, []).append((int(row["request_id"]), t))
        for request_id, step in due.pop(t, []):
            actions[step] = _record(agent, request_id, step, y, reports)
    for late in sorted(due):  # results due after the stream ends
        for request_id, step in due[late]:
            actions[step] = _record(agent, request_id, step, y, reports)
    return np.array(inspected), methods, np.array([actions[t] for t in sorted(actions)])


def _record(agent, request_id, step, y, reports):
    if reports is None:
        return agent.record_inspection(request_id, y[step])
    return agent.record_inspection(request_id, report=reports[step])


@pytest.mark.parametrize("semi, budget, inspections, delay", GRID)
def test_learner_and_agent_decide_identically(semi, budget, inspections, delay):
    X, y = _stream()
    params = dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
        semi_supervised=semi,
        inspections=INSPECTIONS[inspections],
        max_open_requests=2 if delay else None,
    )
    learner = RiskBasedLearner(
        **params, query=BUDGETS[budget]() or "evpi", result_delay=delay, random_state=0
    )
    agent = RiskBasedAgent(**params, budget=BUDGETS[budget]())
    if semi == "smoothing" and inspections == "two-methods":
        # Both refuse an imperfect method as a smoothing anchor, alike.
        with pytest.raises(ValueError) as from_learner:
            learner.fit(X, y, initial=np.arange(N0))
        with pytest.raises(ValueError) as from_agent:
            agent.fit(X[:N0], y[:N0])
        assert str(from_learner.value) == str(from_agent.value)
        return
    learner.fit(X, y, initial=np.arange(N0))
    steps = learner.history_.steps.iloc[N0:]
    reports = None
    if inspections == "two-methods":
        queries = learner.history_.queries.iloc[1:]
        reports = dict(zip(queries["step"], queries["report"]))
    with agent.fit(X[:N0], y[:N0]):
        inspected, methods, actions = _drive(agent, X, y, N0, delay, reports)
        budget_state = agent.budget_state_
    assert steps["inspected"].sum() > 0
    np.testing.assert_array_equal(inspected, steps["inspected"])
    np.testing.assert_array_equal(actions, steps["action"])
    if inspections == "two-methods":
        named = [m if isinstance(m, str) else None for m in steps["method"]]
        assert [m if isinstance(m, str) else None for m in methods] == named
    if BUDGETS[budget]() is not None:
        # EVPIs agree to rounding (the learner predicts a block at once).
        _assert_states_equal(budget_state, learner.history_.budget_state)


def _assert_states_equal(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_states_equal(a[key], b[key])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, z in zip(a, b):
            _assert_states_equal(x, z)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)
    else:
        assert a == b


def test_a_delay_keeps_requests_open_and_the_cap_holds():
    # With results 5 steps late and at most one open request, no two
    # inspections are closer than 6 steps; with no delay the same stream has
    # closer ones, so the test can fail.
    X, y = _stream(1)
    params = dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
    )
    at_once = RiskBasedLearner(**params).fit(X, y, initial=np.arange(N0))
    late = RiskBasedLearner(**params, result_delay=5, max_open_requests=1).fit(
        X, y, initial=np.arange(N0)
    )
    gaps_at_once = np.diff(np.flatnonzero(at_once.history_.steps["inspected"]))
    gaps_late = np.diff(np.flatnonzero(late.history_.steps["inspected"]))
    assert gaps_at_once.min() < 6
    assert gaps_late.min() >= 6
    # every request's result is learnt, also the ones due after the end
    assert len(late.history_.queries) == 1 + late.history_.totals["n_inspections"]


@pytest.mark.parametrize(
    "name, value",
    [("result_delay", -1), ("result_delay", True), ("max_open_requests", 0)],
)
def test_learner_names_a_bad_delay_or_cap(name, value):
    X, y = _stream()
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(), process=PROCESS, **{name: value}
    )
    with pytest.raises(ValueError, match=name):
        learner.fit(X, y, initial=np.arange(N0))
