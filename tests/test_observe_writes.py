"""The write of one ``observe`` and what it returns (issue 27, point 13).

Counted, never timed: the statements a call sends through SQLAlchemy's
execution and through the driver, and the frames it builds. The store's
rows stay what Core wrote (the chain verifies, a retry rebuilds the call).
"""

import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import create_engine, event, text

from skrbal import synthetic_decision_process
from skrbal.online import RiskBasedAgent, StoreError
from skrbal.online import _agent_observe as observe_module
from skrbal.online._sql import _database as database_module

X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)
# Rows whose values open requests (cheap inspections) and rows that do not.
ROWS = np.array([[12.5], [-5.0], [12.0], [2.9], [-5.2], [3.1]])


def _agent(url):
    return RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process().set_params(inspection_cost=1e-6),
        store=url,
    ).fit(X0, Y0)


def _core_statements(engine, call):
    """Statements sent through SQLAlchemy's execution while ``call`` runs."""
    sent = []

    def before(conn, cursor, statement, *args):
        sent.append(statement)

    event.listen(engine, "before_cursor_execute", before)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", before)
    return sent


def test_an_observe_writes_through_the_driver_not_core(store_url):
    # The old writer sent the agent's move, the block, the requests, the
    # previous hash and the event through Core (and, on PostgreSQL, the check
    # of its lock): five or six statements per call.
    agent = _agent(store_url)
    try:
        engine = agent.store_.engine
        made = []
        sent = _core_statements(engine, lambda: made.append(agent.observe(ROWS)))
        assert made[0]["inspect"].any()
        assert sent == []
        assert agent.store_.verify(agent.name)["seq"] == 2
    finally:
        agent.close()


def test_a_result_writes_through_the_driver_not_core(store_url):
    # The old writer sent the move, the request's update, the previous hash
    # and the event through Core (and the lock's check on PostgreSQL).
    agent = _agent(store_url)
    try:
        made = agent.observe(ROWS)
        request_id = int(made["request_id"].dropna().iloc[0])
        engine = agent.store_.engine
        sent = _core_statements(engine, lambda: agent.record_inspection(request_id, 4))
        assert sent == []
        done = agent.store_.requests(agent.name).set_index("request_id")
        assert done.loc[request_id, "status"] == "done"
        assert agent.store_.verify(agent.name)["seq"] == 3
    finally:
        agent.close()


def test_sqlite_runs_four_statements_per_observe_however_many_requests(tmp_path):
    # BEGIN and COMMIT aside: the move (reading the previous hash), the
    # block, the requests (one prepared statement, a row each) and the event.
    agent = _agent(str(tmp_path / "a.db"))
    try:
        ran = []
        with agent.store_.engine.connect() as conn:
            dbapi = conn.connection.dbapi_connection
        dbapi.set_trace_callback(ran.append)
        try:
            made = agent.observe(ROWS)
        finally:
            dbapi.set_trace_callback(None)
        kinds = [s.split()[0].upper() for s in ran]
        n_requests = int(made["inspect"].sum())
        assert n_requests >= 1, ran
        assert kinds.count("UPDATE") == 1
        assert kinds.count("SELECT") == 0  # the previous hash came back with it
        assert kinds.count("INSERT") == 2 + n_requests
    finally:
        agent.close()


def test_arrays_are_the_frame_without_building_one(store_url, monkeypatch):
    agent = _agent(store_url)
    try:
        frame = agent.observe(ROWS, key="batch-1")

        def refuse(*args, **kwargs):
            raise AssertionError("a frame was built")

        monkeypatch.setattr(observe_module, "decisions_frame", refuse)
        # A retry with the key rebuilds the stored call, as arrays now.
        arrays = agent.observe(ROWS, key="batch-1", output="arrays")
        beliefs = frame[[f"belief_{c}" for c in agent.classes_]].to_numpy()
        np.testing.assert_array_equal(arrays["belief"], beliefs)
        for column in ("step", "timestamp", "evpi", "inspect", "action"):
            np.testing.assert_array_equal(arrays[column], frame[column].to_numpy())
        ids = frame["request_id"].fillna(0).to_numpy(dtype=np.int64)
        np.testing.assert_array_equal(arrays["request_id"], ids)
        assert arrays["inspect"].any()
        # A new call as arrays is stored as a framed call is: its retry as a
        # frame returns the same decisions.
        fresh = agent.observe(ROWS[:3] + 0.01, key="batch-2", output="arrays")
        monkeypatch.undo()
        again = agent.observe(ROWS[:3] + 0.01, key="batch-2")
        assert isinstance(again, pd.DataFrame)
        np.testing.assert_array_equal(fresh["step"], again["step"].to_numpy())
        np.testing.assert_array_equal(fresh["action"], again["action"].to_numpy())
        empty = agent.observe(np.empty((0, 1)), output="arrays")
        assert empty["belief"].shape == (0, agent.classes_.size)
        assert agent.store_.verify(agent.name)["seq"] >= 3
    finally:
        agent.close()


