"""The agent store, on SQLite and on a real PostgreSQL server.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set (``.ci/run``
starts a server and sets it) and fail if it is set but unreachable.
"""

import json
import multiprocessing
import os
from numbers import Integral
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import select, update

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.budget import BudgetPolicy, PacedBudget
from skrbal.datasets import make_degradation_stream
from skrbal.online import (
    AgentLockedError,
    AgentStore,
    ConfigurationError,
    RiskBasedAgent,
    StoreError,
)
from skrbal.online._sql import _schema as schema

PROCESS = synthetic_decision_process()


@pytest.fixture(scope="module")
def stream():
    X, y, _ = make_degradation_stream(n_cycles=1, n_per_cycle=400, random_state=1)
    first = [int(np.flatnonzero(y == c)[0]) for c in (1, 2, 3, 4)]
    rest = np.setdiff1d(np.arange(y.size), first)
    return X[first], y[first], X[rest], y[rest]


def _run(agent, X, y, start, stop, delay=3):
    """Observe X[start:stop] one by one; answer each request ``delay`` steps late.

    Every fifth request is cancelled instead, and the action taken at every
    seventh step is recorded as "repair".
    """
    pending = []
    for t in range(start, stop):
        row = agent.observe(X[t : t + 1]).iloc[0]
        if row["inspect"]:
            pending.append((t + delay, int(row["request_id"]), t))
        if t % 7 == 0:
            agent.record_action(int(row["step"]), 1)
        for due, request_id, step in [p for p in pending if p[0] <= t]:
            pending.remove((due, request_id, step))
            if request_id % 5 == 0:
                agent.cancel_request(request_id, reason="no access")
            else:
                agent.record_inspection(request_id, y[step])


def _compare_agents(a, b):
    ha, hb = a.history_.steps, b.history_.steps
    assert ha.equals(hb)
    assert a.store_.requests(a.name).equals(b.store_.requests(b.name))
    sa, sb = a.status(), b.status()
    sa.pop("name"), sb.pop("name")
    assert sa == sb
    probe = np.random.default_rng(0).normal(0, 8, size=(50, 2))
    np.testing.assert_array_equal(
        a.estimator_.predict_proba(probe), b.estimator_.predict_proba(probe)
    )


