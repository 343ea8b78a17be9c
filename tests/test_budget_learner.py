"""RiskBasedLearner driven by a budget policy (``budget=BudgetPolicy``)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.budget import (
    BudgetStarvedError,
    CostThreshold,
    MinimumGap,
    PacedBudget,
    QuantileThreshold,
    SpendCap,
)

CENTRES = np.array([[-5.19, -0.01], [-0.66, -0.06], [5.75, -0.11], [19.11, 0.02]])
# Three labelled steps per state: GaussianNB is overconfident on one per class.
INIT = [3, 4, 5, 90, 91, 92, 170, 171, 172, 250, 251, 252]


def _stream(seed, n_cycles=3, per_state=80, spread=4.0):
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([1, 2, 3, 4], per_state), n_cycles)
    X = CENTRES[y - 1] + rng.normal(scale=spread, size=(y.size, 2))
    return X, y


def _fit(query, seed=0, n_cycles=3, test=True, **params):
    X, y = _stream(seed, n_cycles=n_cycles)
    learner = RiskBasedLearner(
        estimator=GaussianNB(), process=synthetic_decision_process(), budget=query
    )
    test_set = {"X_test": X, "y_test": y} if test else {}
    return learner.set_params(**params).fit(X, y, initial=INIT, **test_set)


@pytest.mark.parametrize("semi_supervised", [None, "em"])
def test_cost_threshold_policy_reproduces_query_evpi(semi_supervised):
    X, y = _stream(1)
    from skrbal.mixture import BayesianGMMClassifier

    params = {
        "estimator": BayesianGMMClassifier() if semi_supervised else GaussianNB(),
        "process": synthetic_decision_process(),
        "semi_supervised": semi_supervised,
    }
    paper = RiskBasedLearner(strategy="evpi", **params).fit(X, y, initial=INIT)
    policy = RiskBasedLearner(budget=CostThreshold(), **params).fit(X, y, initial=INIT)
    assert paper.history_.totals["n_inspections"] > 0
    pd.testing.assert_frame_equal(paper.history_.steps, policy.history_.steps)
    pd.testing.assert_frame_equal(
        paper.history_.queries,
        policy.history_.queries.drop(columns="budget_state"),
    )
    assert paper.history_.totals == policy.history_.totals
    assert "budget_state" not in paper.history_


POLICIES = [
    CostThreshold() & SpendCap(limit=30.0, period=100.0),
    CostThreshold() & MinimumGap(gap=25.0),
    QuantileThreshold(rate=0.02, window=50, tolerance=20),
    CostThreshold() & QuantileThreshold(rate=0.02, window=50),
    PacedBudget(limit=60.0, period=200.0),
]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_block_size_does_not_change_a_budgeted_run(policy):
    small = _fit(policy, block_size=1)
    large = _fit(policy, block_size=300)
    # The model's beliefs on a block of rows differ from those on single rows
    # in the last bits (BLAS), hence a tolerance on EVPIs; the inspections and
    # counts are exact.
    pd.testing.assert_frame_equal(small.history_.steps, large.history_.steps)
    small_state, large_state = small.history_.budget_state, large.history_.budget_state
    assert small.history_.totals["n_inspections"] > 0
    for member, other in zip(
        small_state.get("policies", [small_state]),
        large_state.get("policies", [large_state]),
    ):
        recent = member.pop("recent", [])
        np.testing.assert_allclose(recent, other.pop("recent", []), rtol=1e-12)
        assert member == other


def test_spend_cap_bounds_the_learner_per_period_of_steps():
    process = synthetic_decision_process()
    cost = process.inspection_cost
    free = _fit(None)
    capped = _fit(CostThreshold() & SpendCap(limit=2 * cost, period=100.0))
    steps = capped.history_.steps
    per_period = steps["inspected"].groupby(steps.index // 100).sum()
    assert per_period.max() <= 2
    assert 0 < capped.history_.totals["n_inspections"]
    assert (
        capped.history_.totals["n_inspections"] < free.history_.totals["n_inspections"]
    )


def test_paced_budget_spreads_the_learner_over_the_period():
    process = synthetic_decision_process()
    cost = process.inspection_cost
    limit, n_steps = 4 * cost, 3 * 320
    fcfs = _fit(CostThreshold() & SpendCap(limit=limit, period=n_steps))
    paced = _fit(
        PacedBudget(
            limit=limit, period=n_steps, explore=0.0, reserve=0.0, persistence=None
        )
    )
    first = fcfs.history_.queries["step"].iloc[1:]
    spread = paced.history_.queries["step"].iloc[1:]
    assert len(first) == len(spread) == 4
    assert spread.iloc[-1] > first.iloc[-1]
    assert paced.history_.budget_state["total_spent"] == limit


def test_starved_budget_fails_the_run_by_name():
    cost = synthetic_decision_process().inspection_cost
    with pytest.raises(BudgetStarvedError, match="below the cost"):
        _fit(CostThreshold() & SpendCap(limit=0.5 * cost, period=100.0))


def test_budget_state_is_recorded_per_inspection():
    learner = _fit(QuantileThreshold(rate=0.02, window=50, tolerance=20))
    queries, totals = learner.history_.queries, learner.history_.totals
    states = queries["budget_state"].tolist()
    assert states[0] == {"recent": [], "n_seen": 0, "n_inspected": 0}
    assert [s["n_inspected"] for s in states] == list(range(len(states)))
    # The state after an inspection has seen every step up to it.
    assert [s["n_seen"] for s in states[1:]] == [q + 1 for q in queries["step"][1:]]
    final = learner.history_.budget_state
    assert final["n_seen"] == totals["n_decisions"]
    assert final["n_inspected"] == totals["n_inspections"]
    assert totals["n_inspections"] < 0.02 * (totals["n_decisions"] + 20) + 1


def test_known_steps_are_not_available_to_the_policy():
    learner = _fit(SpendCap(limit=1e9, period=1.0), n_cycles=1, test=False)
    steps = learner.history_.steps
    # Alone, the cap inspects every step whose label is not known yet.
    np.testing.assert_array_equal(steps["inspected"], ~steps["known"])


def test_invalid_policy_is_named_before_the_run():
    with pytest.raises(ValueError, match="'rate' parameter of QuantileThreshold"):
        _fit(QuantileThreshold(rate=2.0))


class _BeliefsSeen(CostThreshold):
    """CostThreshold that reads the beliefs of the steps it scans."""

    needs_beliefs = True
    seen: ClassVar[list] = []

    def scan(self, evpi, times, available, cost, state, **options):
        type(self).seen.append((np.asarray(evpi).copy(), options["beliefs"].copy()))
        return super().scan(evpi, times, available, cost, state, **options)


def test_a_policy_that_needs_beliefs_gets_those_of_the_steps_it_scans():
    # The public hook for a policy ranking steps by belief (a wrapped
    # uncertainty strategy): each scan gets one belief row per scanned step,
    # the very beliefs whose EVPI it is handed; others get none.
    _BeliefsSeen.seen = []
    learner = _fit(_BeliefsSeen(), test=False)
    plain = _fit(CostThreshold(), test=False)
    assert _BeliefsSeen.seen
    process = synthetic_decision_process()
    for evpi, beliefs in _BeliefsSeen.seen:
        assert beliefs.shape == (evpi.shape[0], process.n_states)
        np.testing.assert_allclose(
            np.where(evpi > 0, process.evpi(beliefs), 0.0), evpi, atol=1e-9
        )
    pd.testing.assert_frame_equal(learner.history_.steps, plain.history_.steps)


def test_the_kernel_names_a_bad_budget_state_once_per_block():
    # States are checked once per decided block (BudgetPolicy.check_state)
    # rather than in every scan of its pieces; a bad one is still named.
    from skrbal._learning import DecisionKernel

    kernel = DecisionKernel(
        synthetic_decision_process(), budget=SpendCap(limit=14.0, period=100)
    )
    proba = np.full((5, 4), 0.25)
    with pytest.raises(ValueError, match="state of SpendCap must have the keys"):
        kernel.decide(proba, np.arange(5.0), {"spent": 0.0})
    decided = kernel.decide(proba, np.arange(5.0), kernel.budget.initial_state())
    assert set(decided.budget_state) == {"period", "spent", "last_time"}
