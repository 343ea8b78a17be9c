"""The live agent's ``observe`` with its SQLite store, against the bare model.

Run with::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_agent.py [--quick]

Three studies on the synthetic case (a ``BayesianGMMClassifier`` commissioned
on 500 labelled steps of ``make_degradation_stream``, one feature, the paper's
cost rule, a SQLite file store in a temporary folder); ``--case z24`` runs the
speed studies on the Z24-like case instead (its four standardised natural
frequencies and its decision process), whose model costs more per row, as a
deployed monitor's does:

1. **Batch of 1,000.** Paired rounds: in each round the agent observes a
   batch of 1,000 new rows (belief, EVPI, budget, requests, one committed
   transaction) and the bare computation runs ``predict_proba`` + ``evpi`` +
   ``optimal_action`` of the same model on the same rows; which one runs
   first alternates. Reported: median of the per-round ratios
   ``agent / bare`` with quartiles and extremes. Target: at most 3x.
2. **Single observation.** The same pairing, one row per round. Target: the
   agent's median time under 5 ms.
3. **Memory.** A child process streams 1,000,000 observations through one
   agent in batches of 1,000, answering each requested inspection with the
   true label one batch later, and reports its resident set size (current
   ``VmRSS`` and peak ``ru_maxrss``) at 100k, 500k and 1M observations.
   Target: no growth with the stream.

Open requests are capped (``max_open_requests``) and answered, as a live
system would, so the agent's memory holds the labelled set, not the stream.

``--driver sqlite3`` runs each call's reads and writes through the standard
library's ``sqlite3`` (:class:`~skrbal.online._sql._sqlite_store.SqliteStore`,
the store of a command-line call) instead of SQLAlchemy; commissioning and
resuming stay the store's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_COMMISSION = 500
BATCH = 1_000


def _stream(n: int, seed: int = 0, case: str = "synthetic"):
    """``n`` rows of the case's stream (repeated), with labels."""
    if case == "synthetic":
        from skrbal.datasets import make_degradation_stream

        X, y, _ = make_degradation_stream(random_state=seed)
    else:
        from skrbal.experiments import get_case_study

        split = get_case_study(case).split(random_state=seed)
        X, y = split.X_stream, split.y_stream
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    reps = -(-n // X.shape[0])
    rng = np.random.default_rng(seed)
    # Fresh noise on every repetition so no two rows repeat exactly.
    X = np.concatenate([X + rng.normal(0, 0.05, X.shape) for _ in range(reps)])[:n]
    return X, np.tile(y, reps)[:n]


def _process(case: str):
    from skrbal import synthetic_decision_process
    from skrbal.experiments import get_case_study

    if case == "synthetic":
        return synthetic_decision_process()
    return get_case_study(case).process()


# The store methods of a live call, which --driver sqlite3 routes to sqlite3.
LIVE_CALLS = (
    "lock_agent",
    "append_observe",
    "record_result",
    "record_cancel",
    "record_expire",
    "record_action",
    "record_skipped",
    "load_agent",
    "find_key",
)


def stdlib_store(path, synchronous="full"):
    """An AgentStore whose live calls go through sqlite3 (SqliteStore)."""
    from skrbal.online import AgentStore
    from skrbal.online._sql._sqlite_store import SqliteStore

    class StdlibCalls(AgentStore):
        def __init__(self):
            super().__init__(str(path), synchronous=synchronous)
            self.live = SqliteStore.open(path, synchronous=synchronous)
            for name in LIVE_CALLS:
                setattr(self, name, getattr(self.live, name))

        def close(self):
            self.live.close()
            super().close()

    return StdlibCalls()


def _agent(
    path: Path, X0, y0, synchronous="full", case="synthetic", driver=None, **params
):
    from skrbal.mixture import BayesianGMMClassifier
    from skrbal.online import AgentStore, RiskBasedAgent

    store = str(path)
    if driver == "sqlite3":
        # The file and the agent first (through the store), then its calls.
        AgentStore(path).close()
        store = stdlib_store(path, synchronous)
    elif synchronous != "full":
        store = AgentStore(f"sqlite:///{path}", synchronous=synchronous)
    agent = RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=_process(case),
        store=store,
        name="bench",
        **params,
    )
    return agent.fit(X0, y0)