@pytest.mark.parametrize("semi_supervised", [None, "em", "smoothing"])
@pytest.mark.parametrize("pending_value", ["ignore", "fantasy"])
def test_restart_continues_with_identical_decisions(
    store_url, stream, semi_supervised, pending_value
):
    X0, y0, X, y = stream
    n = 120
    params = dict(
        estimator=BayesianGMMClassifier(),
        process=PROCESS,
        semi_supervised=semi_supervised,
        pending_value=pending_value,
    )
    with RiskBasedAgent(**params, name="reference").fit(X0, y0) as reference:
        _run(reference, X, y, 0, n)
        with RiskBasedAgent(**params, store=store_url, name="bridge").fit(
            X0, y0
        ) as agent:
            _run(agent, X, y, 0, n // 2)
        # the model is rebuilt from the store alone: no estimator passed
        with RiskBasedAgent.from_store(store_url, "bridge") as resumed:
            assert resumed.semi_supervised == semi_supervised
            assert resumed.pending_value == pending_value
            _run(resumed, X, y, n // 2, n)
            assert resumed.status()["n_results"] >= 2
            _compare_agents(reference, resumed)


def test_a_paced_budget_and_expiring_requests_resume_exactly(store_url, stream):
    # Issue 20: a paced budget's state and expired requests come back from the
    # store, so the resumed agent decides as one that never stopped.
    X0, y0, X, y = stream
    n = 120
    params = dict(
        estimator=BayesianGMMClassifier(),
        process=PROCESS,
        budget=PacedBudget(limit=20.0, period=40.0, origin=0.0),
        max_open_requests=2,
        request_timeout=5,
    )
    with RiskBasedAgent(**params, name="reference").fit(X0, y0) as reference:
        _run(reference, X, y, 0, n, delay=8)  # later than the timeout
        with RiskBasedAgent(**params, store=store_url, name="bridge").fit(
            X0, y0
        ) as agent:
            _run(agent, X, y, 0, n // 2, delay=8)
        with RiskBasedAgent.from_store(store_url, "bridge") as resumed:
            assert repr(resumed.budget) == repr(params["budget"])
            _run(resumed, X, y, n // 2, n, delay=8)
            assert resumed.budget_state_ == reference.budget_state_
            kinds = resumed.store_.events("bridge")["kind"]
            # expired on both sides of the restart, then learnt late
            assert (kinds == "expire").sum() >= 2
            _compare_agents(reference, resumed)


def _run_blocks(agent, X, stamps, sizes, start):
    """Observe X in calls of the given sizes, with timestamps; return the end."""
    for size in sizes:
        agent.observe(X[start : start + size], timestamps=stamps[start : start + size])
        start += size
    return start


def test_schema_is_versioned_and_other_versions_are_refused(store_url, monkeypatch):
    store = AgentStore(store_url)
    assert store.schema_version == schema.SCHEMA_VERSION == 1
    store.close()
    # a store newer than the code is refused, never written
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 0)
    with pytest.raises(StoreError, match="newer than this skrbal"):
        AgentStore(store_url)
    # and so is an older one: no migration leads from it
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 2)
    with pytest.raises(StoreError, match="no migration leads from it"):
        AgentStore(store_url)


def test_agents_of_one_store_are_isolated(store_url, stream):
    X0, y0, X, y = stream
    store = AgentStore(store_url)
    params = dict(estimator=BayesianGMMClassifier(), process=PROCESS, store=store)
    with (
        RiskBasedAgent(**params, name="north").fit(X0, y0) as north,
        RiskBasedAgent(**params, name="south").fit(X0[:3] + 0.5, y0[:3]) as south,
    ):
        _run(north, X, y, 0, 60)
        south.observe(X[:3])
        assert store.agent_names() == ["north", "south"]
        assert north.status()["n_observations"] == 60
        assert south.status()["n_observations"] == 3
        south_history = south.history_.steps
        assert south_history["step"].tolist() == list(range(6))
        np.testing.assert_array_equal(south_history["feature_0"][:3], X0[:3, 0] + 0.5)
        assert south.status()["labelled"] == {1: 1, 2: 1, 3: 1, 4: 0}
        # north's requests are not south's
        last = int(north.store_.requests("north")["request_id"].max())
        assert last > south.status()["n_requests"]
        with pytest.raises(ValueError, match="not a request of agent 'south'"):
            south.record_inspection(last, 1)
    with pytest.raises(StoreError, match="already has an agent named 'north'"):
        RiskBasedAgent(**params, name="north").fit(X0, y0)
    with pytest.raises(StoreError, match="no agent named 'east'"):
        RiskBasedAgent.from_store(store, "east")
    store.close()


def _try_open(url, queue):
    try:
        RiskBasedAgent.from_store(url, "bridge").close()
        queue.put("opened")
    except AgentLockedError as exc:
        queue.put(str(exc))


def test_second_writer_is_locked_out(store_url, stream):
    X0, y0, X, _ = stream
    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store_url, name="bridge"
    ).fit(X0, y0)
    with pytest.raises(AgentLockedError, match=r"'bridge' .* already open for writing"):
        RiskBasedAgent.from_store(store_url, "bridge")
    # another process is locked out too, and told who holds the agent
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_try_open, args=(store_url, queue))
    child.start()
    message = queue.get(timeout=60)
    child.join()
    assert "already open for writing by another process (pid" in message
    assert str(os.getpid()) in message
    # readers are not writers
    assert AgentStore(store_url).status("bridge")["n_commissioning"] == 4
    agent.close()
    with pytest.raises(StoreError, match="is not open"):
        agent.observe(X[:1])
    with RiskBasedAgent.from_store(store_url, "bridge") as again:
        again.observe(X[:1])


def test_lost_update_is_refused(store_url, stream):
    X0, y0, X, _ = stream
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store_url, name="bridge"
    ).fit(X0, y0) as agent:
        with agent.store_.engine.begin() as conn:
            conn.execute(update(schema.agents).values(last_seq=99))
        with pytest.raises(StoreError, match="changed by another writer"):
            agent.observe(X[:1])
        assert agent.store_.history("bridge").shape[0] == 4


def test_numbers_keep_full_precision(store_url):
    X0 = np.array([[1 / 3], [np.pi], [np.e], [-2.0 / 7]])
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store_url, name="bridge"
    ).fit(X0, [1, 2, 3, 4], timestamps=[1.6e9 + 1 / 7] * 4) as agent:
        X = np.array([[0.1 + 0.2], [1e-310], [np.nextafter(1.0, 2.0)]])
        decisions = agent.observe(X, timestamps=[1.7e9 + 1 / 3, 1.7e9 + 0.5, 2e9])
        history = agent.history_.steps
    np.testing.assert_array_equal(history["feature_0"], np.r_[X0.ravel(), X.ravel()])
    np.testing.assert_array_equal(history["evpi"][4:], decisions["evpi"])
    beliefs = history.filter(like="belief_").to_numpy()[4:]
    np.testing.assert_array_equal(beliefs, decisions.filter(like="belief_"))
    np.testing.assert_array_equal(history["timestamp"][4:], decisions["timestamp"])


class _Counting(BudgetPolicy):
    """A stateful budget outside skrbal: at most ``n`` inspections."""

    _parameter_constraints: ClassVar[dict] = {"n": [Integral]}

    def __init__(self, n=1):
        self.n = n

    def _initial_state(self):
        return {"spent": 0, "seen": 0}

    def _candidates(self, evpi, times, cost, state):
        return (evpi > cost) & (state["spent"] < self.n)

    def _advance(self, evpi, times, cost, state, inspected):
        return {
            "spent": state["spent"] + int(inspected),
            "seen": state["seen"] + evpi.shape[0],
        }


class _MyGMM(BayesianGMMClassifier):
    pass


