"""Replaying a fleet into a store: serially and on Dask, the same store."""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import z24_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.datasets import make_z24_like
from skrbal.fleet import FleetBudget, FleetLedger, Structure, replay_fleet
from skrbal.online import AgentStore


def _fleet(prefix, n=3, n_samples=300):
    """Structures of z24-like streams, commissioned on three labels per state."""
    structures = []
    for i in range(n):
        X, y, _ = make_z24_like(n_samples=n_samples, damage_onset=220, random_state=i)
        labelled = np.concatenate([np.flatnonzero(y == c)[:3] for c in (1, 2, 3, 4)])
        structures.append(
            Structure(f"{prefix}-{i}", X[labelled], y[labelled], X[100:], y[100:])
        )
    return structures


def _contents(store, name):
    """What an agent's store holds, without wall-clock times and its name."""
    events = store.events(name).drop(columns=["created_at"])
    for payload in events["payload"]:
        if "agent" in payload:  # the commission event's record of the agent
            payload["agent"] = dict(payload["agent"], name=None, created_at=None)
    return (
        store.history(name),
        store.requests(name).drop(columns=["result_timestamp"]),
        events,
    )


def _assert_same_agents(store, left, right):
    for a, b in zip(left, right):
        for x, y in zip(_contents(store, a.name), _contents(store, b.name)):
            pd.testing.assert_frame_equal(x, y)


def test_dask_replay_equals_serial_replay(store_url):
    distributed = pytest.importorskip("distributed")
    budget = CostThreshold() & SpendCap(limit=3.0 * 50, period=100)
    config = dict(estimator=GaussianNB(), process=z24_decision_process(), budget=budget)
    serial = replay_fleet(store_url, _fleet("serial"), **config)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        workers = client.scheduler_info()["workers"]
        dask = replay_fleet(
            store_url, _fleet("dask"), client=cluster.scheduler_address, **config
        )
        client.close()
    assert len(workers) == 2
    assert serial["n_inspections"].sum() > 0  # the replay asked for inspections
    assert serial["n_inspections"].tolist() == dask["n_inspections"].tolist()
    with AgentStore(store_url) as store:
        _assert_same_agents(store, _fleet("serial"), _fleet("dask"))
        for s in _fleet("serial") + _fleet("dask"):
            store.verify(s.name)


def test_a_replay_with_a_fleet_budget_keeps_to_it(tmp_path):
    path = str(tmp_path / "fleet.db")
    process = z24_decision_process()
    budget = FleetBudget(limit=4 * process.inspection_cost, period=100.0)
    summary = replay_fleet(
        path, _fleet("f"), estimator=GaussianNB(), process=process, budget=budget
    )
    with AgentStore(path) as store:
        ledger = FleetLedger(store)
        head, status = ledger.verify(), ledger.status()
    assert head["n_draws"] == 3 * 9  # 200 observations in blocks of 24
    assert max(status["spent"].values()) <= budget.limit
    spent = sum(status["spent"].values())
    assert summary["committed_spend"].sum() == pytest.approx(spent)
    assert spent > 0


def test_block_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="block must be"):
        replay_fleet(
            tmp_path / "f.db",
            [],
            estimator=GaussianNB(),
            process=z24_decision_process(),
            block=0,
        )


def test_a_fleet_budget_on_dask_workers_keeps_to_it(store_url):
    """Workers draw at once on the fleet budget: in no fixed order, never over."""
    distributed = pytest.importorskip("distributed")
    process = z24_decision_process()
    budget = FleetBudget(limit=4 * process.inspection_cost, period=100.0)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        summary = replay_fleet(
            store_url,
            _fleet("d"),
            estimator=GaussianNB(),
            process=process,
            budget=budget,
            client=client,
        )
    with AgentStore(store_url) as store:
        ledger = FleetLedger(store)
        head, status = ledger.verify(), ledger.status()
    assert head["n_draws"] == 3 * 9
    assert max(status["spent"].values()) <= budget.limit
    assert summary["committed_spend"].sum() == pytest.approx(
        sum(status["spent"].values())
    )


def _ledger_contents(store):
    """The fleet's draws without their wall-clock times (and so hashes)."""
    return [
        (e["seq"], e["agent"], e["first_step"], e["payload"])
        for e in FleetLedger(store).events()
    ]


def test_a_fleet_budget_replay_on_dask_equals_the_serial_one(tmp_path):
    """Each draw waits for its turn: the serial order, whatever the workers."""
    distributed = pytest.importorskip("distributed")
    process = z24_decision_process()
    budget = FleetBudget(limit=4 * process.inspection_cost, period=100.0)
    config = dict(estimator=GaussianNB(), process=process, budget=budget)
    fleet = _fleet("f", n=3)
    serial_path, dask_path = str(tmp_path / "serial.db"), str(tmp_path / "dask.db")
    serial = replay_fleet(serial_path, fleet, **config)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = replay_fleet(dask_path, fleet, client=client, **config)
    assert serial["n_inspections"].sum() > 0
    assert serial["n_inspections"].tolist() == dask["n_inspections"].tolist()
    with AgentStore(serial_path) as a, AgentStore(dask_path) as b:
        assert _ledger_contents(a) == _ledger_contents(b)
        FleetLedger(b).verify()
        for s in fleet:
            for x, y in zip(_contents(a, s.name), _contents(b, s.name)):
                pd.testing.assert_frame_equal(x, y)


def test_a_draw_given_a_turn_already_taken_is_refused(tmp_path):
    from skrbal.exceptions import FleetDrawError

    path = str(tmp_path / "fleet.db")
    with AgentStore(path) as store:
        ledger = FleetLedger(store)
        ledger.create(FleetBudget(limit=3.0, period=24.0))
        with pytest.raises(FleetDrawError, match="already holds draw 0"):
            with ledger.draw(turn=0):
                pass
        with pytest.raises(FleetDrawError, match="did not come"):
            with ledger.draw(turn=3, timeout=0.05):
                pass
