"""The fleet ledger's modes (chain key, anchors), its bounded draws, and
ledgers written by the previous version (issue 27)."""

import json

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import select, update

from skrbal import synthetic_decision_process
from skrbal.exceptions import FleetDrawError, StoreError
from skrbal.fleet import Fleet, FleetBudget, FleetLedger
from skrbal.fleet import _schema as fleet_schema
from skrbal.fleet._ledger import _genesis, _hash
from skrbal.online import AgentStore

MEANS = np.array([-5.0, -0.7, 5.8, 9.0])
COMMISSION_Y = np.tile([1, 2, 3, 4], 3)
COMMISSION_X = np.random.default_rng(99).normal(MEANS[COMMISSION_Y - 1], 2.0)[:, None]
KEY = b"k" * 32


def _fleet(store, names=("bridge-1",), **budget):
    fleet = Fleet(store, budget=FleetBudget(**{"limit": 2.0, "period": 10.0, **budget}))
    process = synthetic_decision_process().set_params(inspection_cost=1.0)
    for name in names:
        fleet.commission(
            name, COMMISSION_X, COMMISSION_Y, estimator=GaussianNB(), process=process
        )
    return fleet


def _high(n, seed=0):
    return 7.0 + np.random.default_rng(seed).normal(0, 0.3, (n, 1))


def test_a_keyed_ledger_needs_its_key_and_a_key_needs_a_keyed_ledger(tmp_path):
    path = str(tmp_path / "fleet.db")
    with AgentStore(path, chain_key=KEY) as store, _fleet(store) as fleet:
        fleet.observe("bridge-1", _high(10))
        assert fleet.ledger_.verify()["n_draws"] == 1
    with AgentStore(path) as store:
        with pytest.raises(StoreError, match=r"signed.*without"):
            FleetLedger(store).verify()
        with pytest.raises(StoreError, match=r"signed.*without"):
            Fleet(store)
    plain = str(tmp_path / "plain.db")
    with AgentStore(plain) as store, _fleet(store) as fleet:
        fleet.observe("bridge-1", _high(10))
    with AgentStore(plain, chain_key=KEY) as store:
        with pytest.raises(StoreError, match="not signed"):
            FleetLedger(store).verify()
    # the mark removed, every hash recomputed under the key it does not have
    with AgentStore(path) as store:
        with store.engine.begin() as conn:
            row = conn.execute(select(fleet_schema.budgets)).first()
            config = json.loads(row.config)
            del config["chain"]
            conn.execute(
                update(fleet_schema.budgets).values(
                    config=json.dumps(config, sort_keys=True)
                )
            )
    with AgentStore(path, chain_key=KEY) as store:
        with pytest.raises(StoreError, match="not signed"):
            FleetLedger(store).verify()


def test_a_draw_behind_the_periods_kept_is_refused_and_commits_nothing(tmp_path):
    with _fleet(str(tmp_path / "f.db"), ("a", "b"), n_periods=3) as fleet:
        # steps 12..71 (after 12 commissioning steps): periods 1..7
        fleet.observe("a", _high(60))  # the clock in period 7: 5..7 kept
        assert {"5", "6"} <= set(fleet.ledger_.state()["spent"]) <= {"5", "6", "7"}
        assert len(fleet.ledger_.status()["spent"]) >= 6  # summed over the draws
        with pytest.raises(FleetDrawError, match=r"period 1.*n_periods=3"):
            fleet.observe("b", _high(5))
        assert fleet.store_.status("b")["n_observations"] == 0
        fleet.observe("b", np.full((38, 1), -5.0))  # nothing worth inspecting
        fleet.observe("b", _high(3))  # period 5: still kept
        assert fleet.ledger_.verify()["n_draws"] == 3


def _as_previous_version(store):
    """Rewrite the ledger as the previous version wrote it: no n_periods in
    the config, every period's spend in each draw's state and in the row."""
    budgets, events = fleet_schema.budgets, fleet_schema.events
    with store.engine.begin() as conn:
        row = conn.execute(select(budgets)).first()
        config = json.loads(row.config)
        del config["n_periods"]
        text = json.dumps(config, sort_keys=True)
        previous, spent = _genesis("fleet", text), {}
        for e in conn.execute(select(events).order_by(events.c.seq)).all():
            payload = json.loads(e.payload)
            for k, v in payload["taken"].items():
                spent[k] = spent.get(k, 0.0) + v
            payload["state"]["spent"] = dict(spent)
            body = json.dumps(payload, sort_keys=True)
            previous = _hash(
                previous, e.seq, e.kind, e.agent, e.first_step, body, e.created_at
            )
            conn.execute(
                update(events)
                .where(events.c.seq == e.seq)
                .values(payload=body, hash=previous)
            )
        state = json.loads(row.state)
        state["spent"] = dict(spent)
        conn.execute(update(budgets).values(config=text, state=json.dumps(state)))
    return spent


def test_a_ledger_of_the_previous_version_verifies_and_draws_on(tmp_path):
    """Migrated as it draws: the next draw keeps only the open periods."""
    path = str(tmp_path / "old.db")
    with _fleet(path, n_periods=64) as fleet:
        for seed in range(8):
            fleet.observe("bridge-1", _high(10, seed))
        spent = _as_previous_version(fleet.store_)
    assert len(spent) >= 8  # one grant in each of 8 periods at least
    with Fleet(path) as fleet:
        assert fleet.ledger_.verify()["n_draws"] == 8
        assert fleet.ledger_.status()["spent"] == spent
        # the same budget given again is the stored one (n_periods by default)
        assert Fleet(fleet.store_, budget=FleetBudget(limit=2.0, period=10.0))
        fleet.observe("bridge-1", _high(10, 9))
        assert fleet.ledger_.verify()["n_draws"] == 9
        after = fleet.ledger_.status()["spent"]
        assert set(spent) < set(after)  # the older periods kept, and a new one


def test_an_anchor_file_of_agents_and_fleets_keeps_each_apart(tmp_path):
    heads = tmp_path / "heads.jsonl"
    with AgentStore(str(tmp_path / "f.db"), anchor_file=heads) as store:
        with _fleet(store, ("fleet",)) as fleet:  # an agent named as the budget
            fleet.observe("fleet", _high(10))
            fleet.observe("fleet", _high(10, 1))
        assert store.anchor.expected("fleet", kind="fleet")[0] == 2
        # the agent's own head is read apart, and is its head after the draw
        # committed (it was one call behind: recorded inside the draw)
        assert store.anchor.expected("fleet")[0] == store.verify("fleet")["seq"]
        lines = heads.read_text().splitlines()
        assert sum('"fleet":' in line for line in lines) == 2
