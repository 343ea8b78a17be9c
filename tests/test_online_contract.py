"""The storage contract (AgentStorage), proved alike on every implementation.

The same agent calls run on the in-memory store, SQLite and PostgreSQL (when
``SKRBAL_TEST_POSTGRES_URL`` is set); every reading of the contract must
answer the same, and the rules of a write (one step of ``seq``, one writer,
unique names and client keys) hold on each.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from conftest import _postgres_schema_url
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.exceptions import AgentLockedError, RequestExpiredWarning
from skrbal.online import (
    AgentStorage,
    AgentStore,
    ClientKey,
    InMemoryAgentStore,
    RiskBasedAgent,
    StoreError,
    sqlite_summary,
)

PROCESS = synthetic_decision_process().set_params(inspection_cost=1.0)
MEANS = np.array([-5.0, -0.7, 5.8, 8.0])


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def storage(request, tmp_path):
    """An empty storage of each implementation."""
    if request.param == "memory":
        yield InMemoryAgentStore()
        return
    schema = _postgres_schema_url() if request.param == "postgresql" else None
    store = AgentStore(tmp_path / "agents.db" if schema is None else next(schema))
    yield store
    store.close()
    if schema is not None:
        next(schema, None)  # drops the schema


def _stream(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.tile([1, 2, 3, 4], n // 4 + 1)[:n]
    return rng.normal(MEANS[y - 1], 2.0)[:, None], y


def _run(store, name="agent"):
    """Every kind of write: requests answered, cancelled, expired, a routine
    label, an action taken, keyed calls; then a resume and more."""
    X, y = _stream(70)
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=PROCESS,
        budget=CostThreshold() & SpendCap(limit=3.0, period=6.0),
        request_timeout=10.0,
        max_open_requests=4,
        store=store,
        name=name,
    )
    times = np.arange(70.0) * 1.5
    agent.fit(X[:8], y[:8], timestamps=times[:8])
    # Rows left out for a missing value (28.21), recorded with their block.
    left_out = [(9, ["x0"], "12.75"), (10, ["x0"])]
    first = agent.observe(X[8:30], times[8:30], key="b-1", skipped=left_out)
    ids = first["request_id"].dropna().astype(int).tolist()
    assert len(ids) >= 3, "the stream must make the agent inspect"
    steps = first.set_index("request_id")["step"]
    agent.record_inspection(ids[0], int(y[steps[ids[0]]]), key="r-1")
    agent.cancel_request(ids[1], reason="no access", key="c-1")
    quiet = first.loc[~first["inspect"], "step"].tolist()
    agent.record_label(quiet[0], int(y[quiet[0]]), timestamp=times[30])
    agent.record_action(quiet[1], 1, key="a-1")
    with pytest.warns(RequestExpiredWarning):
        agent.observe(X[30:50], times[30:50])
    agent.close()
    resumed = RiskBasedAgent.from_store(store, name)
    resumed.observe(X[50:], times[50:], skipped=[(71, ["x0"])])
    # Rows skipped after the input's last decided row: no block, recorded
    # alone (28.21); a keyed retry records nothing again.
    trailing = [(73, ["x0"], "105.0"), (74, ["x0"])]
    for _ in range(2):
        none = resumed.observe(np.empty((0, 1)), key="s-1", skipped=trailing)
        assert none.empty
    return resumed


def _same_frames(left, right, drop=()):
    pd.testing.assert_frame_equal(
        left.drop(columns=list(drop)), right.drop(columns=list(drop))
    )


def test_memory_and_sql_answer_alike(store_url):
    sql = AgentStore(store_url)
    memory = InMemoryAgentStore()
    with _run(memory) as a, _run(sql) as b:
        assert a.status() == b.status()
        assert a.status()["n_skipped"] == 5
        # 28.25: the status queries as text, through SQLAlchemy and (a SQLite
        # file) sqlite3, answer as the store does.
        frame = sql.requests("agent")
        with sql.summary() as summary, sqlite_summary(sql.path or "") as fast:
            for reader in (summary, fast or summary):
                assert reader.status("agent") == b.status()
                assert reader.configuration("agent") == sql.configuration("agent")
                for status in ("open", "done", "cancelled", "expired"):
                    rows = frame.loc[frame["status"] == status]
                    assert reader.requests_in("agent", status) == list(
                        zip(rows["request_id"], rows["step"], [None] * len(rows))
                    )
            assert (fast is None) == (sql.path is None)
        _same_frames(a.history_.steps, b.history_.steps)
        _same_frames(memory.requests("agent"), sql.requests("agent"))
        logged = sql.events("agent")
        # The SQL store's payloads also carry what its event chain covers.
        chained = {"rows_sha256", "block_sha256", "agent", "chain"}
        logged["payload"] = [
            {k: v for k, v in p.items() if k not in chained} for p in logged["payload"]
        ]
        _same_frames(memory.events("agent"), logged, ["created_at"])
        shown = memory.configuration("agent"), sql.configuration("agent")
        assert {k: v for k, v in shown[0].items() if k != "created_at"} == {
            k: v for k, v in shown[1].items() if k != "created_at"
        }
        for every_step in (False, True):
            r, s = (
                store.load_replay("agent", every_step=every_step)
                for store in (memory, sql)
            )
            assert r.n_commissioning == s.n_commissioning
            assert r.labels == s.labels and r.events == s.events
            assert (r.last_time, r.last_evpi) == (s.last_time, s.last_evpi)
            for field in ("steps", "features", "actions"):
                np.testing.assert_array_equal(getattr(r, field), getattr(s, field))
            assert len(r.requests) == len(s.requests)
            for p, q in zip(r.requests, s.requests):
                assert (p.request_id, p.step, p.evpi, p.method, p.status, p.time) == (
                    q.request_id,
                    q.step,
                    q.evpi,
                    q.method,
                    q.status,
                    q.time,
                )
                np.testing.assert_array_equal(p.belief, q.belief)
            keep = {"agent_id", "created_at"}
            assert {
                k: v for k, v in dataclasses.asdict(r.agent).items() if k not in keep
            } == {k: v for k, v in dataclasses.asdict(s.agent).items() if k not in keep}
        for key in ("b-1", "r-1", "c-1", "a-1", "s-1", "none"):
            e, f = memory.find_key(a.agent_id_, key), sql.find_key(b.agent_id_, key)
            if f is not None:
                payload = {k: v for k, v in f.payload.items() if k not in chained}
                f = dataclasses.replace(f, payload=payload)
            assert e == f
        block = [
            store.load_block(agent.agent_id_, 8)
            for store, agent in ((memory, a), (sql, b))
        ]
        for field in (
            "times",
            "timestamps",
            "features",
            "belief",
            "evpi",
            "action",
            "request_ids",
        ):
            np.testing.assert_array_equal(
                getattr(block[0], field), getattr(block[1], field)
            )
        assert block[0].requests == block[1].requests
        assert block[0].budget_state == block[1].budget_state
        steps = [9, 20, 41, 60]
        columns = (
            "timestamp",
            "time",
            "features",
            "belief",
            "evpi",
            "action",
            "request_id",
        )
        got = [
            store.load_steps(agent.agent_id_, steps, columns)
            for store, agent in ((memory, a), (sql, b))
        ]
        for column in columns:
            np.testing.assert_array_equal(got[0][column], got[1][column])
    sql.close()


def test_each_storage_keeps_the_rules_of_a_write(storage):
    assert isinstance(storage, AgentStorage)
    X, y = _stream(12)
    agent = RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, store=storage)
    agent.fit(X[:8], y[:8])
    with pytest.raises(AgentLockedError, match="already open for writing"):
        storage.lock_agent(agent.agent_id_, "agent")
    decided = agent.observe(X[8:10], key="k")
    seq = storage.load_agent("agent").last_seq
    assert seq == 2
    block = storage.load_block(agent.agent_id_, 8)
    stale = dataclasses.replace(block, first_step=10, key=None)
    with pytest.raises(StoreError, match="another writer"):  # a lost update
        storage.append_observe(agent.agent_id_, seq - 1, stale)
    keyed = dataclasses.replace(block, first_step=10, key=ClientKey("k", {}))
    with pytest.raises(StoreError, match="'k'"):  # one call per client key
        storage.append_observe(agent.agent_id_, seq, keyed)
    assert storage.load_agent("agent").last_seq == seq  # nothing written
    again = agent.observe(X[8:10], key="k")
    pd.testing.assert_frame_equal(again, decided)
    with pytest.raises(StoreError, match="already has an agent named 'agent'"):
        RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, store=storage).fit(
            X[:8], y[:8]
        )
    with pytest.raises(StoreError, match="no agent named 'other'"):
        storage.load_agent("other")
    agent.close()
    lock = storage.lock_agent(agent.agent_id_, "agent")  # free once closed
    assert lock.held
    lock.release()
    assert not lock.held
    assert storage.agent_names() == ["agent"]
