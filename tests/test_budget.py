"""Budget policies: the scan contract, each policy's rule, composition."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skrbal.budget import AllOf, BudgetPolicy, CostThreshold


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


POLICIES = [CostThreshold(), AllOf(policies=[CostThreshold(), CostThreshold()])]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: type(p).__name__)
@settings(max_examples=60, deadline=None)
@given(stream=streams())
def test_scan_on_pieces_equals_scan_on_block(policy, stream):
    evpi, times, available, cost, cuts = stream
    whole = run(policy, evpi, times, available, cost, policy.initial_state())
    assert run_pieces(policy, evpi, times, available, cost, cuts) == whole


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: type(p).__name__)
@settings(max_examples=30, deadline=None)
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


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: type(p).__name__)
def test_scan_does_not_mutate_state(policy):
    evpi = np.array([1.0, 9.0, 9.0])
    state = policy.initial_state()
    before = json.dumps(state)
    policy.scan(evpi, np.arange(3.0), np.ones(3, bool), 5.0, state)
    assert json.dumps(state) == before


@settings(max_examples=60, deadline=None)
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
