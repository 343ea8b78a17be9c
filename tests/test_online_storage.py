"""The storage contract between the agent and its store (AgentStorage)."""

import sys

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.online import (
    AgentRecord,
    AgentStorage,
    AgentStore,
    RiskBasedAgent,
    StoreError,
)
from skrbal.online._spend import inspection_spend

PROCESS = synthetic_decision_process().set_params(inspection_cost=0.5)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)
CONTRACT = {
    name
    for name in dir(AgentStorage)
    if not name.startswith("_") and callable(getattr(AgentStorage, name))
}


class _Watched(AgentStore):
    """A store that records which of its attributes the agent's module touches."""

    def __getattribute__(self, name):
        caller = sys._getframe(1).f_globals.get("__name__")
        if caller.startswith("skrbal.online._agent") and not name.startswith("__"):
            vars_ = object.__getattribute__(self, "__dict__")
            vars_.setdefault("touched", set()).add(name)
        return object.__getattribute__(self, name)


def test_the_agent_uses_the_store_only_through_the_contract(tmp_path):
    store = _Watched(tmp_path / "a.db")
    store.__dict__["touched"] = set()
    X = np.linspace(-8.0, 22.0, 400)[:, None]
    with RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, store=store).fit(
        X0, Y0
    ) as agent:
        decisions = agent.observe(X)
        ids = decisions["request_id"].dropna().astype(int).tolist()
        assert len(ids) >= 2
        agent.record_inspection(ids[0], 2)
        agent.cancel_request(ids[1])
        agent.record_action(9, 1)
        agent.status(), agent.history_.steps
    with RiskBasedAgent.from_store(store) as resumed:
        resumed.observe(X[:3])
    # no engine, no private method, no rows built by column name
    attributes = set(AgentStorage.__annotations__)  # display_url, keeps_snapshots
    assert store.touched - CONTRACT <= attributes, store.touched - CONTRACT
    assert isinstance(store, AgentStorage)


def test_the_memory_store_defines_every_call_of_the_contract_itself():
    # It inherits the contract's docstrings (the API reference shows them);
    # a call it left out would inherit the protocol's empty body and answer
    # None, not fail.
    from skrbal.online import InMemoryAgentStore

    assert CONTRACT <= set(vars(InMemoryAgentStore)), CONTRACT - set(
        vars(InMemoryAgentStore)
    )
    assert all(getattr(AgentStorage, name).__doc__ for name in CONTRACT)


def test_records_are_frozen_and_read_back(tmp_path):
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=tmp_path / "a.db"
    ).commission(X0, Y0, timestamps=np.arange(8.0)) as agent:
        agent.observe(np.array([[12.5]]), timestamps=[9.0])
        record = agent.store_.load_agent("agent")
    assert isinstance(record, AgentRecord)
    assert (record.n_steps, record.clock, record.last_seq) == (9, "timestamp", 2)
    with pytest.raises(AttributeError):
        record.n_steps = 3


def test_a_second_commission_names_from_store(tmp_path):
    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=tmp_path / "a.db"
    ).fit(X0, Y0)
    with pytest.raises(StoreError, match=r"commissioned once.*from_store"):
        agent.fit(X0, Y0)
    agent.close()
    # closed, the same object (or another) finds the stored agent
    with pytest.raises(StoreError, match=r"already has an agent named .*from_store"):
        agent.fit(X0, Y0)
    with RiskBasedAgent.from_store(tmp_path / "a.db") as resumed:
        assert resumed.n_steps_ == 8


def test_spend_is_priced_outside_the_store():
    counts = {("visual", "done"): 2, ("visual", "open"): 1, ("ndt", "done"): 1}
    methods = [{"name": "visual", "cost": 0.1}, {"name": "ndt", "cost": 2.0}]
    spend = inspection_spend(counts, 9.9, methods)
    assert spend["spend"] == pytest.approx(2.2)
    assert spend["committed_spend"] == pytest.approx(2.3)
    assert spend["n_inspections_by_method"] == {"visual": 2, "ndt": 1}
    assert inspection_spend({(None, "cancelled"): 4}, 7.0)["spend"] == 0.0
