"""One decision kernel: the stream learner decides exactly as the deployed agent.

The agent is fed the learner's stream one observation per call, each result
recorded ``result_delay`` observations after its request (the learner's
report, for imperfect methods); over a grid of update rules, budget policies,
inspection methods and delays both must make the same decisions, and so with
pending results ignored, requests that expire, and routine labels (learnt
right after their step is observed).
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from _examples import examples  # tests/ is on sys.path
from _grids import grid
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import GaussianNB

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal._learning import DecisionKernel, top_combinations
from skrbal.active import RiskBasedLearner
from skrbal.budget import (
    CostThreshold,
    MinimumGap,
    PacedBudget,
    QuantileThreshold,
    SpendCap,
)
from skrbal.exceptions import RequestExpiredWarning, StalledRequestsWarning
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
    "paced": lambda: PacedBudget(limit=40.0, period=80, allow_starved=True),
}
INSPECTIONS = {"perfect": None, "two-methods": [perfect_inspection(PROCESS), CHEAP]}
# CI takes a pairwise covering of the cells that decide (every two settings
# meet in one) and every cell that refuses; make test-thorough all of them.
GRID = grid(
    [None, "em", "smoothing"],
    sorted(BUDGETS),
    sorted(INSPECTIONS),
    [0, 3],
    where=lambda semi, budget, inspections, delay: (
        semi != "smoothing" or inspections != "two-methods"
    ),
) + list(itertools.product(["smoothing"], sorted(BUDGETS), ["two-methods"], [0, 3]))


def _drive(agent, X, y, n0, delay, reports, routine=()):
    """Observe one step per call; record each result ``delay`` steps later.

    A ``routine`` step not inspected gets its label right after it is
    observed (before the results due then).
    """
    inspected, methods, actions, due = [], [], {}, {}
    for t in range(n0, y.size):
        row = agent.observe(X[t : t + 1]).iloc[0]
        inspected.append(bool(row["inspect"]))
        methods.append(row.get("method") if row["inspect"] else None)
        actions[t] = int(row["action"])
        if row["inspect"]:
            due.setdefault(t + delay, []).append((int(row["request_id"]), t))
        elif t in routine:
            actions[t] = agent.record_label(t, y[t])
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
        **params, budget=BUDGETS[budget](), result_delay=delay, random_state=0
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


# Pending results ignored, requests that expire before their result comes (it
# is still learnt), and routine labels every 9th step, with results 3 late.
VARIANTS = {
    "ignore": {"pending_value": "ignore"},
    "expiry": {"request_timeout": 2},
    "routine": {},
}
EXTRA_GRID = grid(
    [None, "em"], ["threshold", "paced"], sorted(INSPECTIONS), sorted(VARIANTS)
)


@pytest.mark.parametrize("semi, budget, inspections, variant", EXTRA_GRID)
def test_learner_and_agent_decide_identically_with(semi, budget, inspections, variant):
    X, y = _stream()
    delay = 3
    params = dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
        semi_supervised=semi,
        inspections=INSPECTIONS[inspections],
        max_open_requests=2,
        **VARIANTS[variant],
    )
    routine = np.arange(N0 + 4, y.size, 9) if variant == "routine" else None
    learner = RiskBasedLearner(
        **params, budget=BUDGETS[budget](), result_delay=delay, random_state=0
    ).fit(X, y, initial=np.arange(N0), routine=routine)
    history = learner.history_
    steps = history.steps.iloc[N0:]
    reports = None
    if inspections == "two-methods":
        queries = history.queries.iloc[1:]
        reports = dict(zip(queries["step"], queries["report"]))
    agent = RiskBasedAgent(**params, budget=BUDGETS[budget]())
    with agent.fit(X[:N0], y[:N0]), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RequestExpiredWarning)
        warnings.simplefilter("ignore", StalledRequestsWarning)
        inspected, methods, actions = _drive(
            agent, X, y, N0, delay, reports, () if routine is None else set(routine)
        )
        status = agent.status()
        budget_state = agent.budget_state_
    assert steps["inspected"].sum() > 0
    np.testing.assert_array_equal(inspected, steps["inspected"])
    np.testing.assert_array_equal(actions, steps["action"])
    if inspections == "two-methods":
        named = [m if isinstance(m, str) else None for m in steps["method"]]
        assert [m if isinstance(m, str) else None for m in methods] == named
    if BUDGETS[budget]() is not None:
        _assert_states_equal(budget_state, history.budget_state)
    # the variant is exercised, the same way in both
    if variant == "expiry":
        assert history.totals["n_expired"] > 0
        # every expired request's result still comes, and is learnt late
        late = [w for w in caught if "its late result is learnt" in str(w.message)]
        assert len(late) == history.totals["n_expired"]
    if variant == "routine":
        assert history.totals["n_routine"] > 0
        assert status["n_routine"] == history.totals["n_routine"]
        assert history.queries["routine"].sum() == history.totals["n_routine"]


def test_a_learner_routine_label_is_learnt_and_not_charged():
    # The learner can fail here: a routine label must teach the model (the
    # queries count it) without being an inspection of the budget's.
    X, y = _stream()
    params = dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
    )
    plain = RiskBasedLearner(**params).fit(X, y, initial=np.arange(N0))
    routine = np.setdiff1d(np.arange(N0, y.size, 5), plain.labelled_indices_)
    learner = RiskBasedLearner(**params).fit(
        X, y, initial=np.arange(N0), routine=routine
    )
    totals, queries = learner.history_.totals, learner.history_.queries
    taken = queries.loc[queries["routine"].astype(bool), "step"].to_numpy()
    assert taken.size == totals["n_routine"] > 0
    assert not learner.history_.steps["inspected"].to_numpy()[taken].any()
    assert totals["inspection_spend"] == totals["n_inspections"] * 10.0 or (
        totals["inspection_spend"] == totals["n_inspections"] * PROCESS.inspection_cost
    )
    assert set(taken) <= set(learner.labelled_indices_)
    with pytest.raises(ValueError, match="routine indices must lie in"):
        RiskBasedLearner(**params).fit(X, y, initial=np.arange(N0), routine=[999])


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
    # the cap blocked steps the rule wanted: counted, not silent
    assert late.history_.totals["n_blocked"] > 0
    assert "n_blocked" not in at_once.history_.totals


def test_blocked_steps_are_those_the_policy_would_have_inspected():
    # Steps the policy wants while the cap holds are counted one by one, the
    # policy's state moving as if nothing were inspected.
    kernel = DecisionKernel(PROCESS, max_open_requests=1)
    proba = np.array([[0.5, 0, 0, 0.5], [1, 0, 0, 0], [0.5, 0, 0, 0.5]] * 3)
    decided = kernel.decide(proba, np.arange(9.0), {}, n_open=1)
    assert decided.requested.size == 0
    assert decided.n_blocked == 6
    free = kernel.decide(proba, np.arange(9.0), {}, n_open=0)
    assert free.requested.tolist() == [0] and free.n_blocked == 5


def _blocked_one_scan_a_step(policy, value, times, available, cost, state):
    """The count of blocked steps, one scan per step the policy wants."""
    count, position = 0, 0
    while position < value.shape[0]:
        hit, _ = policy.scan(
            value[position:], times[position:], available[position:], cost, state
        )
        if hit < 0:
            return count
        count += 1
        upto = slice(position, position + hit + 1)
        nowhere = np.zeros(hit + 1, dtype=bool)
        _, state = policy.scan(value[upto], times[upto], nowhere, cost, state)
        position += hit + 1
    return count


@pytest.mark.parametrize("budget", sorted(BUDGETS))
def test_blocked_steps_are_counted_by_chunks_not_one_scan_a_step(budget, monkeypatch):
    # A stalled agent's block of 3,000 steps: the old kernel scanned twice per
    # step the policy wanted, moving the policy's state thousands of times;
    # now by chunks of steps. The count is the same.
    rng = np.random.default_rng(7)
    n = 3000
    beliefs = rng.dirichlet(np.full(4, 0.3), size=n)
    times = np.arange(n, dtype=float)
    kernel = DecisionKernel(PROCESS, budget=BUDGETS[budget](), max_open_requests=2)
    policy = kernel.budget
    state = policy.initial_state()
    value = kernel.method_values(beliefs, PROCESS.evpi(beliefs))[1]
    available = rng.random(n) < 0.9
    cost = float(PROCESS.inspection_cost)
    expected = _blocked_one_scan_a_step(policy, value, times, available, cost, state)
    moves = []
    original = type(policy)._advance

    def counting(self, *args, **kwargs):
        moves.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(policy), "_advance", counting)
    decided = kernel.decide(beliefs, times, state, available=available, n_open=2)
    assert decided.requested.size == 0
    assert decided.n_blocked == expected
    assert expected > 20 or budget == "paced"
    assert len(moves) <= 20


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


# ---------------------------------------------------------------------- #
# pending results counted: fantasised outcomes
# ---------------------------------------------------------------------- #
@settings(max_examples=examples(40), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_pending=st.integers(1, 3),
    with_methods=st.booleans(),
)
# With two methods, the pending results made the cheap method's value fall
# below the dear one's net of cost: the best method changed, and its value
# (9.13 with cost 7) exceeded the plain best's (3.73 with cost 1.5).
@example(seed=937677, n_pending=3, with_methods=True)
def test_pending_value_never_exceeds_the_plain_value(seed, n_pending, with_methods):
    rng = np.random.default_rng(seed)
    X, y = _stream(int(rng.integers(1000)), per_state=6, n_cycles=1)
    model = BayesianGMMClassifier(
        classes=PROCESS.classes_, mean_prior="data", covariance_prior="data"
    ).fit(X, y)
    kernel = DecisionKernel(
        PROCESS, INSPECTIONS["two-methods"] if with_methods else None
    )
    X_pending = rng.normal(0.0, 8.0, size=(n_pending, 1))
    # the block: duplicates of the pending observations and fresh ones
    block = np.vstack([X_pending, rng.normal(0.0, 8.0, size=(5, 1))])
    proba = kernel.beliefs(model, block)
    evpi = PROCESS.evpi(proba)
    best_plain, plain = kernel.method_values(proba, evpi)
    fantasies = kernel.fantasise(model, block, X_pending)
    assert fantasies is not None
    np.testing.assert_allclose(fantasies.weights.sum(), 1.0)
    best, pending = kernel.method_values(proba, evpi, fantasies)
    # Each method's value is the smaller of its value now and after the
    # pending results, so the best net value (value less the method's cost,
    # what a budget policy compares) never rises. The value alone may: when
    # the pending results make a cheap method redundant, a dearer one with a
    # larger value can become the best.
    net_plain = plain - kernel.costs[best_plain]
    assert np.all(pending - kernel.costs[best] <= net_plain + 1e-12)
    if not with_methods:
        assert np.all(pending <= plain)
    # nothing pending: nothing changes, bit for bit
    assert kernel.fantasise(model, block, X_pending[:0]) is None
    np.testing.assert_array_equal(kernel.method_values(proba, evpi, None)[1], plain)


def test_a_duplicate_of_a_pending_observation_loses_value():
    # The feature can fail: a step like an uncertain pending one must be worth
    # less than on its own (its result will teach the model that region). A
    # young model (two labels a state) moves most with one more label.
    X, y = _stream(3, per_state=2, n_cycles=1)
    model = BayesianGMMClassifier(
        classes=PROCESS.classes_, mean_prior="data", covariance_prior="data"
    ).fit(X, y)
    kernel = DecisionKernel(PROCESS)
    grid = np.linspace(-12, 25, 200)[:, None]
    evpi = PROCESS.evpi(kernel.beliefs(model, grid))
    x = grid[[np.argmax(evpi)]]  # the most uncertain observation
    proba = kernel.beliefs(model, x)
    plain = kernel.method_values(proba, PROCESS.evpi(proba))[1]
    fantasies = kernel.fantasise(model, x, x)
    pending = kernel.method_values(proba, PROCESS.evpi(proba), fantasies)[1]
    assert plain[0] > PROCESS.inspection_cost
    assert pending[0] < 0.9 * plain[0]


def test_top_combinations_are_the_most_probable_joint_outcomes():
    proba = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.6, 0.3, 0.0], [0.7, 0.0, 0.3, 0.0]])
    combos, probs = top_combinations(proba, 5)
    full = [
        (p0 * p1 * p2, (a, b, c))
        for a, p0 in enumerate(proba[0])
        for b, p1 in enumerate(proba[1])
        for c, p2 in enumerate(proba[2])
        if p0 * p1 * p2 > 0
    ]
    expected = sorted(full, key=lambda item: -item[0])[:5]
    np.testing.assert_allclose(probs, [p for p, _ in expected])
    assert [tuple(c) for c in combos] == [combo for _, combo in expected]


def test_with_results_at_once_pending_values_change_nothing():
    X, y = _stream(2)
    params = dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
    )
    fantasy = RiskBasedLearner(**params).fit(X, y, initial=np.arange(N0))
    ignore = RiskBasedLearner(**params, pending_value="ignore").fit(
        X, y, initial=np.arange(N0)
    )
    pd.testing.assert_frame_equal(fantasy.history_.steps, ignore.history_.steps)


class _CountingThreshold(CostThreshold):
    """CostThreshold that counts the steps its scans examine."""

    examined = 0

    def _candidates(self, evpi, times, cost, state):
        type(self).examined += evpi.shape[0]
        return super()._candidates(evpi, times, cost, state)


def test_one_observe_call_scans_each_step_a_bounded_number_of_times():
    # Issue 21 §11: the agent restarted the budget scan on the rest of the
    # call after every request, so one call cost requests x rows. The kernel
    # scans once, in chunks that restart small after a request.
    rng = np.random.default_rng(0)
    y = rng.integers(1, 5, 20_500)
    X = rng.normal(CENTRES[y - 1], 2.5)[:, None]
    process = synthetic_decision_process().set_params(inspection_cost=1.0)
    with RiskBasedAgent(
        estimator=GaussianNB(), process=process, budget=_CountingThreshold()
    ).fit(X[:500], y[:500]) as agent:
        _CountingThreshold.examined = 0
        n_requests = int(agent.observe(X[500:])["inspect"].sum())
    assert n_requests > 100
    # each step once, plus at most one first chunk per request
    assert _CountingThreshold.examined <= 20_000 + 256 * n_requests