def test_an_unknown_output_is_refused_by_name(tmp_path):
    agent = _agent(str(tmp_path / "a.db"))
    try:
        with pytest.raises(ValueError, match="output: 'frame' or 'arrays'"):
            agent.observe(ROWS, output="dict")
        assert agent.n_steps_ == len(X0)
    finally:
        agent.close()


def _postgres(store_url):
    if "://" not in store_url:
        pytest.skip("PostgreSQL's pool and locks")


def test_calls_in_quick_succession_do_not_ping_the_server(store_url, monkeypatch):
    # pool_pre_ping pinged at every checkout: a round trip per write (and
    # per read), as costly as one of its statements.
    _postgres(store_url)
    agent = _agent(store_url)
    try:
        dialect = agent.store_.engine.dialect
        pings = []
        original = dialect.do_ping
        monkeypatch.setattr(
            dialect, "do_ping", lambda c: pings.append(1) or original(c)
        )
        for i in range(5):
            agent.observe(ROWS + i)
        assert pings == []
        # Idle for longer than the threshold: pinged before use.
        monkeypatch.setattr(database_module, "PING_AFTER_IDLE", 0.0)
        agent.observe(ROWS + 9)
        assert len(pings) >= 1
    finally:
        agent.close()


def test_a_pooled_connection_the_server_ended_is_replaced(store_url, monkeypatch):
    # The server ends the pool's connection (an idle timeout, a restart)
    # while the agent waits: its next call connects anew, and the lock
    # (its own session) is still held.
    _postgres(store_url)
    agent = _agent(store_url)
    try:
        agent.observe(ROWS)
        engine = agent.store_.engine
        with engine.connect() as conn:
            pid = conn.execute(text("SELECT pg_backend_pid()")).scalar()
        killer = create_engine(engine.url)  # outside the store's pool
        with killer.connect() as other:
            other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            other.commit()
        killer.dispose()
        monkeypatch.setattr(database_module, "PING_AFTER_IDLE", 0.0)
        for i in range(3):
            agent.observe(ROWS + i)
        assert agent.store_.verify(agent.name)["seq"] == 5
    finally:
        agent.close()


def test_a_lost_lock_is_found_by_the_move_itself(store_url):
    # The move of the agent reads whether its advisory lock is held (one
    # statement, not a separate query); a lost lock still stops the write.
    _postgres(store_url)
    agent = _agent(store_url)
    try:
        agent.observe(ROWS)
        engine = agent.store_.engine
        with engine.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(:p)"),
                {"p": agent._lock.probe()["l_pid"]},
            )
            conn.commit()
        with pytest.raises(StoreError, match="lost its write lock"):
            agent.observe(ROWS + 1)
        assert agent.store_.status(agent.name)["n_observations"] == len(ROWS)
    finally:
        agent.close()


def test_a_sqlite_file_store_writes_on_one_held_connection(tmp_path):
    # Taking a connection from the pool and giving it back cost a call as
    # much as its statements: the old writer did it at every write.
    from skrbal.online import AgentStore

    store = AgentStore(str(tmp_path / "a.db"))
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process().set_params(inspection_cost=1e-6),
        store=store,
    ).fit(X0, Y0)
    out, back = [], []
    event.listen(store.engine, "checkout", lambda *args: out.append(1))
    event.listen(store.engine, "checkin", lambda *args: back.append(1))
    try:
        made = agent.observe(ROWS)
        agent.record_inspection(int(made["request_id"].dropna().iloc[0]), 4)
        agent.observe(ROWS + 0.5)
        # From another thread too, one write at a time.
        worker = threading.Thread(target=agent.observe, args=(ROWS + 1.0,))
        worker.start()
        worker.join()
        assert len(out) <= 1 and back == []
        assert agent.store_.verify(agent.name)["seq"] == 5
        assert agent.n_steps_ == len(X0) + 3 * len(ROWS)
    finally:
        agent.close()
        store.close()
    assert len(back) == len(out)  # given back when the store closes


def test_a_write_while_the_held_connection_is_busy_takes_another(tmp_path):
    # The held connection runs one transaction at a time: a second one (a
    # write of another thread meanwhile) takes a connection from the pool.
    from skrbal.online._sql._held import HeldConnection

    engine = create_engine(f"sqlite:///{tmp_path / 'held.db'}")
    held = HeldConnection(engine)
    with held.begin() as first:
        first.exec_driver_sql("CREATE TABLE t (a INTEGER)")
        with held.begin() as second:
            assert second is not first
            assert second.connection.dbapi_connection is not (
                first.connection.dbapi_connection
            )
    with held.begin() as again:
        assert again is first
        again.exec_driver_sql("INSERT INTO t VALUES (1)")
    with pytest.raises(RuntimeError):
        with held.begin() as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (2)")
            raise RuntimeError("rolled back")
    with held.begin() as conn:
        assert conn.exec_driver_sql("SELECT a FROM t").fetchall() == [(1,)]
    held.close()
    assert engine.pool.checkedout() == 0
    engine.dispose()
