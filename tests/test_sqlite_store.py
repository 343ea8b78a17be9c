"""A SQLite file store through the standard library's sqlite3 (issue 28.25).

A live call on a SQLite file reads and writes through ``sqlite3`` with the
store's own writer and SQL texts, and imports no SQLAlchemy; the rows it
writes are those the SQLAlchemy path writes, byte for byte, and its errors
the store's.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import test_online_crash as crash  # tests/ is on sys.path
from sklearn.naive_bayes import GaussianNB

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.datasets import make_degradation_stream
from skrbal.exceptions import AgentLockedError
from skrbal.online import AgentStore, RiskBasedAgent, StoreError
from skrbal.online._connect import open_sqlite_store
from skrbal.online._records import ClientKey, SkippedRow
from skrbal.online._sql import _driver, _schema
from skrbal.online._sql import _writing as writing_module
from skrbal.online._sql._live import LiveReads
from skrbal.online._sql._sqlite_store import SqliteStore

X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)
# Rows whose values open requests (cheap inspections) and rows that do not.
ROWS = np.array([[12.5], [-5.0], [12.0], [2.9], [-5.2], [3.1]])
PROCESS = synthetic_decision_process().set_params(inspection_cost=1e-6)


def _agent(store, name="agent"):
    return RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store, name=name
    ).fit(X0, Y0)


def _tables(path) -> dict:
    """Every row of every table of a SQLite file (bytes as stored)."""
    conn = sqlite3.connect(path)
    try:
        names = [
            n
            for (n,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {
            name: conn.execute(f"SELECT * FROM {name} ORDER BY rowid").fetchall()
            for name in names
            if name != "skrbal_schema_version"  # its applied_at is the opening's
        }
    finally:
        conn.close()


# --------------------------------------------------------------------- #
# 1. a fresh interpreter: observe, result, cancel, without SQLAlchemy
# --------------------------------------------------------------------- #
_LIVE_SESSION = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from skrbal.online._connect import open_sqlite_store
    from skrbal.online._records import ObserveBlock, RequestRecord, ResultRecord
    import skrbal.online._idempotency  # a call's keys are checked on that path

    path, name = sys.argv[1], sys.argv[2]
    store = open_sqlite_store(path)
    record = store.load_agent(name)
    lock = store.lock_agent(record.agent_id, name)
    first, n, seq = record.n_steps, 3, record.last_seq
    ids = np.array([record.n_requests + 1, 0, record.n_requests + 2])
    evpi = np.array([0.5, 0.0, 0.4])
    block = ObserveBlock(
        first_step=first,
        times=np.arange(first, first + n, dtype=float),
        timestamps=None,
        features=np.array([[1.0], [2.0], [3.0]]),
        belief=np.array([[0.7, 0.1, 0.1, 0.1], [0.25] * 4, [0.1, 0.6, 0.2, 0.1]]),
        evpi=evpi,
        action=np.array([0, 0, 1]),
        request_ids=ids,
        requests=tuple(
            RequestRecord(request_id=int(i), step=first + k, evpi=float(e))
            for k, (i, e) in enumerate(zip(ids, evpi)) if i
        ),
        budget_state=record.budget_state,
        clock=record.clock,
    )
    store.append_observe(record.agent_id, seq, block)
    store.record_result(
        record.agent_id, seq + 1,
        ResultRecord(request_id=int(ids[0]), step=first, label=1, action=0),
    )
    store.record_cancel(record.agent_id, seq + 2, int(ids[2]), first + 2, "booked")
    lock.release()
    status = store.status(name)
    # What the next call reads: the whole chain verified, steps, a block.
    head = store.verify(name)
    block = store.load_block(record.agent_id, first)
    steps = store.load_steps(record.agent_id, [first + 2], ("belief",))
    store.configuration(name)
    snapshot = store.load_snapshot(name)
    store.close()
    print(json.dumps({
        "modules": sorted(m for m in ("sqlalchemy", "sklearn", "pandas", "scipy")
                          if m in sys.modules),
        "n_open": status["n_open"], "n_results": status["n_results"],
        "seq": head["seq"], "block": block.request_ids.tolist(),
        "belief": steps["belief"].tolist(), "snapshot": snapshot is None,
    }))
    """
)


