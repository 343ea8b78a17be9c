"""Deciding from a snapshot of the model, as the agent decides (issue 28.25).

A command-line ``observe`` that must not import scikit-learn would decide
from what :meth:`Campaign.snapshot` gives (the model's and the fantasies'
Student-t predictives as JSON) with the numpy-only decision step: the
process's tables, the budget's rule, the kernel and a ``DecisionState``.
Over a session of observations, results and a cancellation, those decide bit
for bit as the agent does.
"""

import copy
import json

import numpy as np

from skrbal import synthetic_decision_process
from skrbal._decision._serialisation import process_from_dict
from skrbal._decision._tables import ProcessTables
from skrbal._learning._decision_state import DecisionState
from skrbal._learning._fantasy import BlockFantasies
from skrbal._learning._kernel import DecisionKernel
from skrbal._predictive import PredictiveClassifier, StudentTPredictive
from skrbal.budget import PacedBudget
from skrbal.budget._paced_rule import PacedRule
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent

CENTRES = np.array([[0.0, 0.0], [2.0, 1.0], [4.0, 3.0], [7.0, 6.0]])


def _stream(rng, n):
    states = rng.choice(4, size=n, p=[0.55, 0.25, 0.12, 0.08])
    return CENTRES[states] + rng.normal(0.0, 1.0, size=(n, 2)), states + 1


def _decide_from_snapshot(snapshot, campaign, process_dict, budget, X, first):
    """Decide the block ``X`` from a snapshot, with the numpy-only pieces only."""
    snapshot = json.loads(json.dumps(snapshot))  # as a store would give it
    process = process_from_dict(ProcessTables, json.loads(json.dumps(process_dict)))
    kernel = DecisionKernel(process, None, PacedRule(**budget.get_params()))
    state = DecisionState(kernel)
    state.requests = copy.deepcopy(campaign.requests)
    state.budget_state = json.loads(json.dumps(campaign.budget_state))
    model = PredictiveClassifier(
        StudentTPredictive.from_json(snapshot["model"]), snapshot["classes"]
    )
    proba = kernel.beliefs(model, X)
    fantasies = None
    pending = snapshot.get("fantasies")
    if pending is not None:
        assert pending["pending"] == state.requests.oldest_open(32)
        if pending["weights"] is not None:
            stacked = StudentTPredictive.from_json(pending["predictive"])
            fantasies = BlockFantasies(
                np.array(pending["weights"]), (), X, process, stacked.proba
            )
    times = np.arange(first, first + X.shape[0], dtype=float)
    decided = state.decide(proba, times, fantasies=fantasies)
    request_ids = np.zeros(X.shape[0], dtype=np.int64)
    request_ids[decided.requested] = state.next_request_ids(decided)
    return proba, decided, request_ids, state.budget_state


def test_a_snapshot_decides_as_the_agent_bit_for_bit(tmp_path):
    rng = np.random.default_rng(3)
    X0 = np.vstack([CENTRES[k] + rng.normal(0.0, 1.0, size=(3, 2)) for k in range(4)])
    y0 = np.repeat([1, 2, 3, 4], 3)
    X, y = _stream(rng, 260)
    process = synthetic_decision_process()
    budget = PacedBudget(limit=40.0, period=60.0, explore=0.2)
    store = str(tmp_path / "agents.db")
    agent = RiskBasedAgent(
        estimator=BayesianGMMClassifier(), process=process, budget=budget, store=store
    ).fit(X0, y0)
    agent.observe(X[:120])
    campaign = agent._campaign
    compared, answered, cancelled, fantasised = 0, 0, 0, 0
    for i in range(120, 260, 4):
        block = X[i : i + 4]
        snapshot = campaign.snapshot()
        assert snapshot is not None
        fantasised += snapshot.get("fantasies", {}).get("weights") is not None
        proba, decided, request_ids, budget_state = _decide_from_snapshot(
            snapshot, campaign, process.to_dict(), budget, block, agent.n_steps_
        )
        got = agent.observe(block, output="arrays")
        assert got["belief"].tobytes() == proba.tobytes()
        assert got["evpi"].tobytes() == decided.evpi.tobytes()
        assert np.array_equal(got["action"], decided.action)
        assert np.array_equal(np.flatnonzero(got["inspect"]), decided.requested)
        assert np.array_equal(got["request_id"], request_ids)
        assert campaign.budget_state == budget_state
        compared += 1
        # Results and a cancellation change the model and the pending set.
        open_ids = campaign.requests.open_ids()
        if open_ids and i % 12 == 0:
            step = campaign.requests[open_ids[0]].step
            agent.record_inspection(open_ids[0], int(y[step - 12]))
            answered += 1
        elif len(open_ids) > 1 and i % 20 == 0:
            agent.cancel_request(open_ids[-1])
            cancelled += 1
    assert compared == 35 and answered and cancelled and fantasised > 10
    # A resumed agent (the model refitted and the results replayed) gives the
    # same snapshot, so either can write it.
    live = campaign.snapshot()
    agent.close()
    with RiskBasedAgent.from_store(store) as resumed:
        assert resumed._campaign.snapshot() == live
