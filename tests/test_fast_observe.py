"""``skrbal agent observe`` from the stored snapshot, without the model (issue 28.25).

The fast path (:class:`~skrbal.online._snapshot_agent.SnapshotAgent`) must be
silently equal to the agent's own: the same output bytes, the same store rows
and chain; it must not import scikit-learn or pandas; it must refuse what the
chain does not cover; and a store without snapshots takes the full path.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest
from _cli_runner import run_forked

from skrbal import synthetic_decision_process
from skrbal.budget import PacedBudget
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent
from skrbal.online._snapshot_agent import SnapshotAgent
from skrbal.online._sql import _writing
from skrbal.online._sql._store_writing import AgentStoreWriting

CENTRES = np.array([[0.0, 0.0], [2.0, 1.0], [4.0, 3.0], [7.0, 6.0]])
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


HOUR = 3600.0


def _store(path, *, snapshots=True, timeout=25, timed=False):
    """An agent on a SQLite file, commissioned and fed 40 rows (``timed``: an
    hour apart, in seconds; else counted in steps)."""
    rng = np.random.default_rng(3)
    X0 = np.vstack([CENTRES[k] + rng.normal(0.0, 1.0, size=(3, 2)) for k in range(4)])
    X = CENTRES[rng.choice(4, size=40, p=[0.55, 0.25, 0.12, 0.08])]
    X = X + rng.normal(0.0, 1.0, size=(40, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        keeps = AgentStoreWriting.keeps_snapshots
        AgentStoreWriting.keeps_snapshots = snapshots
        try:
            with RiskBasedAgent(
                estimator=BayesianGMMClassifier(),
                process=synthetic_decision_process(),
                budget=PacedBudget(limit=40.0, period=60.0, explore=0.2),
                store=f"sqlite:///{path}",
                name="bridge",
                request_timeout=None
                if timeout is None
                else timeout * (HOUR if timed else 1),
            ).fit(
                X0,
                np.repeat([1, 2, 3, 4], 3),
                timestamps=HOUR * np.arange(12.0) if timed else None,
            ) as agent:
                agent.observe(
                    X, timestamps=HOUR * np.arange(12.0, 52.0) if timed else None
                )
        finally:
            AgentStoreWriting.keeps_snapshots = keeps


def _csv(path, rows, first=None):
    """The rows as CSV; with ``first`` (an hour), a ``time`` column from it."""
    with open(path, "w") as f:
        f.write("x0,x1\n" if first is None else "time,x0,x1\n")
        for i, (a, b) in enumerate(rows):
            stamp = "" if first is None else f"{(first + i) * HOUR:.1f},"
            f.write(f"{stamp}{float(a)!r},{float(b)!r}\n")
    return str(path)


def _tables(path) -> dict:
    """Every row of every table; ``owner`` names the lock holder's process."""
    with sqlite3.connect(path) as conn:
        names = [
            n
            for (n,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        tables = {}
        for name in names:
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({name})")]
            rows = conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2").fetchall()
            if "owner" in columns:
                at = columns.index("owner")
                rows = [r[:at] + r[at + 1 :] for r in rows]
            tables[name] = rows
    return tables


@pytest.fixture
def counted(tmp_path, monkeypatch):
    """Forked commands write each snapshot-agent call to a file; the writer's
    clock is fixed, so that two sessions' chains can be equal."""
    calls = tmp_path / "fast-calls"
    observe = SnapshotAgent.observe

    def counting(self, *args, **kwargs):
        decided = observe(self, *args, **kwargs)
        with open(calls, "a") as f:
            f.write("fast\n")
        return decided

    monkeypatch.setattr(SnapshotAgent, "observe", counting)
    clock = types.SimpleNamespace(time=lambda: 1.8e9, ctime=lambda: "then")
    monkeypatch.setattr(_writing, "time", clock)
    return lambda: calls.read_text().count("fast") if calls.exists() else 0


def _session(tmp_path, db, env):
    """The same commands on ``db``: observes, a result, a cancel, expiries."""
    rng = np.random.default_rng(11)
    calm = CENTRES[0] + 0.3 * rng.normal(size=(40, 2))
    damaged = CENTRES[3] + 0.3 * rng.normal(size=(6, 2))
    store = ["--store", str(db), "--agent", "bridge"]
    inputs = [
        _csv(tmp_path / "calm1.csv", calm[:3]),
        _csv(tmp_path / "mixed.csv", [*calm[3:5], damaged[0], *calm[5:7]]),
        _csv(tmp_path / "calm2.csv", calm[7:10]),
        _csv(tmp_path / "damaged.csv", damaged[1:4]),
        _csv(tmp_path / "calm3.csv", calm[10:12]),
        _csv(tmp_path / "long.csv", calm[12:32]),
    ]
    commands = [
        ["agent", "observe", *store, "--batch-size", "1", inputs[0]],
        ["agent", "observe", *store, "--batch-size", "2", inputs[1]],
        ["agent", "observe", *store, "--key", "k1", inputs[2]],
        ["agent", "observe", *store, "--key", "k1", inputs[2]],  # a retry
        ["agent", "observe", *store, inputs[3]],
        ["agent", "inspect", *store, "1", "1"],
        ["agent", "observe", *store, "--format", "jsonl", inputs[4]],
        ["agent", "cancel", *store, "--reason", "no access", "4"],
        ["agent", "observe", *store, "--batch-size", "1", inputs[5]],
        ["agent", "observe", *store, inputs[0]],
        ["agent", "observe", *store, inputs[0]],  # a repeated batch: warned
    ]
    out = []
    for argv in commands:
        code, stdout, stderr = run_forked(argv, cwd=str(tmp_path), env=env, timeout=120)
        assert code == 0, (argv, stderr)
        out.append((argv[1], stdout, stderr))
    return out


def test_a_session_is_equal_on_both_paths_to_the_byte(tmp_path, counted):
    _store(tmp_path / "base.db")
    full, fast = tmp_path / "full.db", tmp_path / "fast.db"
    shutil.copy(tmp_path / "base.db", full)
    shutil.copy(tmp_path / "base.db", fast)
    env = {**os.environ, "SKRBAL_SERVER": "none"}
    slow = _session(tmp_path, full, {**env, "SKRBAL_SNAPSHOT": "off"})
    assert counted() == 0
    quick = _session(tmp_path, fast, env)
    n_fast = counted()
    assert quick == slow
    assert _tables(fast) == _tables(full)
    # Both paths ran: the snapshot's calls, and the batches that needed the
    # model (a request while few are fantasised; an expiry).
    n_batches = sum(out.count("\n") - 1 for kind, out, _ in quick if kind == "observe")
    assert 5 <= n_fast < n_batches, (n_fast, n_batches)
    warned = "".join(err for _, _, err in quick)
    assert "RequestExpiredWarning" in warned and "RepeatedBatchWarning" in warned


def test_a_session_with_times_in_seconds_is_equal_on_both_paths(tmp_path, counted):
    _store(tmp_path / "base.db", timed=True, timeout=60)  # expiries in t4
    rng = np.random.default_rng(5)
    calm = CENTRES[0] + 0.3 * rng.normal(size=(30, 2))
    damaged = CENTRES[3] + 0.3 * rng.normal(size=(2, 2))
    inputs = [
        _csv(tmp_path / "t1.csv", calm[:3], first=52),
        _csv(tmp_path / "t2.csv", [calm[3], damaged[0], calm[4]], first=55),
        _csv(tmp_path / "t3.csv", calm[5:8], first=58),
        _csv(tmp_path / "t4.csv", calm[8:30], first=61),
    ]
    env = {**os.environ, "SKRBAL_SERVER": "none"}
    results = []
    for name, extra in (("full.db", {"SKRBAL_SNAPSHOT": "off"}), ("fast.db", {})):
        db = tmp_path / name
        shutil.copy(tmp_path / "base.db", db)
        store = ["--store", str(db), "--agent", "bridge"]
        commands = [
            ["agent", "observe", *store, inputs[0]],
            ["agent", "observe", *store, inputs[1]],
            ["agent", "inspect", *store, "--timestamp", str(57 * HOUR), "1", "1"],
            ["agent", "observe", *store, "--format", "jsonl", inputs[2]],
            ["agent", "observe", *store, "--batch-size", "4", inputs[3]],
        ]
        outs = [
            run_forked(argv, cwd=str(tmp_path), env={**env, **extra}, timeout=120)
            for argv in commands
        ]
        assert all(code == 0 for code, _, _ in outs), outs
        results.append((outs, _tables(db)))
    (slow, slow_tables), (quick, quick_tables) = results
    for i, (a, b) in enumerate(zip(slow, quick)):
        assert a == b, (i, a, b)
    assert slow_tables == quick_tables
    assert counted() >= 3
    assert "3600" not in results[1][0][0][1]  # the times are the seconds given
    assert f"{52 * HOUR!r}" in results[1][0][0][1]


def test_the_command_imports_neither_sklearn_nor_pandas_nor_sqlalchemy(tmp_path):
    _store(tmp_path / "a.db", timeout=None)  # nothing expires: no model needed
    rows = _csv(tmp_path / "one.csv", [CENTRES[0] + 0.1])
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('LOADED ' + ' '.join(sorted("
        "m for m in ('sklearn', 'pandas', 'scipy', 'sqlalchemy') "
        "if m in sys.modules)) + '\\n'))\n"
        "from skrbal.cli import main\n"
        "sys.argv = ['skrbal'] + sys.argv[1:]\n"
        "sys.exit(main())\n"
    )
    argv = ["agent", "observe", "--store", str(tmp_path / "a.db"), "--agent", "bridge"]
    env = {**os.environ, "SKRBAL_SERVER": "none"}
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv, rows],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("step,timestamp,belief_1")
    assert done.stdout.count("\n") == 2
    assert done.stderr.strip().splitlines()[-1] == "LOADED", done.stderr


def test_an_edited_snapshot_is_refused_as_the_full_path_refuses_it(tmp_path, counted):
    db = tmp_path / "a.db"
    _store(db)
    with sqlite3.connect(db) as conn:
        seq, payload = conn.execute(
            "SELECT seq, payload FROM skrbal_events WHERE payload LIKE "
            "'%\"snapshot\": {%' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        edited = json.loads(payload)
        model = json.loads(edited["snapshot"]["model"])
        model["means"][0][0] += 1e-9
        edited["snapshot"]["model"] = json.dumps(model)
        conn.execute(
            "UPDATE skrbal_events SET payload = ? WHERE seq = ?",
            (json.dumps(edited), seq),
        )
    rows = _csv(tmp_path / "one.csv", [CENTRES[0] + 0.1])
    argv = ["agent", "observe", "--store", str(db), "--agent", "bridge", rows]
    env = {**os.environ, "SKRBAL_SERVER": "none"}
    fast = run_forked(argv, cwd=str(tmp_path), env=env, timeout=120)
    full = run_forked(
        argv, cwd=str(tmp_path), env={**env, "SKRBAL_SNAPSHOT": "off"}, timeout=120
    )
    assert fast == full
    assert fast[0] != 0 and "chain" in fast[2] and fast[1] == ""
    assert counted() == 0


def test_a_store_without_snapshots_takes_the_full_path(tmp_path, counted):
    _store(tmp_path / "old.db", snapshots=False)
    shutil.copy(tmp_path / "old.db", tmp_path / "full.db")
    rows = _csv(tmp_path / "calm.csv", CENTRES[[0, 0, 1]] + 0.1)
    env = {**os.environ, "SKRBAL_SERVER": "none"}
    outs = []
    for db, extra in (("old.db", {}), ("full.db", {"SKRBAL_SNAPSHOT": "off"})):
        argv = ["agent", "observe", "--store", str(tmp_path / db), "--agent", "bridge"]
        outs.append(
            run_forked(
                [*argv, rows], cwd=str(tmp_path), env={**env, **extra}, timeout=120
            )
        )
    assert outs[0] == outs[1] and outs[0][0] == 0
    assert counted() == 0
    assert _tables(tmp_path / "old.db") == _tables(tmp_path / "full.db")