def test_a_fresh_interpreter_observes_and_records_without_sqlalchemy(tmp_path):
    path = str(tmp_path / "agents.db")
    _agent(path).close()
    done = subprocess.run(
        [sys.executable, "-c", _LIVE_SESSION, path, "agent"],
        capture_output=True,
        text=True,
        check=True,
    )
    said = json.loads(done.stdout)
    assert said == {
        "modules": [],
        "n_open": 0,
        "n_results": 1,
        "seq": 4,
        "block": [1, 0, 2],
        "belief": [[0.1, 0.6, 0.2, 0.1]],
        "snapshot": True,  # GaussianNB keeps none
    }
    # What it wrote is a store the SQLAlchemy path verifies and resumes.
    with AgentStore(path) as store:
        assert store.verify("agent")["seq"] == 4
        requests = store.requests("agent").set_index("request_id")
    assert list(requests["status"]) == ["done", "cancelled"]
    assert requests.loc[2, "note"] == "booked"
    agent = RiskBasedAgent.from_store(path, "agent")
    assert agent.n_steps_ == len(X0) + 3
    agent.close()


# --------------------------------------------------------------------- #
# 2. one session, two drivers, the same bytes
# --------------------------------------------------------------------- #
class _Clock:
    """``time`` of the writer: a clock both sessions read alike."""

    def __init__(self):
        self.now = 1_700_000_000.0

    def time(self):
        self.now += 0.25
        return self.now

    def ctime(self, *args):
        return "Sat Nov 28 03:00:00 2026"


_WRITES = (
    "create_agent",
    "lock_agent",
    "append_observe",
    "record_result",
    "record_cancel",
    "record_expire",
    "record_action",
    "record_skipped",
)


def _recorded_session(store) -> list:
    """Run an agent's session on ``store``; the store calls it made, in order."""
    calls = []
    for name in _WRITES:
        method = getattr(store, name)

        def recorder(*args, _method=method, _name=name, **kwargs):
            calls.append((_name, args, kwargs))
            return _method(*args, **kwargs)

        setattr(store, name, recorder)
    agent = _agent(store)
    try:
        made = agent.observe(ROWS, key="first")
        agent.record_inspection(int(made["request_id"].dropna().iloc[0]), 4, key="r")
        made = agent.observe(ROWS + 0.5)
        ids = [int(i) for i in made["request_id"].dropna()]
        assert len(ids) == 2, made
        agent.cancel_request(ids[0], "booked elsewhere")
        agent.record_action(2, 1, key="action")
        agent.record_label(len(X0) + 1, 1)  # a routine inspection
        agent_id, seq = agent.agent_id_, store.load_agent("agent").last_seq
    finally:
        agent.close()
    # Writes the agent makes rarely, made directly (and recorded) alike.
    step = int(made.loc[made["request_id"] == ids[1], "step"].iloc[0])
    store.record_expire(agent_id, seq, [ids[1]], [step])
    skipped = (SkippedRow(row=3, columns=("x0",), time="9"),)
    store.record_skipped(agent_id, seq + 1, skipped, key=ClientKey("skip", {"a": "b"}))
    return calls


def _replay(store, calls) -> None:
    locks = []
    for name, args, kwargs in calls:
        got = getattr(store, name)(*args, **kwargs)
        if name == "lock_agent":
            locks.append(got)
    for lock in locks:
        lock.release()


