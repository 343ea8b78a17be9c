"""Store safety: locks, atomic creation, read-only files, what loading runs.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import gc
import multiprocessing
import os
import shutil
import tempfile
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import text

from skrbal import synthetic_decision_process
from skrbal.online import (
    AgentLockedError,
    AgentStore,
    RequestError,
    RiskBasedAgent,
    StoreError,
)
from skrbal.online._sql import _schema as schema

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)


def _agent(store):
    return RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, store=store)


def _try_open(urls, queue):
    outcomes = []
    for url in urls:
        try:
            RiskBasedAgent.from_store(url).close()
            outcomes.append("opened")
        except AgentLockedError as exc:
            outcomes.append(f"locked: {exc}")
    queue.put(outcomes)


def _open_in_child(*urls) -> list:
    """Try to open the agent at each URL in turn, in another process."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_try_open, args=([str(u) for u in urls], queue))
    child.start()
    outcomes = queue.get(timeout=120)
    child.join()
    return outcomes


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlinked_store_is_the_same_store_for_the_lock(tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "a.db"
    (tmp_path / "link.db").symlink_to(real)
    (tmp_path / "folder").symlink_to(tmp_path / "real")
    with _agent(real).fit(X0, Y0):
        outcomes = _open_in_child(tmp_path / "link.db", tmp_path / "folder" / "a.db")
    assert [o.split(":")[0] for o in outcomes] == ["locked", "locked"]
    assert _open_in_child(tmp_path / "link.db") == ["opened"]


def test_memory_store_keys_are_never_reused():
    # An agent left open on a store that is gone must not lock out (or be
    # mistaken for) an agent of a new store that happens to get its id().
    keys = set()
    for _ in range(50):
        store = AgentStore(":memory:")
        _agent(store).fit(X0, Y0)  # left open on purpose
        keys.add(store.database.identity)
        del store
        gc.collect()
    assert len(keys) == 50


def test_a_lost_postgres_lock_is_named(store_url):
    if "://" not in store_url:
        pytest.skip("advisory locks are PostgreSQL's")
    agent = _agent(store_url).fit(X0, Y0)
    agent.observe(X0[:1])
    store = AgentStore(store_url)
    with store.engine.begin() as conn:  # as a server restart would
        conn.execute(
            text("SELECT pg_terminate_backend(:pid)"),
            {"pid": agent._lock._backend_pid},
        )
    with pytest.raises(StoreError, match="lost its write lock"):
        agent.observe(X0[:1])
    assert store.status("agent")["n_observations"] == 1
    agent.close()
    with RiskBasedAgent.from_store(store) as again:
        again.observe(X0[:1])
    store.close()


class _Killed(BaseException):
    """Stands for a SIGKILL: nothing after it runs, nothing is committed."""


def test_creation_is_all_or_nothing(store_url, monkeypatch):
    # Killed between creating the tables and writing the version row.
    import skrbal.online._sql._database as store_module

    def killed():
        raise _Killed

    monkeypatch.setattr(store_module, "time", SimpleNamespace(time=killed))
    with pytest.raises(_Killed):
        AgentStore(store_url)
    monkeypatch.undo()
    with AgentStore(store_url) as store:  # not "damaged": created afresh
        assert store.schema_version == schema.SCHEMA_VERSION
        assert store.agent_names() == []


def _open_at(url, start, queue):
    start.wait()
    try:
        with AgentStore(url) as store:
            queue.put(("ok", store.schema_version))
    except Exception as exc:  # reported to the parent, which fails
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks its openers")
def test_two_processes_creating_one_store(store_url, tmp_path):
    context = multiprocessing.get_context("fork")
    for round_ in range(10):
        if "://" in store_url:
            url = store_url
            with AgentStore(url) as store:
                schema.metadata.drop_all(store.engine)
        else:
            url = str(tmp_path / f"round{round_}.db")
        start, queue = context.Event(), context.Queue()
        children = [
            context.Process(target=_open_at, args=(url, start, queue)) for _ in range(2)
        ]
        for child in children:
            child.start()
        start.set()
        outcomes = [queue.get(timeout=120) for _ in children]
        for child in children:
            child.join()
        assert outcomes == [("ok", schema.SCHEMA_VERSION)] * 2, (round_, outcomes)


def _read_as_other_user(path, queue):
    """Read a store in a child without the right to write it (not root)."""
    if os.getuid() == 0:  # root writes anything: read as 'nobody'
        os.setgid(65534)
        os.setuid(65534)
    try:
        store = AgentStore(path)
        outcome = [
            store.read_only,
            store.status("agent")["n_observations"],
            store.history("agent").shape[0],
            store.requests("agent").shape[0],
            store.events("agent").shape[0],
        ]
        try:
            RiskBasedAgent.from_store(store)
        except StoreError as exc:
            outcome.append(str(exc))
        queue.put(outcome)
    except Exception as exc:
        queue.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="reads in a forked child")
@pytest.mark.parametrize("folder_writable", [False, True])
def test_a_read_only_store_can_be_read(folder_writable):
    folder = tempfile.mkdtemp(dir="/tmp")
    path = os.path.join(folder, "a.db")
    try:
        os.chmod(folder, 0o755)
        with _agent(path).fit(X0, Y0) as agent:
            agent.observe(X0[:3])
        os.chmod(path, 0o444)
        os.chmod(folder, 0o777 if folder_writable else 0o555)
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_read_as_other_user, args=(path, queue))
        child.start()
        outcome = queue.get(timeout=120)
        child.join()
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)
    assert outcome[:5] == [True, 3, 11, 0, 2], outcome
    assert f"store {path} is read-only" in outcome[5]
    assert "can be read (status, history, export)" in outcome[5]


@pytest.mark.parametrize(
    "name, message",
    [
        # #21.7: a NUL byte reached PostgreSQL, whose text cannot hold one,
        # and came back as psycopg's error (SQLite stored it).
        ("bridge\x00-7", "name must not contain a NUL"),
        # A lone surrogate, which UTF-8 cannot encode, ended in the driver's
        # raw UnicodeEncodeError when the agent was first written.
        ("bridge\ud800-7", "character 6 is a lone surrogate"),
    ],
)
def test_a_name_no_database_can_hold_is_named_not_sent_to_it(store_url, name, message):
    bad = RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process(),
        store=store_url,
        name=name,
    )
    with pytest.raises(ValueError, match=message):
        bad.fit(X0, Y0)


def test_a_nul_character_elsewhere_is_named_not_sent_to_the_database(store_url):
    """#21.7: a NUL byte in a cancel reason or a name looked up is named."""
    cheap = synthetic_decision_process().set_params(inspection_cost=1e-3)
    agent = RiskBasedAgent(estimator=GaussianNB(), process=cheap, store=store_url)
    decisions = agent.fit(X0, Y0).observe(np.linspace(-10.0, 25.0, 60)[:, None])
    request = int(decisions["request_id"].dropna().iloc[0])
    with pytest.raises(RequestError, match="without NUL"):
        agent.cancel_request(request, reason="no\x00access")
    agent.cancel_request(request, reason="no access")  # nothing was changed
    with pytest.raises(StoreError, match="no agent named"):
        agent.store_.status("bridge\x00-7")
    agent.close()