def _bare(model, process, X):
    proba = process.align_proba(model.predict_proba(X), classes=model.classes_)
    return process.evpi(proba), process.optimal_action(proba)


def _paired(agent, X, size: int, rounds: int, clock=time.perf_counter, output=None):
    """Per-round times (agent, bare) on consecutive slices of ``size`` rows.

    ``output``: the agent's ``observe(output=...)`` (None: its default, a
    DataFrame).
    """
    kwargs = {} if output is None else {"output": output}
    model, process = agent.estimator_, agent.process
    times = np.empty((rounds, 2))
    for r in range(rounds):
        rows = X[r * size : (r + 1) * size]
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for side in order:
            start = clock()
            if side == 0:
                agent.observe(rows, **kwargs)
            else:
                _bare(model, process, rows)
            times[r, side] = clock() - start
    return times


def _summary(values) -> str:
    q = np.percentile(values, [0, 25, 50, 75, 100])
    return f"median {q[2]:.3g} (IQR {q[1]:.3g}-{q[3]:.3g}, range {q[0]:.3g}-{q[4]:.3g})"


def speed(
    rounds_batch: int,
    rounds_single: int,
    synchronous: str = "full",
    pending_value: str = "fantasy",
    clock: str = "wall",
    case: str = "synthetic",
    output: str | None = None,
    driver: str = "sqlalchemy",
) -> dict:
    X, y = _stream(N_COMMISSION + rounds_batch * BATCH + rounds_single + 10, case=case)
    X0, y0 = X[:N_COMMISSION], y[:N_COMMISSION]
    X = X[N_COMMISSION:]
    with tempfile.TemporaryDirectory() as tmp:
        # The open-request cap keeps the agent's buffers small; unanswered
        # requests are what a cap is for.
        agent = _agent(
            Path(tmp) / "agent.db",
            X0,
            y0,
            synchronous,
            case,
            driver=driver,
            max_open_requests=50,
            pending_value=pending_value,
        )
        agent.observe(X[:10])  # warm: the first commit creates the WAL
        timer = time.process_time if clock == "cpu" else time.perf_counter
        batch = _paired(agent, X[10:], BATCH, rounds_batch, timer, output)
        rest = X[10 + rounds_batch * BATCH :]
        single = _paired(agent, rest, 1, rounds_single, timer, output)
        store = agent.store_
        agent.close()
        if synchronous != "full" or driver == "sqlite3":
            store.close()  # given to the agent, not owned by it
    out = {}
    for name, times in (("batch of 1,000", batch), ("single observation", single)):
        ratio = times[:, 0] / times[:, 1]
        out[name] = {
            "agent_ms": float(np.median(times[:, 0]) * 1e3),
            "bare_ms": float(np.median(times[:, 1]) * 1e3),
            "ratio_median": float(np.median(ratio)),
        }
        print(f"{name}, {len(times)} paired rounds:")
        print(f"  agent.observe  ms: {_summary(times[:, 0] * 1e3)}")
        print(f"  bare           ms: {_summary(times[:, 1] * 1e3)}")
        print(f"  ratio agent/bare : {_summary(ratio)}")
    return out


