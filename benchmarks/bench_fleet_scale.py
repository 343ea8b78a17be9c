"""A fleet replayed through its agents into PostgreSQL: throughput, memory, budget.

Run next to a throwaway PostgreSQL server::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. .ci/with-postgres \\
        .venv/bin/python benchmarks/bench_fleet_scale.py --structures 10 100 \\
        --hours 720 [--compare]

(``--url`` names another server; without either it runs on a SQLite file.)

1. **Scale.** N structures (``make_z24_like`` records, each its own seed,
   damage in the last 15 % of its record), each commissioned on three labelled
   observations per state (the paper's protocol) and then replaying ``--hours``
   hourly observations in blocks of ``--block`` (default 24: daily), every requested
   inspection answered at once with the true state, through
   :func:`skrbal.fleet.replay_fleet` into the store. Each arm runs in a fresh
   child process: **serial** (one process), and **Dask** (a ``LocalCluster`` of
   ``--workers`` worker processes, one thread each, reached by its scheduler
   address, one task and one writer per structure). Reported: observations per
   wall second and per CPU second of the replaying processes, the peak
   resident memory of each process that replayed (the serial process; each
   Dask worker), and whether the two stores hold the same agents (every
   agent's history, requests and events, wall-clock times aside). The model is
   ``GaussianNB``: the scale of the store and agents, not of a model's fit.
2. **One budget against caps** (``--compare``): the same fleet and total money
   either as one :class:`~skrbal.fleet.FleetBudget` of ``N x limit`` per period,
   or as ``CostThreshold() & SpendCap(limit)`` per structure; serially, same
   data. Reported per arm: total regret (acting on beliefs, or on the result
   at an inspected step) + spend, structures on which damage (state >= 3) was
   found by an inspection, and the largest spend of any period (fleet) or of
   any structure's period (caps) against its limit.

Timings on a shared machine are noisy: compare the two arms of one run, and
prefer observations per CPU second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np

SEED_BASE = 1000


def _fleet(n: int, hours: int, seed_base: int = SEED_BASE):
    from skrbal.datasets import make_z24_like
    from skrbal.fleet import Structure

    structures = []
    for i in range(n):
        total = hours + 200
        X, y, _ = make_z24_like(
            n_samples=total, damage_onset=int(0.85 * total), random_state=seed_base + i
        )
        labelled = np.concatenate([np.flatnonzero(y == c)[:3] for c in (1, 2, 3, 4)])
        structures.append(
            Structure(f"s{i:04d}", X[labelled], y[labelled], X[200:], y[200:])
        )
    return structures


def _schema_url(base: str) -> str:
    """A fresh schema of the server at ``base``, or a SQLite file."""
    if not base:
        return os.path.join(tempfile.mkdtemp(), "fleet.db")
    import sqlalchemy

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    engine = sqlalchemy.create_engine(
        base.replace("postgresql://", "postgresql+psycopg://", 1)
    )
    with engine.begin() as conn:
        conn.execute(sqlalchemy.text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}options=-csearch_path%3D{schema}"


def _warm_up() -> None:
    import sklearn.naive_bayes  # noqa: F401

    from skrbal.fleet import replay_fleet
    from skrbal.online import RiskBasedAgent

    del replay_fleet, RiskBasedAgent


def _arm(args) -> dict:
    """One replay, in this (child) process; its measures as a dict."""
    from sklearn.naive_bayes import GaussianNB

    from skrbal import z24_decision_process
    from skrbal.budget import CostThreshold
    from skrbal.fleet import replay_fleet

    structures = _fleet(args.n, args.hours)
    config = dict(
        estimator=GaussianNB(),
        process=z24_decision_process(),
        budget=CostThreshold(),
        block=args.block,
    )
    began, cpu = time.perf_counter(), time.process_time()
    if args.arm == "serial":
        summary = replay_fleet(args.store, structures, **config)
    else:
        import dask
        from distributed import Client, LocalCluster

        # Dask's statistical profiler keeps a call tree with source lines in
        # every worker: 2.7 MB more per replay task (tracemalloc, 30 tasks),
        # against 0.5 MB without it. A replay needs no profile.
        dask.config.set({"distributed.worker.profile.enabled": False})
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster:
            with Client(cluster) as client:
                # Imports happen once per worker, not in the measured replay.
                client.run(_warm_up)
            began, cpu = time.perf_counter(), time.process_time()
            summary = replay_fleet(
                args.store, structures, client=cluster.scheduler_address, **config
            )
            with Client(cluster) as client:
                client.close()
    wall = time.perf_counter() - began
    n_obs = int(summary["n_observations"].sum())
    task_cpu = float(summary["cpu_seconds"].sum())
    peaks = summary.groupby("process")["peak_memory_mb"].max().round(1).tolist()
    return {
        "arm": args.arm,
        "n_structures": args.n,
        "hours": args.hours,
        "block": args.block,
        "observations": n_obs,
        "wall_seconds": wall,
        "observations_per_second": n_obs / wall,
        "replay_cpu_seconds": task_cpu
        if args.arm == "dask"
        else time.process_time() - cpu,
        "observations_per_cpu_second": n_obs / max(task_cpu, 1e-9),
        "peak_memory_mb_per_worker": peaks,
        "n_inspections": int(summary["n_inspections"].sum()),
    }


def _same_agents(url_a: str, url_b: str, names) -> bool:
    from skrbal.online import AgentStore

    def contents(store, name):
        events = store.events(name).drop(columns=["created_at"])
        for payload in events["payload"]:
            if "agent" in payload:
                payload["agent"] = dict(payload["agent"], created_at=None)
        return (
            store.history(name).to_json(),
            store.requests(name).drop(columns=["result_timestamp"]).to_json(),
            events.to_json(),
        )

    with AgentStore(url_a) as a, AgentStore(url_b) as b:
        return all(contents(a, n) == contents(b, n) for n in names)


def _child(argv) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, *argv], capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"arm {argv} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _scale(args) -> list[dict]:
    rows = []
    for n in args.structures:
        urls = {}
        for arm in args.arms:
            urls[arm] = _schema_url(args.url)
            row = _child(
                [
                    "--arm",
                    arm,
                    "--n",
                    str(n),
                    "--hours",
                    str(args.hours),
                    "--store",
                    urls[arm],
                    "--workers",
                    str(args.workers),
                    "--block",
                    str(args.block),
                ]
            )
            rows.append(row)
            print(json.dumps(row), flush=True)
        if len(urls) < 2:
            continue
        names = [f"s{i:04d}" for i in range(n)]
        same = _same_agents(urls["serial"], urls["dask"], names)
        print(json.dumps({"n_structures": n, "serial_equals_dask": same}), flush=True)
        rows[-1]["serial_equals_dask"] = same
    return rows


# ---------------------------------------------------------------------- #
# one fleet budget against per-structure caps
# ---------------------------------------------------------------------- #
def _outcome(store, structures, process) -> dict:
    from skrbal.metrics import utility_regret

    regret = spend = 0.0
    found = 0
    classes = list(process.classes_)
    for s in structures:
        history = store.history(s.name)
        n0 = len(s.y_commission)
        observed = history[history["kind"] == "observation"]
        truth = s.y[: len(observed)]
        beliefs = observed[[f"belief_{c}" for c in classes]].to_numpy()
        inspected = observed["request_id"].notna().to_numpy()
        beliefs[inspected] = np.eye(len(classes))[
            [classes.index(t) for t in truth[inspected]]
        ]
        regret += utility_regret(truth, beliefs, process) * len(truth)
        status = store.status(s.name)
        spend += status["committed_spend"]
        steps = observed["step"].to_numpy()[inspected] - n0
        found += bool(np.any(truth[steps] >= 3)) if steps.size else 0
    return {
        "regret": regret,
        "spend": spend,
        "regret_plus_spend": regret + spend,
        "structures_with_damage_found": found,
    }


def _compare(args) -> list[dict]:
    rows = []
    for seed_base in args.seeds:
        rows += _compare_one(args, seed_base)
    return rows


def _compare_one(args, seed_base: int) -> list[dict]:
    from sklearn.naive_bayes import GaussianNB

    from skrbal import z24_decision_process
    from skrbal.budget import CostThreshold, SpendCap
    from skrbal.fleet import FleetBudget, FleetLedger, replay_fleet
    from skrbal.online import AgentStore

    process = z24_decision_process()
    n = args.compare_structures
    structures = _fleet(n, args.hours, seed_base)
    period, limit = 24.0 * 7, args.limit * process.inspection_cost
    # Step clock: a structure's steps are its hours (all start after commissioning).
    arms = {"fleet": FleetBudget(limit=n * limit, period=period)}
    arms["caps"] = CostThreshold() & SpendCap(limit=limit, period=period)
    arms = {arm: arms[arm] for arm in args.compare_arms}
    rows = []
    for arm, budget in arms.items():
        url = _schema_url(args.url)
        replay_fleet(
            url, structures, estimator=GaussianNB(), process=process, budget=budget
        )
        with AgentStore(url) as store:
            row = {
                "arm": arm,
                "seed_base": seed_base,
                "n_structures": n,
                **_outcome(store, structures, process),
            }
            by_period = {}
            worst = 0.0
            for s in structures:
                requests = store.requests(s.name)
                q = np.floor(requests["step"].to_numpy() / period)
                for k in np.unique(q):
                    amount = float(np.sum(q == k)) * process.inspection_cost
                    by_period[k] = by_period.get(k, 0.0) + amount
                    worst = max(worst, amount / limit)
            if arm.startswith("fleet"):
                FleetLedger(store).verify()
                worst = max(by_period.values()) / (n * limit) if by_period else 0.0
            row["largest_period_spend_over_limit"] = worst
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--structures", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--hours", type=int, default=720)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--block", type=int, default=24, help="observations per observe call"
    )
    parser.add_argument(
        "--arms",
        nargs="+",
        choices=["serial", "dask"],
        default=["serial", "dask"],
        help="the replays of the scale study (default: both)",
    )
    parser.add_argument("--url", default=os.environ.get("SKRBAL_TEST_POSTGRES_URL", ""))
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--compare-structures", type=int, default=10)
    parser.add_argument(
        "--limit",
        type=float,
        default=1.0,
        help="inspections per structure and week (compare)",
    )
    parser.add_argument(
        "--compare-arms",
        nargs="+",
        choices=["fleet", "caps"],
        default=["fleet", "caps"],
        help="the arms of the comparison (default: both; the caps arm does "
        "not depend on FleetBudget)",
    )
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[SEED_BASE],
        help="first seed of each compared fleet (default: 1000)",
    )
    # A child process's arm.
    parser.add_argument("--arm", choices=["serial", "dask"])
    parser.add_argument("--n", type=int)
    parser.add_argument("--store")
    args = parser.parse_args(argv)
    if args.arm:
        print(json.dumps(_arm(args)))
        return
    if not args.skip_scale:
        _scale(args)
    if args.compare:
        _compare(args)


if __name__ == "__main__":
    main()