def test_both_drivers_write_byte_identical_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(writing_module, "time", _Clock())
    core, stdlib = str(tmp_path / "core.db"), str(tmp_path / "stdlib.db")
    store = AgentStore(core)
    calls = _recorded_session(store)
    store.close()

    monkeypatch.setattr(writing_module, "time", _Clock())
    AgentStore(stdlib).close()  # the tables (DDL is the store's)
    live = SqliteStore.open(stdlib)
    assert live is not None
    _replay(live, calls)
    live.close()

    kinds = [name for name, _, _ in calls]
    for name in _WRITES:
        assert name in kinds
    first, second = _tables(core), _tables(stdlib)
    assert set(first) == {
        t.name
        for t in _schema.metadata.sorted_tables
        if t.name != "skrbal_schema_version"
    }
    for table in first:
        assert first[table] == second[table], table
    assert sum(len(rows) for rows in first.values()) > 20
    with AgentStore(stdlib) as store:
        assert store.verify("agent")["seq"] == len(kinds) - 1  # lock: no event


# --------------------------------------------------------------------- #
# 3. the same refusals and errors
# --------------------------------------------------------------------- #
def test_a_hard_link_and_a_second_writer_are_refused_alike(tmp_path):
    path = tmp_path / "agents.db"
    agent = _agent(str(path))
    try:
        # A second writer of the same agent (this process's registry, and the
        # sidecar's byte lock across processes) is refused on both paths.
        live = SqliteStore.open(path)
        with pytest.raises(AgentLockedError) as stdlib:
            live.lock_agent(agent.agent_id_, "agent")
        with AgentStore(path) as store, pytest.raises(AgentLockedError) as core:
            store.lock_agent(agent.agent_id_, "agent")
        assert str(stdlib.value) == str(core.value)
        live.close()
        os.link(path, tmp_path / "agents2.db")
        with pytest.raises(StoreError, match="hard links") as stdlib:
            open_sqlite_store(str(tmp_path / "agents2.db"))
        with pytest.raises(StoreError, match="hard links") as core:
            AgentStore(tmp_path / "agents2.db")
        assert str(stdlib.value) == str(core.value)
    finally:
        agent.close()


def test_the_stores_errors_say_the_same(tmp_path):
    path = str(tmp_path / "agents.db")
    agent = _agent(path)
    agent_id = agent.agent_id_
    made = agent.observe(ROWS[:1], key="k")
    agent.close()
    said = {}
    for kind, store in (("core", AgentStore(path)), ("stdlib", SqliteStore.open(path))):
        try:
            errors = []
            for method, args, kwargs in (
                ("load_agent", ("nobody",), {}),
                # a move from an event the agent has left
                ("record_action", (agent_id, 1, 0, 1), {}),
                # a client key used already (a writer outside the lock)
                ("record_action", (agent_id, 2, 0, 1), {"key": ClientKey("k", {})}),
            ):
                with pytest.raises(StoreError) as caught:
                    getattr(store, method)(*args, **kwargs)
                errors.append(str(caught.value))
            found = store.find_key(agent_id, "k")
            errors.append((found.seq, found.kind, dict(found.key.digest)))
            said[kind] = errors
        finally:
            store.close()
    assert said["core"] == said["stdlib"]
    assert "has no agent named 'nobody'" in said["core"][0]
    assert "changed by another writer" in said["core"][1]
    assert "already has a call with client key 'k'" in said["core"][2]
    assert made["step"].iloc[0] == len(X0)


def test_what_the_stdlib_path_leaves_to_the_store(tmp_path):
    path = tmp_path / "agents.db"
    assert open_sqlite_store(str(path)) is None  # no file
    assert open_sqlite_store("postgresql://user@db/agents") is None
    assert open_sqlite_store(":memory:") is None
    path.write_bytes(b"")
    assert open_sqlite_store(str(path)) is None  # no store in it
    path.unlink()
    AgentStore(path).close()
    live = open_sqlite_store(f"sqlite:///{path}")
    assert live.display_url == AgentStore(path).display_url
    live.close()