def test_loading_never_imports_foreign_code(store_url, stream):
    X0, y0, X, _ = stream
    with RiskBasedAgent(
        estimator=_MyGMM(),
        process=PROCESS,
        budget=_Counting(n=2),
        store=store_url,
        name="bridge",
    ).fit(X0, y0) as agent:
        agent.observe(X[150:230])
        state = agent.budget_state_
        assert state == {"spent": 2, "seen": 84}  # 4 commissioning steps too
    # stored as JSON, never pickled
    store = AgentStore(store_url)
    with store.engine.connect() as conn:
        row = conn.execute(select(schema.agents)).one()
    assert json.loads(row.estimator)["__estimator__"].endswith("_MyGMM")
    assert json.loads(row.process) == PROCESS.to_dict()
    configuration = store.configuration("bridge")
    assert configuration["process"] == PROCESS.to_dict()
    assert configuration["settings"]["semi_supervised"] is None
    assert configuration["budget"]["params"] == {"n": 2}
    assert json.loads(row.budget_state) == state
    for kwargs, match in [
        ({}, "not one of the classes a store may rebuild"),
        ({"estimator": _MyGMM()}, "not one of the classes a store may rebuild"),
        (
            {"estimator": _MyGMM(mean_precision_prior=2.0), "budget": _Counting(n=2)},
            "mean_precision_prior",
        ),
        ({"estimator": _MyGMM(), "budget": _Counting(n=3)}, "params.n: stored 2"),
    ]:
        with pytest.raises(ConfigurationError, match=match):
            RiskBasedAgent.from_store(store, "bridge", **kwargs)
    with RiskBasedAgent.from_store(
        store, "bridge", estimator=_MyGMM(), budget=_Counting(n=2)
    ) as agent:
        assert agent.budget_state_ == state
        assert not agent.observe(X[150:170])["inspect"].any()  # budget spent
    store.close()


def test_store_rejects_other_databases(tmp_path):
    with pytest.raises(ValueError, match="supports SQLite and PostgreSQL"):
        AgentStore("mysql://localhost/x")
    with pytest.raises(ValueError, match="does not exist"):
        AgentStore(tmp_path / "missing" / "a.db")


def test_history_columns_have_plain_types(store_url, stream):
    X0, y0, X, _ = stream
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store_url, name="bridge"
    ).fit(X0, y0) as agent:
        empty = agent.store_.requests("bridge")
        assert empty.shape == (0, 9)  # origin: agent or routine
        agent.observe(X[:3])
        history = agent.history_.steps
    assert history["step"].dtype == np.int64
    assert history["evpi"].dtype == np.float64 and history["evpi"].notna().all()
    assert history["timestamp"].dtype == np.float64
    assert history["request_id"].dtype == "Int64"
    assert history["label"].tolist()[:4] == y0.tolist()


def test_store_files_get_the_users_umask(tmp_path, stream):
    X0, y0, _, _ = stream
    old = os.umask(0o027)
    try:
        with RiskBasedAgent(
            estimator=GaussianNB(), process=PROCESS, store=tmp_path / "a.db"
        ).fit(X0, y0):
            pass
    finally:
        os.umask(old)
    for name in ("a.db", "a.db-lock"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640


def test_unreachable_postgres_fails_rather_than_skips(monkeypatch):
    from conftest import _postgres_schema_url

    monkeypatch.setenv(
        "SKRBAL_TEST_POSTGRES_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none"
    )
    with pytest.raises(pytest.fail.Exception, match="server is unreachable"):
        next(_postgres_schema_url())


def test_required_postgres_fails_rather_than_skips(monkeypatch):
    from conftest import _postgres_schema_url

    monkeypatch.delenv("SKRBAL_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setenv("SKRBAL_REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="did not start"):
        next(_postgres_schema_url())
    monkeypatch.setenv("SKRBAL_REQUIRE_POSTGRES", "0")
    with pytest.raises(pytest.skip.Exception):
        next(_postgres_schema_url())


def test_sqlite_durability_is_a_choice(tmp_path):
    from sqlalchemy import text

    for synchronous, code in [("full", 2), ("normal", 1)]:
        store = AgentStore(tmp_path / f"{synchronous}.db", synchronous=synchronous)
        with store.engine.connect() as conn:
            assert conn.execute(text("PRAGMA synchronous")).scalar() == code
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        store.close()
    with pytest.raises(ValueError, match="synchronous must be one of"):
        AgentStore(tmp_path / "a.db", synchronous="off")


def test_a_file_that_is_not_a_database_is_named(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 100)
    with pytest.raises(StoreError, match=r"cannot open the store .*notes\.db"):
        AgentStore(path)


def test_json_column_decodes_known_values_only():
    from skrbal.online._sql._frames import _json_column

    column = pd.Series(['"a"', None, "[1, 2]", np.nan, "[3, 4]", "2.5"], dtype=object)
    assert _json_column(column) == ["a", None, [1, 2], None, [3, 4], 2.5]
    assert _json_column(pd.Series([], dtype=object)) == []
