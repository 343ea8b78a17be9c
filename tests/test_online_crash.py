"""Crash safety: an agent process killed with SIGKILL, again and again.

A forked child resumes the agent from the store and walks a stream, returning
each inspection result at once, and writes every decision to a pipe once the
call has returned it. The parent kills it at a random moment (between calls,
or inside one), checks that every decision the child reported is in the store
exactly once and as reported, and starts the next child. At the end the store
must equal that of an uninterrupted run.
"""

import os
import signal
import time
import traceback
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.datasets import make_degradation_stream
from skrbal.exceptions import AgentLockedError
from skrbal.online import AgentStore, RiskBasedAgent

N_KILLS = 50
# A killed agent's write lock must die with it (the kernel drops the SQLite
# sidecar's byte lock, the server the PostgreSQL session's advisory lock), so
# a restart is refused at most while the server ends the killed session. The
# bound is on refusals, not on wall time, which a loaded machine stretches
# (an elapsed < 120 s bound failed at 136 s under load): each refusal is
# followed by a 50 ms pause, so 100 are at least 5 s of waiting, by one
# restart or by all together. A lock that outlived its holder exhausts them;
# measured: 0 refusals in 43 restarts on each backend, at a load of 20.
MAX_LOCK_REFUSALS = 100

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork"), reason="the kill test forks its agent processes"
)


@pytest.fixture(scope="module")
def stream():
    X, y, _ = make_degradation_stream(n_cycles=2, n_per_cycle=200, random_state=4)
    first = [int(np.flatnonzero(y == c)[0]) for c in (1, 2, 3, 4)]
    order = np.concatenate([first, np.setdiff1d(np.arange(y.size), first)])
    return X[order], y[order]


def _walk(agent, X, y, report):
    """Answer open requests, then observe the rest of the stream step by step."""
    for request in agent.status()["open_requests"]:
        step = request["step"]
        action = agent.record_inspection(request["request_id"], y[step])
        report(f"R {request['request_id']} {step} {action}")
    for t in range(agent.n_steps_, y.size):
        row = agent.observe(X[t : t + 1]).iloc[0]
        request_id = 0 if not row["inspect"] else int(row["request_id"])
        report(f"O {t} {float(row['evpi']).hex()} {request_id} {int(row['action'])}")
        if request_id:
            action = agent.record_inspection(request_id, y[t])
            report(f"R {request_id} {t} {action}")
    report("END")


def _resume(url, name, synchronous="full"):
    """The agent resumed from the store, and how often its lock was refused."""
    for refusals in range(MAX_LOCK_REFUSALS + 1):
        try:
            if synchronous != "full":
                url = AgentStore(url, synchronous=synchronous)
            return RiskBasedAgent.from_store(url, name), refusals
        except AgentLockedError:
            if refusals == MAX_LOCK_REFUSALS:
                raise
            time.sleep(0.05)


def _child(url, X, y, write_fd, refusals_fd, synchronous="full"):
    def report(line):
        os.write(write_fd, (line + "\n").encode())

    try:
        agent, refusals = _resume(url, "crash", synchronous)
        # apart from the decisions: the parent kills after so many of those
        os.write(refusals_fd, f"{refusals}\n".encode())
        _walk(agent, X, y, report)
        agent.close()
    except BaseException as exc:
        report(f"ERROR {exc!r}")
        os._exit(1)
    os._exit(0)  # no cleanup of the parent's inherited state


def _stored_decisions(url):
    """Steps and requests of the store."""
    store = AgentStore(url)
    try:
        history = store.history("crash")
        steps = [
            SimpleNamespace(
                step=row.step,
                evpi=row.evpi,
                action=row.recommended_action,
                request_id=None if pd.isna(row.request_id) else row.request_id,
            )
            for row in history.itertuples()
        ]
        requests = store.requests("crash").set_index("request_id")
    finally:
        store.close()
    return steps, requests


def _check_reported(url, lines, y):
    steps, requests = _stored_decisions(url)
    assert [row.step for row in steps] == list(range(len(steps)))  # no duplicate
    assert requests["step"].is_unique
    for line in lines:
        kind, *fields = line.split()
        if kind == "O":
            step, evpi, request_id, action = fields
            row = steps[int(step)]
            assert row.evpi == float.fromhex(evpi)
            assert row.action == int(action)
            assert (row.request_id or 0) == int(request_id)
        elif kind == "R":
            request_id, step, action = (int(v) for v in fields)
            row = requests.loc[request_id]
            assert row["step"] == step and row["status"] == "done"
            assert row["label"] == y[step] and row["action"] == action
    return len(steps)