def test_the_texts_name_the_schemas_tables_and_columns():
    tables = {
        t.name: [c.name for c in t.columns] for t in _schema.metadata.tables.values()
    }
    assert list(_driver.AGENT_COLUMNS) == tables[_driver.AGENTS]
    assert list(_driver.BLOCK_COLUMNS) == tables[_driver.BLOCKS]
    for name in (
        _driver.OBSERVATIONS,
        _driver.ACTIONS,
        _driver.REQUESTS,
        _driver.EVENTS,
    ):
        assert name in tables
    assert set(_driver.EVENT_COLUMNS) == set(tables[_driver.EVENTS])


def test_the_stdlib_reads_are_the_stores(tmp_path):
    path = str(tmp_path / "agents.db")
    agent = _agent(path)
    made = agent.observe(ROWS)
    agent.record_inspection(int(made["request_id"].dropna().iloc[0]), 4)
    made = agent.observe(ROWS + 0.5)
    agent.close()
    first = int(made["step"].iloc[0])
    with AgentStore(path) as core, SqliteStore.open(path) as stdlib:
        assert stdlib.verify("agent") == core.verify("agent")
        assert stdlib.configuration("agent") == core.configuration("agent")
        assert stdlib.load_agent("agent") == core.load_agent("agent")
        replay = core.load_replay("agent", every_step=False)
        with stdlib.database.reading() as rows:
            reads = LiveReads(rows, stdlib.display_url)
            live = reads.live(reads.agent_row("agent"))
        assert live["n_commissioning"] == replay.n_commissioning
        assert (live["last_time"], live["last_evpi"]) == (
            replay.last_time,
            replay.last_evpi,
        )
        assert len(live["requests"]) == len(replay.requests) == 3
        for mine, theirs in zip(live["requests"], replay.requests):
            np.testing.assert_equal(vars(mine), vars(theirs))
        aid = replay.agent.agent_id
        np.testing.assert_equal(
            vars(stdlib.load_block(aid, first)), vars(core.load_block(aid, first))
        )
        columns = ("time", "belief", "evpi", "request_id")
        np.testing.assert_equal(
            stdlib.load_steps(aid, [first, first + 2], columns),
            core.load_steps(aid, [first, first + 2], columns),
        )
    # An edited block is refused by both, in the same words.
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE skrbal_blocks SET evpi = zeroblob(length(evpi)) WHERE first_step = ?",
        (first,),
    )
    conn.commit()
    conn.close()
    said = []
    for store in (AgentStore(path), SqliteStore.open(path)):
        with store, pytest.raises(StoreError, match="bytes differ") as caught:
            store.verify("agent")
        said.append(str(caught.value))
    assert said[0] == said[1]


def test_the_live_state_is_the_stores(tmp_path):
    from skrbal.online import _records

    if not hasattr(_records, "LiveState"):
        pytest.skip("LiveState and AgentStore.load_live come with the fast path")
    path = str(tmp_path / "agents.db")
    agent = _agent(path)
    agent.observe(ROWS)
    agent.close()
    with AgentStore(path) as core, SqliteStore.open(path) as stdlib:
        mine, theirs = stdlib.load_live("agent"), core.load_live("agent")
    assert mine.agent == theirs.agent and mine.snapshot == theirs.snapshot
    assert (mine.n_commissioning, mine.last_time, mine.last_evpi) == (
        theirs.n_commissioning,
        theirs.last_time,
        theirs.last_evpi,
    )
    for a, b in zip(mine.requests, theirs.requests, strict=True):
        np.testing.assert_equal(vars(a), vars(b))


