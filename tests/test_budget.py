"""Budget policies: the scan contract, each policy's rule, composition."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from _examples import examples  # tests/ is on sys.path
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skrbal.budget import (
    AllOf,
    BudgetPolicy,
    BudgetStarvedError,
    BudgetStarvedWarning,
    CostThreshold,
    MinimumGap,
    PacedBudget,
    QuantileThreshold,
    SpendCap,
)


def run(policy, evpi, times, available, cost, state):
    """Scan to the end, restarting after each inspection, as a learner does.

    Returns the inspected indices and the final state.
    """
    inspected, start = [], 0
    while True:
        k, state = policy.scan(
            evpi[start:], times[start:], available[start:], cost, state
        )
        if k < 0:
            return inspected, state
        inspected.append(start + k)
        start += k + 1


def run_pieces(policy, evpi, times, available, cost, cuts):
    """``run`` on the pieces between ``cuts``, each from the previous state."""
    state = policy.initial_state()
    inspected = []
    bounds = [0, *sorted(cuts), evpi.shape[0]]
    for lo, hi in itertools.pairwise(bounds):
        found, state = run(
            policy, evpi[lo:hi], times[lo:hi], available[lo:hi], cost, state
        )
        inspected.extend(lo + k for k in found)
    return inspected, state


@st.composite
def streams(draw, max_size=60):
    n = draw(st.integers(0, max_size))
    evpi = draw(st.lists(st.floats(0.0, 20.0, allow_nan=False), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n, max_size=n))
    available = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    cuts = draw(st.lists(st.integers(0, n), max_size=5))
    cost = draw(st.sampled_from([0.0, 2.0, 5.0, 7.5]))
    return (
        np.asarray(evpi, dtype=float),
        np.cumsum(gaps),
        np.asarray(available, dtype=bool),
        cost,
        cuts,
    )


POLICIES = [
    CostThreshold(),
    SpendCap(limit=10.0, period=4.0),
    SpendCap(limit=7.5, period=2.5, origin=-1.0),
    MinimumGap(gap=2.0),
    QuantileThreshold(rate=0.2, window=7, tolerance=3),
    QuantileThreshold(rate=0.5, window=1, tolerance=0.5),
    CostThreshold() & SpendCap(limit=10.0, period=5.0),
    CostThreshold() & MinimumGap(gap=1.5) & QuantileThreshold(rate=0.3, window=5),
    AllOf(
        policies=[
            QuantileThreshold(rate=0.4, window=4, tolerance=2),
            SpendCap(limit=7.5, period=3.0),
            MinimumGap(gap=0.5),
        ]
    ),
    PacedBudget(limit=10.0, period=4.0),
    PacedBudget(limit=7.5, period=2.5, origin=-1.0, carry_over=False, explore=0.0),
    PacedBudget(limit=3.0, period=2.0, reserve=0.5, pacing_rate=0.3, persistence=1),
    PacedBudget(limit=20.0, period=7.0, explore=1.0, persistence=None, reserve=0.0),
    PacedBudget(limit=20.0, period=7.0) & MinimumGap(gap=1.0),
    PacedBudget(limit=7.5, period=2.5, release="time", persistence=3, explore=0.5),
]


def ids(policy):
    return repr(policy).replace("\n", "").replace(" ", "")


@pytest.mark.parametrize("policy", POLICIES, ids=ids)
@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_scan_on_pieces_equals_scan_on_block(policy, stream):
    evpi, times, available, cost, cuts = stream
    whole = run(policy, evpi, times, available, cost, policy.initial_state())
    assert run_pieces(policy, evpi, times, available, cost, cuts) == whole


@pytest.mark.parametrize("policy", POLICIES, ids=ids)
@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_state_is_json_and_resumes_exactly(policy, stream):
    evpi, times, available, cost, cuts = stream
    cut = min(cuts, default=0)
    _, state = run(
        policy, evpi[:cut], times[:cut], available[:cut], cost, policy.initial_state()
    )
    stored = json.loads(json.dumps(state))
    assert stored == state
    assert run(policy, evpi[cut:], times[cut:], available[cut:], cost, stored) == (
        run(policy, evpi[cut:], times[cut:], available[cut:], cost, state)
    )


@pytest.mark.parametrize("policy", POLICIES, ids=ids)
def test_scan_does_not_mutate_state(policy):
    evpi = np.array([1.0, 9.0, 9.0])
    state = policy.initial_state()
    before = json.dumps(state)
    policy.scan(evpi, np.arange(3.0), np.ones(3, bool), 5.0, state)
    assert json.dumps(state) == before


@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_cost_threshold_is_evpi_above_cost(stream):
    evpi, times, available, cost, _ = stream
    policy = CostThreshold()
    inspected, _ = run(policy, evpi, times, available, cost, policy.initial_state())
    assert inspected == np.flatnonzero((evpi > cost) & available).tolist()


def test_cost_threshold_is_strict():
    policy = CostThreshold()
    state = policy.initial_state()
    assert policy.scan([5.0], [0.0], np.array([True]), 5.0, state)[0] == -1
    assert policy.scan([5.0 + 1e-12], [0.0], np.array([True]), 5.0, state)[0] == 0


def test_empty_block_returns_no_step_and_the_same_state():
    policy = CostThreshold()
    assert policy.scan([], [], np.zeros(0, bool), 1.0, {}) == (-1, {})


def test_and_builds_a_flat_composition():
    a, b, c = CostThreshold(), CostThreshold(), CostThreshold()
    composed = (a & b) & c
    assert isinstance(composed, AllOf)
    assert composed.policies == [a, b, c]
    assert isinstance(clone(composed), AllOf)
    assert len(clone(composed).policies) == 3


def test_policies_are_estimators_for_clone_and_repr():
    policy = AllOf(policies=[CostThreshold()])
    assert isinstance(policy, BudgetPolicy)
    assert "CostThreshold" in repr(policy)
    assert clone(policy).get_params()["policies"][0] is not policy.policies[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"evpi": [[1.0]]}, "evpi must be a 1-d array"),
        ({"evpi": [np.nan]}, "evpi must be finite"),
        ({"times": [0.0, 1.0]}, "times must have the shape"),
        ({"times": [np.inf]}, "times must be finite"),
        ({"available": [1]}, "available must be a boolean array"),
        ({"cost": -1.0}, "cost must be a finite number"),
        ({"cost": np.nan}, "cost must be a finite number"),
        ({"state": {"x": 1}}, "must have the keys"),
    ],
)
def test_bad_scan_input_is_named(kwargs, match):
    args = {
        "evpi": [1.0],
        "times": [0.0],
        "available": np.array([True]),
        "cost": 0.5,
        "state": {},
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        CostThreshold().scan(**args)


def test_decreasing_times_are_rejected():
    with pytest.raises(ValueError, match="times must be non-decreasing"):
        CostThreshold().scan([1.0, 2.0], [1.0, 0.0], np.ones(2, bool), 0.5, {})


def test_state_must_be_a_dict():
    with pytest.raises(TypeError, match="state must be a dict"):
        CostThreshold().scan([1.0], [0.0], np.array([True]), 0.5, None)


def test_all_of_rejects_bad_members():
    with pytest.raises(ValueError, match="non-empty list"):
        AllOf(policies=[]).initial_state()
    with pytest.raises(TypeError, match="BudgetPolicy instances"):
        AllOf(policies=[CostThreshold(), "evpi"]).initial_state()
    with pytest.raises(ValueError, match="member states"):
        AllOf(policies=[CostThreshold()]).scan(
            [1.0], [0.0], np.array([True]), 0.5, {"policies": []}
        )


# ------------------------------------------------------------------ SpendCap
CAPPED = [p for p in POLICIES if "SpendCap" in repr(p)]


def spend_caps(policy):
    members = policy.policies if isinstance(policy, AllOf) else [policy]
    return [m for m in members if isinstance(m, SpendCap)]


@pytest.mark.parametrize("policy", CAPPED, ids=ids)
@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_spend_cap_is_never_exceeded(policy, stream):
    evpi, times, available, cost, cuts = stream
    inspected, _ = run_pieces(policy, evpi, times, available, cost, cuts)
    for cap in spend_caps(policy):
        periods = np.floor((times[inspected] - cap.origin) / cap.period)
        _, counts = np.unique(periods, return_counts=True)
        assert np.all(counts * cost <= cap.limit)


@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_spend_cap_alone_spends_on_the_first_available_steps(stream):
    evpi, times, available, cost, _ = stream
    cap = SpendCap(limit=10.0, period=4.0)
    inspected, _ = run(cap, evpi, times, available, cost, cap.initial_state())
    allowed = np.inf if cost == 0 else np.floor(10.0 / cost)
    expected, spent = [], {}
    for i in np.flatnonzero(available):
        period = np.floor(times[i] / 4.0)
        if spent.get(period, 0) < allowed:
            expected.append(int(i))
            spent[period] = spent.get(period, 0) + 1
    assert inspected == expected


def test_spend_cap_counts_money_not_inspections():
    cap = SpendCap(limit=10.0, period=100.0)
    evpi, times, available = np.ones(10), np.arange(10.0), np.ones(10, bool)
    assert len(run(cap, evpi, times, available, 3.0, cap.initial_state())[0]) == 3
    assert len(run(cap, evpi, times, available, 5.0, cap.initial_state())[0]) == 2


def test_starved_spend_cap_is_refused_or_warned_once():
    """A limit below one inspection used to inspect nothing, silently."""
    evpi, times, available = np.full(10, 20.0), np.arange(10.0), np.ones(10, bool)
    cap = SpendCap(limit=4.8, period=5.0)
    with pytest.raises(BudgetStarvedError, match=r"SpendCap.*4\.8.*below.*7"):
        run(cap, evpi, times, available, 7.0, cap.initial_state())
    starved = SpendCap(limit=4.8, period=5.0, allow_starved=True)
    with pytest.warns(BudgetStarvedWarning, match="can never inspect") as caught:
        assert run(starved, evpi, times, available, 7.0, starved.initial_state()) == (
            [],
            starved.initial_state() | {"last_time": 9.0},
        )
        run(starved, evpi, times, available, 7.0, starved.initial_state())
    assert len(caught) == 1


def test_spend_cap_resets_each_period():
    cap = SpendCap(limit=5.0, period=3.0, origin=1.0)
    evpi, times, available = np.ones(8), np.arange(8.0), np.ones(8, bool)
    inspected, state = run(cap, evpi, times, available, 5.0, cap.initial_state())
    # periods: [-2, 1) -> step 0, [1, 4) -> step 1, [4, 7) -> step 4, [7, 10) -> 7
    assert inspected == [0, 1, 4, 7]
    assert state == {"period": 2, "spent": 5.0, "last_time": 7.0}


# ---------------------------------------------------------------- MinimumGap
GAPPED = [p for p in POLICIES if "MinimumGap" in repr(p)]


def gaps(policy):
    members = policy.policies if isinstance(policy, AllOf) else [policy]
    return [m.gap for m in members if isinstance(m, MinimumGap)]


@pytest.mark.parametrize("policy", GAPPED, ids=ids)
@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_gap_is_respected(policy, stream):
    evpi, times, available, cost, cuts = stream
    inspected, _ = run_pieces(policy, evpi, times, available, cost, cuts)
    assert np.all(np.diff(times[inspected]) >= max(gaps(policy)))


@settings(max_examples=examples(30), deadline=None)
@given(stream=streams())
def test_gap_alone_inspects_as_soon_as_allowed(stream):
    evpi, times, available, cost, _ = stream
    policy = MinimumGap(gap=2.0)
    inspected, _ = run(policy, evpi, times, available, cost, policy.initial_state())
    expected, last = [], -np.inf
    for i in np.flatnonzero(available):
        if times[i] - last >= 2.0:
            expected.append(int(i))
            last = times[i]
    assert inspected == expected


@pytest.mark.parametrize(
    "policy", [SpendCap(limit=1.0, period=1.0), MinimumGap(gap=1.0)], ids=ids
)
def test_time_based_policies_reject_time_going_back(policy):
    _, state = policy.scan([1.0], [5.0], np.array([False]), 0.5, policy.initial_state())
    with pytest.raises(ValueError, match="times must continue"):
        policy.scan([1.0], [4.0], np.array([True]), 0.5, state)


# --------------------------------------------------------- QuantileThreshold
@settings(max_examples=examples(30), deadline=None)
@given(
    stream=streams(max_size=120),
    rate=st.sampled_from([0.05, 0.2, 0.5, 1.0]),
    tolerance=st.sampled_from([0.5, 3.0, 20.0]),
)
def test_quantile_threshold_stays_within_its_rate(stream, rate, tolerance):
    evpi, times, available, cost, cuts = stream
    policy = QuantileThreshold(rate=rate, window=10, tolerance=tolerance)
    inspected, state = run_pieces(policy, evpi, times, available, cost, cuts)
    assert state["n_seen"] == evpi.shape[0]
    assert state["n_inspected"] == len(inspected)
    assert len(inspected) < rate * (evpi.shape[0] + tolerance) + 1


def test_quantile_threshold_keeps_the_rate_and_picks_high_evpi():
    rng = np.random.default_rng(3)
    evpi = rng.exponential(size=5000)
    times, available = np.arange(5000.0), np.ones(5000, bool)
    policy = QuantileThreshold(rate=0.1, window=200, tolerance=50)
    inspected, _ = run(policy, evpi, times, available, 1.0, policy.initial_state())
    assert 500 - 50 <= len(inspected) <= 500 + 6
    assert np.median(evpi[inspected]) > np.quantile(evpi, 0.85)


def test_quantile_threshold_ranks_against_the_window_only():
    # A step is inspected when fewer than q * (m + 1) of the previous window
    # values lie above it. Rate 1/2, no debt at step 0: the first step (m = 0)
    # needs 0 < 0.5.
    policy = QuantileThreshold(rate=0.5, window=2, tolerance=1e9)
    state = policy.initial_state()
    k, state = policy.scan([3.0], [0.0], np.array([True]), 0.0, state)
    assert k == 0
    # window [3.0]; 2.0 has one value above it: 1 < 0.5 * 2 is False.
    k, state = policy.scan([2.0], [1.0], np.array([True]), 0.0, state)
    assert k == -1
    # window [3.0, 2.0]; 2.5 has one above: 1 < 0.5 * 3 is True.
    k, state = policy.scan([2.5], [2.0], np.array([True]), 0.0, state)
    assert k == 0
    assert state == {"recent": [2.0, 2.5], "n_seen": 3, "n_inspected": 2}


def test_quantile_threshold_repays_debt_from_unavailable_steps():
    policy = QuantileThreshold(rate=0.25, window=4, tolerance=4)
    evpi = np.ones(12)
    available = np.r_[np.zeros(8, bool), np.ones(4, bool)]
    inspected, _ = run(
        policy, evpi, np.arange(12.0), available, 0.0, policy.initial_state()
    )
    # 8 unavailable steps owe 2 inspections: the share reaches 1 and every
    # step is taken until the debt is repaid, then the rank decides.
    assert inspected[:2] == [8, 9]


@pytest.mark.parametrize(
    ("policy", "match"),
    [
        (SpendCap(limit=-1.0, period=1.0), "'limit' parameter"),
        (SpendCap(limit=1.0, period=0.0), "'period' parameter"),
        (SpendCap(limit=np.inf, period=1.0), "'limit' parameter"),
        (MinimumGap(gap=-1.0), "'gap' parameter"),
        (MinimumGap(gap=np.nan), "'gap' parameter"),
        (SpendCap(limit=1.0, period=1.0, origin=np.inf), "'origin' parameter"),
        (QuantileThreshold(rate=0.1, tolerance=np.inf), "'tolerance' parameter"),
        (QuantileThreshold(rate=0.0), "'rate' parameter"),
        (QuantileThreshold(rate=1.5), "'rate' parameter"),
        (QuantileThreshold(rate=0.1, window=0), "'window' parameter"),
        (QuantileThreshold(rate=0.1, tolerance=0), "'tolerance' parameter"),
        (CostThreshold() & MinimumGap(gap=-1.0), "'gap' parameter"),
    ],
    ids=ids,
)
def test_bad_parameters_are_named(policy, match):
    with pytest.raises(ValueError, match=match):
        policy.initial_state()


@pytest.mark.parametrize(
    ("policy", "state", "match"),
    [
        (
            QuantileThreshold(rate=0.1, window=2),
            {"recent": [1.0, 2.0, 3.0], "n_seen": 3, "n_inspected": 0},
            "at most window=2",
        ),
        (
            QuantileThreshold(rate=0.1, window=5),
            {"recent": [1.0, 2.0], "n_seen": 1, "n_inspected": 0},
            "no more than n_seen",
        ),
        (
            QuantileThreshold(rate=0.1),
            {"recent": [], "n_seen": 1, "n_inspected": 2},
            "cannot exceed",
        ),
        (
            QuantileThreshold(rate=0.1),
            {"recent": [float("nan")], "n_seen": 1, "n_inspected": 0},
            r"state\['recent'\] of QuantileThreshold must be a list of finite",
        ),
        (
            QuantileThreshold(rate=0.1),
            {"recent": [], "n_seen": -1, "n_inspected": 0},
            r"state\['n_seen'\] of QuantileThreshold must be an integer >= 0",
        ),
        (
            SpendCap(limit=1.0, period=1.0),
            {"period": 1.5, "spent": 0.0, "last_time": None},
            r"state\['period'\] of SpendCap must be an integer or None",
        ),
        (
            SpendCap(limit=1.0, period=1.0),
            {"period": None, "spent": "0", "last_time": None},
            r"state\['spent'\] of SpendCap must be a finite number >= 0, got '0'",
        ),
        (
            SpendCap(limit=1.0, period=1.0),
            {"period": 0, "spent": -3.0, "last_time": None},
            r"state\['spent'\] of SpendCap must be a finite number >= 0, got -3",
        ),
        (
            MinimumGap(gap=1.0),
            {"last_inspection": True, "last_time": None},
            r"state\['last_inspection'\] of MinimumGap must be a finite number",
        ),
        (
            CostThreshold() & MinimumGap(gap=1.0),
            {"policies": [{}, {"last_inspection": None, "last_time": np.inf}]},
            r"state\['last_time'\] of MinimumGap",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_corrupt_state_is_named(policy, state, match):
    with pytest.raises(ValueError, match=match):
        policy.scan([1.0], [0.0], np.array([True]), 0.0, state)


# ---------------------------------------------------------------------- #
# PacedBudget
# ---------------------------------------------------------------------- #
def paced(**params):
    defaults = dict(carry_over=False, reserve=0.0, explore=0.0, persistence=None)
    return PacedBudget(**(defaults | params))


def test_paced_budget_spreads_what_first_come_first_served_spends_at_once():
    evpi, times, available = np.full(30, 8.0), np.arange(30.0), np.ones(30, bool)
    fcfs = CostThreshold() & SpendCap(limit=21.0, period=30.0)
    assert run(fcfs, evpi, times, available, 7.0, fcfs.initial_state())[0] == [0, 1, 2]
    policy = paced(limit=21.0, period=30.0)
    inspected, state = run(policy, evpi, times, available, 7.0, policy.initial_state())
    assert len(inspected) == 3 and inspected[-1] >= 15
    assert state["total_spent"] == 21.0
    # A step worth far more than the cost is taken even when ahead of pace.
    evpi[1] = 100.0
    assert run(policy, evpi, times, available, 7.0, policy.initial_state())[0][:2] == [
        0,
        1,
    ]


@pytest.mark.parametrize("carry_over", [False, True])
@settings(max_examples=examples(40), deadline=None)
@given(stream=streams())
def test_paced_budget_never_spends_money_it_does_not_have(carry_over, stream):
    evpi, times, available, cost, cuts = stream
    policy = PacedBudget(limit=8.0, period=3.0, carry_over=carry_over, explore=0.5)
    inspected, _ = run_pieces(policy, evpi, times, available, cost, cuts)
    assert all(evpi[inspected] > cost)
    periods = np.floor(times[inspected] / 3.0)
    if not carry_over:
        _, counts = np.unique(periods, return_counts=True)
        assert np.all(counts * cost <= 8.0)
    elif times.size:
        first = np.floor(times[0] / 3.0)
        for k, period in enumerate(periods):  # spend to date within money to date
            assert (k + 1) * cost <= 8.0 * (period - first + 1)


def test_paced_budget_carries_money_over_and_saves_up_below_one_inspection():
    evpi, times, available = np.full(40, 20.0), np.arange(40.0), np.ones(40, bool)
    policy = paced(limit=4.8, period=5.0, carry_over=True)
    inspected, _ = run(policy, evpi, times, available, 7.0, policy.initial_state())
    # 4.8 a period pays for an inspection in the second period, then more.
    assert inspected[0] == 5 and len(inspected) == 5
    starved = paced(limit=4.8, period=5.0)
    with pytest.raises(BudgetStarvedError, match=r"PacedBudget.*carry_over=True"):
        run(starved, evpi, times, available, 7.0, starved.initial_state())
    allowed = paced(limit=4.8, period=5.0, allow_starved=True)
    with pytest.warns(BudgetStarvedWarning):
        assert (
            run(allowed, evpi, times, available, 7.0, allowed.initial_state())[0] == []
        )


def test_paced_budget_explores_first_come_first_served_while_young():
    evpi, times, available = np.full(30, 8.0), np.arange(30.0), np.ones(30, bool)
    policy = paced(limit=28.0, period=30.0, explore=0.5)
    inspected, _ = run(policy, evpi, times, available, 7.0, policy.initial_state())
    # 14 of the 28 first come, first served; the rest paced.
    assert inspected[:2] == [0, 1] and inspected[2] > 2 and len(inspected) == 4


def test_paced_budget_inspects_evpi_that_persists():
    cost = 7.0
    evpi = np.full(20, 7.5)  # just above the cost: never above a risen price
    times, available = np.arange(20.0), np.ones(20, bool)
    pacing_only = paced(limit=70.0, period=1000.0, pacing_rate=5.0)
    assert run(pacing_only, evpi, times, available, cost, pacing_only.initial_state())[
        0
    ] == [0]
    policy = paced(limit=70.0, period=1000.0, pacing_rate=5.0, persistence=4)
    inspected, _ = run(policy, evpi, times, available, cost, policy.initial_state())
    # A run of four is inspected whatever the price; the count restarts after
    # each inspection: steps 1..4, 5..8, ...
    assert inspected == [0, 4, 8, 12, 16]
    evpi[3] = 1.0  # a dip breaks the run
    inspected, _ = run(policy, evpi, times, available, cost, policy.initial_state())
    assert inspected == [0, 7, 11, 15, 19]
    # The period's money stays a hard cap: 28 pays for four.
    capped = paced(limit=28.0, period=1000.0, pacing_rate=5.0, persistence=4)
    inspected, _ = run(capped, evpi, times, available, cost, capped.initial_state())
    assert inspected == [0, 7, 11, 15]
    # The reserve is spent on what persists only one inspection ahead of the
    # pace: half of 28 held back pays for no run after the second inspection,
    # whose price is far above one pacing_rate.
    saving = paced(
        limit=28.0, period=1000.0, pacing_rate=5.0, persistence=4, reserve=0.5
    )
    evpi[3] = 7.5
    inspected, _ = run(saving, evpi, times, available, cost, saving.initial_state())
    assert inspected == [0, 4]


def test_paced_budget_keeps_its_reserve_for_the_end_of_the_period():
    evpi, times, available = np.full(20, 50.0), np.arange(20.0), np.ones(20, bool)
    timed = dict(reserve=0.5, pacing_rate=0.01, release="time")
    policy = paced(limit=40.0, period=20.0, **timed)
    inspected, _ = run(policy, evpi, times, available, 10.0, policy.initial_state())
    assert inspected == [0, 1, 10, 11]
    # ...unless the EVPI persists: the reserve is there for it. The count of
    # steps above the cost restarts after each inspection.
    persisting = paced(limit=40.0, period=20.0, **timed)
    persisting.set_params(persistence=3)
    state = persisting.initial_state()
    assert run(persisting, evpi, times, available, 10.0, state)[0] == [0, 1, 4, 7]


def test_paced_budget_explores_as_long_as_the_values_are_alike():
    # Online knapsack (Zhou, Chakrabarty and Lukose): values all alike, no
    # reason to wait for better ones; one value ten times the cost, save.
    evpi, times, available = np.full(30, 8.0), np.arange(30.0), np.ones(30, bool)
    policy = paced(limit=28.0, period=30.0, explore="auto")
    inspected, _ = run(policy, evpi, times, available, 7.0, policy.initial_state())
    assert inspected == [0, 1, 2, 3]  # 1 / (1 + ln(8 / 7)) = 88 % of the money
    evpi[0] = 70.0
    inspected, _ = run(policy, evpi, times, available, 7.0, policy.initial_state())
    assert inspected[:2] == [0, 1] and inspected[2] > 2  # 1 / (1 + ln 10) = 30 %
    fixed = paced(limit=28.0, period=30.0, explore=0.25)
    evpi[0] = 8.0
    inspected, _ = run(fixed, evpi, times, available, 7.0, fixed.initial_state())
    assert inspected[:1] == [0] and inspected[1] > 1


def test_paced_budget_automatic_persistence_needs_a_run_that_stands_out():
    cost, n_steps = 7.0, 600
    times, available = np.arange(float(n_steps)), np.ones(n_steps, bool)
    # An inspection at step 0 puts a price on the pace that a run of three
    # just above the cost, at steps 500..502, can only pass by persisting.
    policy = paced(limit=70.0, period=10000.0, pacing_rate=50.0, persistence="auto")
    rare = np.full(n_steps, 1.0)
    rare[[0, 500, 501, 502]] = 8.0
    inspected, _ = run(policy, rare, times, available, cost, policy.initial_state())
    assert inspected == [0, 501]
    # The same run among steps above the cost every other step is chance.
    frequent = rare.copy()
    frequent[1:499:2] = 8.0
    inspected, _ = run(policy, frequent, times, available, cost, policy.initial_state())
    assert inspected == [0]
    # A fixed count of two takes it regardless.
    fixed = paced(limit=70.0, period=10000.0, pacing_rate=50.0, persistence=2)
    inspected, _ = run(fixed, frequent, times, available, cost, fixed.initial_state())
    assert inspected == [0, 501]


def test_paced_budget_releases_its_reserve_when_chances_run_out():
    # Steps worth an inspection every tenth step; half the money in reserve.
    evpi = np.where(np.arange(100) % 10 == 0, 50.0, 1.0)
    times, available = np.arange(100.0), np.ones(100, bool)
    params = dict(limit=30.0, period=100.0, reserve=0.5, pacing_rate=0.01)
    demand = paced(**params)
    inspected, _ = run(demand, evpi, times, available, 10.0, demand.initial_state())
    # Held while the steps to come promise more than 1.5 chances to spend it:
    # at step 90, 10 steps seen above the cost in 90, 10 steps left.
    assert inspected == [0, 90]
    timed = paced(**params, release="time")
    inspected, _ = run(timed, evpi, times, available, 10.0, timed.initial_state())
    assert inspected == [0, 50, 60]


@pytest.mark.parametrize(
    ("state", "match"),
    [
        ({"n_seen": -1}, r"state\['n_seen'\] of PacedBudget must be an integer >= 0"),
        ({"peak": float("inf")}, r"state\['peak'\] of PacedBudget must be a finite"),
        (
            {"spent": -1.0},
            r"state\['spent'\] of PacedBudget must be a finite number >= 0",
        ),
        ({"price": float("nan")}, r"state\['price'\] of PacedBudget must be a finite"),
        ({"run": -2}, r"state\['run'\] of PacedBudget must be an integer >= 0"),
        ({"spent": 5.0, "total_spent": 1.0}, "cannot exceed"),
        ({"period": 0}, "set together"),
    ],
)
def test_corrupt_paced_state_is_named(state, match):
    policy = PacedBudget(limit=10.0, period=5.0)
    with pytest.raises(ValueError, match=match):
        policy.scan([1.0], [0.0], np.array([True]), 1.0, policy.initial_state() | state)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"reserve": 1.0}, "'reserve' parameter"),
        ({"explore": -0.1}, "'explore' parameter"),
        ({"pacing_rate": 0.0}, "'pacing_rate' parameter"),
        ({"persistence": 0}, "'persistence' parameter"),
        ({"persistence": "always"}, "'persistence' parameter"),
        ({"explore": "never"}, "'explore' parameter"),
        ({"release": "never"}, "'release' parameter"),
        ({"limit": -1.0}, "'limit' parameter"),
        ({"carry_over": "yes"}, "'carry_over' parameter"),
    ],
)
def test_bad_paced_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        PacedBudget(**({"limit": 10.0, "period": 5.0} | params)).initial_state()


BASE_PARAMS = {
    SpendCap: {"limit": 10.0, "period": 5.0},
    PacedBudget: {"limit": 10.0, "period": 5.0},
    MinimumGap: {"gap": 1.0},
    QuantileThreshold: {"rate": 0.1},
}
NUMERIC_PARAMS = [
    (cls, name)
    for cls in BASE_PARAMS
    for name, constraints in cls._parameter_constraints.items()
    if "boolean" not in constraints
]


@pytest.mark.parametrize(
    ("cls", "name"),
    NUMERIC_PARAMS,
    ids=[f"{c.__name__}.{n}" for c, n in NUMERIC_PARAMS],
)
@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_a_bool_is_not_a_number_of_a_budget(cls, name, flag):
    # True == 1 passed every numeric check: SpendCap(limit=True) spent 1 per period.
    policy = cls(**(BASE_PARAMS[cls] | {name: flag}))
    with pytest.raises(ValueError, match=rf"'{name}' parameter .* not a bool"):
        policy.initial_state()
    with pytest.raises(ValueError, match=rf"'{name}' parameter .* not a bool"):
        (CostThreshold() & policy).initial_state()


def test_every_budget_policy_has_its_numeric_parameters_checked():
    assert {cls for cls, _ in NUMERIC_PARAMS} == set(BASE_PARAMS)
    assert len(NUMERIC_PARAMS) >= 12


@pytest.mark.parametrize("window", [10_001, 10**12, 1e12, 50.0, "100"])
def test_quantile_window_is_a_bounded_integer(window):
    # window=10**12 asked numpy for 7 TiB; window=100_000 cost 5.5 ms per row.
    with pytest.raises(ValueError, match="'window' parameter"):
        QuantileThreshold(rate=0.1, window=window).initial_state()


def test_quantile_window_up_to_its_bound_is_accepted():
    policy = QuantileThreshold(rate=0.5, window=10_000)
    k, _ = policy.scan(
        np.ones(3), np.arange(3.0), np.ones(3, bool), 0.5, policy.initial_state()
    )
    assert k == 0
    assert QuantileThreshold(rate=0.5, window=np.int64(20)).initial_state()


@pytest.mark.parametrize("tolerance", [np.nan, -1.0, 0.0, "50"])
def test_quantile_tolerance_is_checked(tolerance):
    with pytest.raises(ValueError, match="'tolerance' parameter"):
        QuantileThreshold(rate=0.1, tolerance=tolerance).initial_state()


def test_scan_checks_parameters_unless_its_caller_did():
    # The decision kernel checks a policy once (initial_state) and then scans
    # a stream in many pieces without checking its parameters again.
    policy = MinimumGap(gap=3.0)
    state = policy.initial_state()
    policy.set_params(gap=-1.0)
    with pytest.raises(ValueError, match="gap"):
        policy.scan([9.0], [0.0], np.array([True]), 1.0, state)
    assert (
        policy.scan([9.0], [0.0], np.array([True]), 1.0, state, check_params=False)[0]
        == 0
    )