def _kill_run(url, X, y, seed, refusals_path, n_kills=N_KILLS, synchronous="full"):
    rng = np.random.default_rng(seed)
    kills, reported = 0, []
    refusals_fd = os.open(refusals_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    while True:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child(url, X, y, write_fd, refusals_fd, synchronous)
        os.close(write_fd)
        out = os.fdopen(read_fd)
        lines, finished = [], False
        if kills < n_kills:
            # kill after a random number of reported decisions, a random
            # fraction of a call later: between calls or inside one
            for _ in range(rng.integers(0, 6)):
                line = out.readline()
                if not line:
                    break
                lines.append(line.strip())
            time.sleep(rng.uniform(0, 0.004))
            os.kill(pid, signal.SIGKILL)
            kills += 1
        lines += [line.strip() for line in out]  # what came before the kill
        out.close()
        os.waitpid(pid, 0)
        errors = [line for line in lines if line.startswith("ERROR")]
        assert not errors, errors
        finished = bool(lines) and lines[-1] == "END"
        lines = [line for line in lines if line != "END"]
        _check_reported(url, lines, y)
        reported += lines
        if finished:
            os.close(refusals_fd)
            return kills, reported


def test_agent_survives_sigkill(store_url, stream, tmp_path):
    X, y = stream
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    reference = RiskBasedAgent(**params, name="crash").fit(X[:4], y[:4])
    _walk(reference, X, y, lambda line: None)
    RiskBasedAgent(**params, store=store_url, name="crash").fit(X[:4], y[:4]).close()

    refusals_path = tmp_path / "lock-refusals"
    kills, reported = _kill_run(store_url, X, y, seed=0, refusals_path=refusals_path)
    assert kills == N_KILLS
    # together, too, the restarts were refused no more than one may be
    refusals = [int(n) for n in refusals_path.read_text().split()]
    assert refusals and sum(refusals) <= MAX_LOCK_REFUSALS
    # every decision was reported once at most (a kill may fall between the
    # commit and the report, never the other way round)
    steps = [line.split()[1] for line in reported if line[0] == "O"]
    assert len(steps) == len(set(steps))

    store = AgentStore(store_url)
    history, requests = store.history("crash"), store.requests("crash")
    store.close()
    expected = reference.history_.steps
    assert history.drop(columns="timestamp").equals(expected.drop(columns="timestamp"))
    assert requests.drop(columns="result_timestamp").equals(
        reference.store_.requests("crash").drop(columns="result_timestamp")
    )
    assert (requests["status"] == "done").all() and len(requests) > 3
    reference.close()


def test_synchronous_normal_loses_nothing_to_sigkill(tmp_path, stream):
    # AgentStore(synchronous="normal") gives up the disk sync of each commit:
    # a power cut or an operating-system crash may lose the last commits,
    # a killed process nothing (the commit is in the WAL, in the operating
    # system's hands). Every decision the killed children reported is in
    # the store once, as reported, and the store ends equal to one run's.
    X, y = stream
    X, y = X[:150], y[:150]
    url = str(tmp_path / "normal.db")
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    reference = RiskBasedAgent(**params, name="crash").fit(X[:4], y[:4])
    _walk(reference, X, y, lambda line: None)
    store = AgentStore(url, synchronous="normal")
    RiskBasedAgent(**params, store=store, name="crash").fit(X[:4], y[:4]).close()
    store.close()
    kills, reported = _kill_run(
        url, X, y, seed=1, refusals_path=tmp_path / "refusals", n_kills=15,
        synchronous="normal",
    )  # fmt: skip
    assert kills == 15
    steps = [line.split()[1] for line in reported if line[0] == "O"]
    assert len(steps) == len(set(steps))
    store = AgentStore(url)
    history = store.history("crash")
    store.close()
    expected = reference.history_.steps
    assert history.drop(columns="timestamp").equals(expected.drop(columns="timestamp"))
    reference.close()


def _fleet_member(url, name, X, y):
    try:
        store = AgentStore(url)
        agent = RiskBasedAgent.from_store(store, name)
        _walk(agent, X, y, lambda line: None)
        agent.close()
        store.close()
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    os._exit(0)


def test_agents_of_a_fleet_write_one_store_at_once(store_url, stream):
    """Two processes, two agents, one database: each ends as if alone."""
    X, y = stream
    X, y = X[:120], y[:120]
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    streams = {"north": (X, y), "south": (X[:, ::-1].copy(), y)}
    for name, (Xs, ys) in streams.items():
        RiskBasedAgent(**params, store=store_url, name=name).fit(Xs[:4], ys[:4]).close()
    pids = []
    for name, (Xs, ys) in streams.items():
        pid = os.fork()
        if pid == 0:
            _fleet_member(store_url, name, Xs, ys)
        pids.append(pid)
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    store = AgentStore(store_url)
    for name, (Xs, ys) in streams.items():
        with RiskBasedAgent(**params, name=name).fit(Xs[:4], ys[:4]) as alone:
            _walk(alone, Xs, ys, lambda line: None)
            assert (
                store.history(name)
                .drop(columns="timestamp")
                .equals(alone.history_.steps.drop(columns="timestamp"))
            )
    store.close()


def _killed_after_commit(url, method_name, call):
    """Child: ``call(agent)`` whose store write commits, then SIGKILL at once.

    The kill falls after the commit and before the call returns: the caller
    never gets the answer, as when a client dies or a connection drops.
    """
    try:
        store = AgentStore(url)
        commit = getattr(store, method_name)

        def commit_then_die(*args, **kwargs):
            commit(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)

        setattr(store, method_name, commit_then_die)
        call(RiskBasedAgent.from_store(store, "crash", lock_timeout=30))
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    os._exit(0)


def _run_child(target, *args):
    pid = os.fork()
    if pid == 0:
        target(*args)
    return os.waitpid(pid, 0)[1]


def test_a_call_killed_after_its_commit_is_retried_with_its_key(store_url, stream):
    """Process A commits and dies; process B retries and gets A's answers."""
    X, y = stream
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    batch = X[4:40]
    with RiskBasedAgent(**params, name="crash").fit(X[:4], y[:4]) as reference:
        expected = reference.observe(batch)
        request = int(expected["request_id"].dropna().iloc[0])
        step = int(expected.loc[expected["request_id"] == request, "step"].iloc[0])
        expected_action = reference.record_inspection(request, y[step])
        after = reference.observe(X[40:60])
    RiskBasedAgent(**params, store=store_url, name="crash").fit(X[:4], y[:4]).close()

    status = _run_child(
        _killed_after_commit,
        store_url,
        "append_observe",
        lambda agent: agent.observe(batch, key="batch-1"),
    )
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    with RiskBasedAgent.from_store(store_url, "crash") as b:
        assert b.n_steps_ == 40  # A's decisions were committed
        pd.testing.assert_frame_equal(b.observe(batch, key="batch-1"), expected)
        assert b.n_steps_ == 40  # and not decided again

    status = _run_child(
        _killed_after_commit,
        store_url,
        "record_result",
        lambda agent: agent.record_inspection(request, y[step], key="result-1"),
    )
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    with RiskBasedAgent.from_store(store_url, "crash") as b:
        assert b.record_inspection(request, y[step], key="result-1") == expected_action
        pd.testing.assert_frame_equal(b.observe(X[40:60]), after)
        kinds = b.store_.events("crash")["kind"].tolist()
    assert kinds == ["commission", "observe", "result", "observe"]


def _keyed_walk(url, X, y, write_fd):
    """Child: the whole stream again from its start, every call keyed.

    A client that does not know how far the last run got replays its input;
    the calls that were committed return their stored answers.
    """
    try:
        agent = RiskBasedAgent.from_store(url, "crash", lock_timeout=30)
        for t in range(4, y.size):
            row = agent.observe(X[t : t + 1], key=f"obs-{t}").iloc[0]
            if row["inspect"]:
                agent.record_inspection(int(row["request_id"]), y[t], key=f"res-{t}")
            os.write(write_fd, f"{t}\n".encode())
        agent.close()
        os.write(write_fd, b"END\n")
    except BaseException as exc:
        os.write(write_fd, f"ERROR {exc!r}\n".encode())
        os._exit(1)
    os._exit(0)


def test_keyed_replays_after_random_kills_equal_one_run(store_url, stream):
    X, y = stream
    X, y = X[:150], y[:150]
    params = dict(
        estimator=BayesianGMMClassifier(), process=synthetic_decision_process()
    )
    reference = RiskBasedAgent(**params, name="crash").fit(X[:4], y[:4])
    for t in range(4, y.size):
        row = reference.observe(X[t : t + 1]).iloc[0]
        if row["inspect"]:
            reference.record_inspection(int(row["request_id"]), y[t])
    RiskBasedAgent(**params, store=store_url, name="crash").fit(X[:4], y[:4]).close()
    rng = np.random.default_rng(1)
    for kill in range(20):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _keyed_walk(store_url, X, y, write_fd)
        os.close(write_fd)
        out = os.fdopen(read_fd)
        if kill < 19:
            for _ in range(rng.integers(1, 12) + 4 * kill):
                if not out.readline():
                    break
            time.sleep(rng.uniform(0, 0.004))
            os.kill(pid, signal.SIGKILL)
        lines = [line.strip() for line in out]
        out.close()
        os.waitpid(pid, 0)
        assert not [line for line in lines if line.startswith("ERROR")], lines
    assert lines[-1] == "END"
    store = AgentStore(store_url)
    history, requests = store.history("crash"), store.requests("crash")
    store.verify("crash")
    store.close()
    assert history.drop(columns="timestamp").equals(
        reference.history_.steps.drop(columns="timestamp")
    )
    assert requests.drop(columns="result_timestamp").equals(
        reference.store_.requests("crash").drop(columns="result_timestamp")
    )
    reference.close()
