"""The model's snapshot kept in the agent's events, under the chain (issue 28.25).

A driver without scikit-learn decides from the latest snapshot the store
holds: each event that changes the model or the fantasised requests
(commission, result, an observe that opens one while fewer than 32 are
fantasised, cancel, expire) keeps the state after it in its payload, so the
snapshot read back always equals the live agent's, and ``verify`` fails when
it is edited.
"""

import json
import sqlite3

import numpy as np
import pytest

from skrbal import synthetic_decision_process
from skrbal._learning._snapshot import SNAPSHOT_VERSION
from skrbal.budget import PacedBudget
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import AgentStore, RiskBasedAgent, StoreError, open_sqlite_store
from skrbal.online._sql._store_writing import AgentStoreWriting

CENTRES = np.array([[0.0, 0.0], [2.0, 1.0], [4.0, 3.0], [7.0, 6.0]])


def _data(seed=3, n=200):
    rng = np.random.default_rng(seed)
    X0 = np.vstack([CENTRES[k] + rng.normal(0.0, 1.0, size=(3, 2)) for k in range(4)])
    states = rng.choice(4, size=n, p=[0.55, 0.25, 0.12, 0.08])
    X = CENTRES[states] + rng.normal(0.0, 1.0, size=(n, 2))
    return X0, np.repeat([1, 2, 3, 4], 3), X, states + 1


def _agent(store, **params):
    return RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=synthetic_decision_process(),
        budget=PacedBudget(limit=40.0, period=60.0, explore=0.2),
        store=store,
        name="bridge",
        **params,
    )


def _stored(store_url):
    with AgentStore(store_url) as store:
        event = store.load_snapshot("bridge")
    # The command line's store (standard library sqlite3) reads the same one.
    with open_sqlite_store(store_url) as quick:
        assert quick.load_snapshot("bridge") == event
    return None if event is None else (event.seq, event.kind, event.payload["snapshot"])


@pytest.mark.filterwarnings("ignore::skrbal.exceptions.RequestExpiredWarning")
def test_each_change_stores_the_state_after_it(tmp_path):
    X0, y0, X, y = _data()
    url = f"sqlite:///{tmp_path / 'agents.db'}"
    agent = _agent(url, request_timeout=25).fit(X0, y0)
    campaign = agent._campaign
    assert _stored(url)[:2] == (1, "commission")
    n_checked = fantasised = 0
    for i in range(0, 200, 5):
        agent.observe(X[i : i + 5])
        open_ids = campaign.requests.open_ids()
        if open_ids and i % 40 == 0:
            step = campaign.requests[open_ids[0]].step
            agent.record_inspection(open_ids[0], int(y[step - 12]))
        elif len(open_ids) > 1 and i % 25 == 0:
            agent.cancel_request(open_ids[-1], reason="no access")
        n_fits = campaign.fantasies.n_fits
        live = json.loads(json.dumps(campaign.snapshot()))
        # The copies were learnt with the call, not again for the snapshot.
        assert campaign.fantasies.n_fits == n_fits
        stored = _stored(url)[2]
        assert stored == live
        assert stored["version"] == SNAPSHOT_VERSION
        n_checked += 1
        fantasised += live.get("fantasies", {}).get("weights") is not None
    assert n_checked == 40 and fantasised > 5, fantasised
    events = agent.store_.events("bridge")
    held = events["payload"].map(lambda p: "snapshot" in p)
    kinds = set(events["kind"][held])
    assert kinds == {"commission", "observe", "result", "cancel", "expire"}, kinds
    # Only the calls that change something keep one: not every block.
    observes = events["kind"] == "observe"
    assert 0 < held[observes].sum() < observes.sum()
    agent.close()


def test_an_edited_snapshot_fails_verify_and_is_not_read(tmp_path):
    X0, y0, X, _ = _data()
    path = tmp_path / "agents.db"
    with _agent(f"sqlite:///{path}").fit(X0, y0) as agent:
        agent.observe(X[:60])
    seq, _, stored = _stored(f"sqlite:///{path}")
    model = json.loads(stored["model"])
    with sqlite3.connect(path) as conn:
        (payload,) = conn.execute(
            "SELECT payload FROM skrbal_events WHERE seq = ?", (seq,)
        ).fetchone()
        edited = json.loads(payload)
        model["means"][0][0] += 1e-9  # a change at rounding level
        edited["snapshot"]["model"] = json.dumps(model)
        conn.execute(
            "UPDATE skrbal_events SET payload = ? WHERE seq = ?",
            (json.dumps(edited), seq),
        )
    with AgentStore(f"sqlite:///{path}") as store:
        with pytest.raises(StoreError, match="chain"):
            store.verify("bridge")
        with pytest.raises(StoreError, match="chain"):
            store.load_snapshot("bridge")


def test_a_store_without_snapshots_has_none_to_read(tmp_path, monkeypatch):
    # A store written before snapshots (its events hold none): nothing is
    # read, so a driver decides with the model itself, and the agent works.
    monkeypatch.setattr(AgentStoreWriting, "keeps_snapshots", False)
    X0, y0, X, y = _data()
    url = f"sqlite:///{tmp_path / 'agents.db'}"
    with _agent(url).fit(X0, y0) as agent:
        agent.observe(X[:60])
        assert agent._campaign.keeps_snapshots is False
    assert _stored(url) is None
    monkeypatch.undo()
    with RiskBasedAgent.from_store(url, name="bridge") as agent:
        agent.observe(X[60:70])
        # A call that changes nothing does not start one either.
        assert _stored(url) is None
        open_ids = agent._campaign.requests.open_ids()
        agent.record_inspection(open_ids[0], int(y[0]))
    _, kind, stored = _stored(url)
    assert kind == "result" and stored["version"] == SNAPSHOT_VERSION
    # An action its owner recorded (a repair) may weigh in every later belief:
    # no snapshot is read, before it or after.
    with RiskBasedAgent.from_store(url, name="bridge") as agent:
        agent.record_action(3, 1)
        assert _stored(url) is None
        open_ids = agent._campaign.requests.open_ids()
        agent.record_inspection(open_ids[0], int(y[1]))
    assert _stored(url) is None