def _rss_now() -> float:
    """Current resident set size in MiB (Linux /proc)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def memory_child(n_total: int, checkpoints: list[int], store: str) -> None:
    """Stream ``n_total`` observations; print RSS at each checkpoint (JSON)."""
    X, y = _stream(min(n_total, 120_000) + N_COMMISSION, seed=1)
    X0, y0 = X[:N_COMMISSION], y[:N_COMMISSION]
    Xs, ys = X[N_COMMISSION:], y[N_COMMISSION:]
    agent = _agent(Path(store), X0, y0, max_open_requests=20)
    pending = []  # requests answered one batch later: delayed results
    done, start = 0, time.perf_counter()
    while done < n_total:
        i = done % Xs.shape[0]
        rows = Xs[i : i + BATCH]
        decisions = agent.observe(rows)
        for request_id, row in pending:
            agent.record_inspection(request_id, ys[row])
        hits = np.flatnonzero(decisions["inspect"].to_numpy())
        ids = decisions["request_id"].to_numpy()
        pending = [(int(ids[k]), i + k) for k in hits]
        done += rows.shape[0]
        if done in checkpoints:
            print(
                json.dumps(
                    {
                        "observations": done,
                        "rss_mib": _rss_now(),
                        "peak_rss_mib": resource.getrusage(
                            resource.RUSAGE_SELF
                        ).ru_maxrss
                        / 1024,
                        "seconds": time.perf_counter() - start,
                        "labelled": int(sum(agent.status()["labelled"].values()))
                        if done == checkpoints[-1]
                        else None,
                    }
                ),
                flush=True,
            )
    agent.close()


def memory(n_total: int) -> list[dict]:
    checkpoints = sorted({min(c, n_total) for c in (100_000, 500_000, 1_000_000)})
    checkpoints = [c - c % BATCH for c in checkpoints]
    with tempfile.TemporaryDirectory() as tmp:
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); import bench_agent; "
            "bench_agent.memory_child(int(sys.argv[2]), "
            "[int(c) for c in sys.argv[3].split(',')], sys.argv[4])"
        )
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                str(Path(__file__).parent),
                str(n_total),
                ",".join(map(str, checkpoints)),
                str(Path(tmp) / "memory.db"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"memory child failed:\n{result.stderr}")
        size = (Path(tmp) / "memory.db").stat().st_size / 2**20
    rows = [json.loads(line) for line in result.stdout.splitlines() if line]
    print(f"memory, one agent, batches of {BATCH} (store file {size:.0f} MiB):")
    for row in rows:
        print(
            f"  {row['observations']:>9,} observations: RSS {row['rss_mib']:.1f} "
            f"MiB, peak {row['peak_rss_mib']:.1f} MiB, {row['seconds']:.0f} s"
        )
    if rows and rows[-1]["labelled"] is not None:
        print(f"  labelled set at the end: {rows[-1]['labelled']} steps")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="few rounds, 20,000 observations"
    )
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument(
        "--synchronous",
        choices=["full", "normal"],
        default="full",
        help="the store's sync: 'normal' takes the disk's sync out of the timing",
    )
    parser.add_argument(
        "--pending-value", choices=["fantasy", "ignore"], default="fantasy"
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="'cpu' times the process's CPU (no disk waits, less of the load)",
    )
    parser.add_argument("--rounds", type=int, default=None, help="batch rounds")
    parser.add_argument(
        "--case",
        choices=["synthetic", "z24"],
        default="synthetic",
        help="the stream and process of the speed studies",
    )
    parser.add_argument(
        "--output",
        choices=["frame", "arrays"],
        default=None,
        help="what observe returns (default: its default, a DataFrame)",
    )
    parser.add_argument(
        "--driver",
        choices=["sqlalchemy", "sqlite3"],
        default="sqlalchemy",
        help="the connection of each call's reads and writes",
    )
    args = parser.parse_args(argv)
    options = {
        "driver": args.driver,
        "output": args.output,
        "synchronous": args.synchronous,
        "pending_value": args.pending_value,
        "clock": args.clock,
        "case": args.case,
    }
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.quick:
        speed(rounds_batch=args.rounds or 5, rounds_single=21, **options)
        if not args.skip_memory:
            memory(20_000)
        return 0
    results = speed(rounds_batch=args.rounds or 51, rounds_single=501, **options)
    batch = results["batch of 1,000"]["ratio_median"]
    single = results["single observation"]["agent_ms"]
    print(
        f"target batch <= 3x bare: {'met' if batch <= 3 else 'MISSED'} ({batch:.2f}x)"
    )
    print(
        f"target single < 5 ms: {'met' if single < 5 else 'MISSED'} ({single:.2f} ms)"
    )
    if not args.skip_memory:
        memory(1_000_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