# --------------------------------------------------------------------- #
# 4. SIGKILL: the stdlib path loses and duplicates nothing
# --------------------------------------------------------------------- #
class _StdlibWrites(AgentStore):
    """A store whose live-call reads and writes go through sqlite3: the
    agent resumes through SQLAlchemy, then every call is SqliteStore's."""

    def __init__(self, url, synchronous="full"):
        super().__init__(url, synchronous=synchronous)
        self.live = SqliteStore.open(url, synchronous=synchronous)
        for name in (*_WRITES, "load_agent", "find_key"):
            setattr(self, name, getattr(self.live, name))
        # No write may take the SQLAlchemy path (it would fail in the child).
        self._writer.close()
        self._writer = None

    def close(self):
        self.live.close()
        self.database.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill test forks")
def test_the_stdlib_path_loses_nothing_to_sigkill(tmp_path, monkeypatch):
    X, y, _ = make_degradation_stream(n_cycles=2, n_per_cycle=200, random_state=4)
    first = [int(np.flatnonzero(y == c)[0]) for c in (1, 2, 3, 4)]
    order = np.concatenate([first, np.setdiff1d(np.arange(y.size), first)])
    X, y = X[order][:100], y[order][:100]
    url = str(tmp_path / "killed.db")
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    reference = RiskBasedAgent(**params, name="crash").fit(X[:4], y[:4])
    crash._walk(reference, X, y, lambda line: None)
    RiskBasedAgent(**params, store=url, name="crash").fit(X[:4], y[:4]).close()
    # The kill test's children resume through _StdlibWrites ("normal": the
    # helpers open the store object when synchronous is not "full").
    monkeypatch.setattr(crash, "AgentStore", _StdlibWrites)
    kills, reported = crash._kill_run(
        url, X, y, seed=2, refusals_path=tmp_path / "refusals", n_kills=8,
        synchronous="normal",
    )  # fmt: skip
    assert kills == 8
    steps = [line.split()[1] for line in reported if line[0] == "O"]
    assert len(steps) == len(set(steps))
    with AgentStore(url) as store:
        history = store.history("crash")
        store.verify("crash")
    expected = reference.history_.steps
    assert history.drop(columns="timestamp").equals(expected.drop(columns="timestamp"))
    reference.close()


def test_a_driver_error_of_the_stdlib_path_is_said_as_sqlalchemys(tmp_path):
    # The command's guard turned SQLAlchemy's DBAPIError into one line; the
    # stdlib path raises sqlite3's error itself, which went out raw.
    from argparse import Namespace

    from sqlalchemy.exc import OperationalError

    from skrbal.cli._agent_store import guarded

    args = Namespace(store=str(tmp_path / "agents.db"))
    orig = sqlite3.OperationalError("database is locked")
    said = []
    for error in (orig, OperationalError("UPDATE ...", {}, orig)):

        def handler(_args, error=error):
            raise error

        with pytest.raises(ValueError) as caught:
            guarded(handler)(args)
        said.append(str(caught.value))
    assert (
        said[0]
        == said[1]
        == f"--store {args.store!r}: not a store (database is locked)"
    )


@pytest.mark.parametrize("synchronous", ["full", "normal"])
def test_the_stdlib_connections_set_the_stores_pragmas(tmp_path, synchronous):
    path = str(tmp_path / "agents.db")
    AgentStore(path).close()
    pragmas = ("journal_mode", "synchronous", "foreign_keys")
    core = AgentStore(path, synchronous=synchronous)
    with core.engine.connect() as conn:
        expected = [conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in pragmas]
    core.close()
    live = SqliteStore.open(path, synchronous=synchronous)
    conn = live.database.connect()
    got = [conn.cursor().execute(f"PRAGMA {p}").fetchone()[0] for p in pragmas]
    conn.close()
    live.close()
    assert got == expected == ["wal", {"full": 2, "normal": 1}[synchronous], 1]


def test_a_refused_chain_key_is_refused_alike(tmp_path):
    path = str(tmp_path / "agents.db")
    AgentStore(path).close()
    said = []
    for opener in (AgentStore, SqliteStore.open):
        with pytest.raises(ValueError) as caught:
            opener(path, chain_key=b"short")
        said.append(str(caught.value))
    assert said[0] == said[1]
