"""Resuming an agent (``from_store``) and reading its status, after one big call.

Run with::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_agent_resume.py
    # fewer rows: --sizes 1000 40000; another checkout: PYTHONPATH=/other/tree

An agent (``GaussianNB`` on one feature, commissioned on 8 labelled steps,
the paper's cost rule) observes a stream of ``n`` rows in **one** ``observe``
call with timestamps, so its store holds one block of ``n`` steps. The
inspection cost is the EVPI quantile that makes about 0.15 % of the rows
requests (about 1,500 requests in 1,000,000 rows; every request stays open,
the worst case for reading beliefs and timestamps back). Then, each in a
fresh child process, three times:

- ``import``: importing skrbal.online and scikit-learn only (the floor);
- ``resume``: ``RiskBasedAgent.from_store`` (model replayed, open requests
  with their beliefs);
- ``status``: ``AgentStore(path).status(name)`` (open requests with their
  timestamps).

Reported per size and task: the child's peak resident set (``ru_maxrss``)
and its wall time for the task, medians of three runs. Target: resume and
status after 1,000,000 rows in the same order of memory as after 1,000.
A child runs under an address-space limit (``--limit-gb``), so code that
reads a block once per request fails with ``MemoryError`` instead of taking
the machine down; that is reported as such.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SHARE = 0.0015


def _data(n: int):
    rng = np.random.default_rng(0)
    X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
    y0 = np.array([1, 2, 3, 4] * 2)
    return X0, y0, rng.normal(0.0, 8.0, size=(n, 1))


def build(path: Path, n: int) -> dict:
    """A store with one agent after one ``observe`` of ``n`` rows."""
    from sklearn.naive_bayes import GaussianNB

    from skrbal import synthetic_decision_process
    from skrbal.online import RiskBasedAgent

    X0, y0, X = _data(n)
    process = synthetic_decision_process()
    model = GaussianNB().fit(X0, y0)
    evpi = process.evpi(process.align_proba(model.predict_proba(X), model.classes_))
    cost = float(np.quantile(evpi, 1 - SHARE))
    stamps = np.arange(X0.shape[0] + n, dtype=float)
    start = time.perf_counter()
    with RiskBasedAgent(
        estimator=GaussianNB(),
        process=process.set_params(inspection_cost=cost),
        store=path,
        name="bench",
    ).fit(X0, y0, timestamps=stamps[:8]) as agent:
        decisions = agent.observe(X, timestamps=stamps[8:])
    return {
        "rows": n,
        "requests": int(decisions["inspect"].sum()),
        "observe_s": time.perf_counter() - start,
        "store_mb": path.stat().st_size / 1e6,
    }


def child(task: str, path: str, limit_gb: float) -> None:
    """One task in this (fresh) process; prints a JSON line."""
    import resource

    if task.startswith("build-"):
        print(json.dumps(build(Path(path), int(task[6:]))))
        return

    limit = int(limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from sklearn.naive_bayes import GaussianNB  # noqa: F401

    from skrbal.online import AgentStore, RiskBasedAgent

    start = time.perf_counter()
    outcome = "ok"
    try:
        if task == "resume":
            RiskBasedAgent.from_store(path, "bench").close()
        elif task == "status":
            with AgentStore(path) as store:
                store.status("bench")
    except MemoryError:
        outcome = "MemoryError"
    wall = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mb": peak_kb / 1024, "wall_s": wall, "outcome": outcome}))


def _run_child(task: str, path: Path, limit_gb: float) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", task, str(path), str(limit_gb)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(path: Path, task: str, repeats: int, limit_gb: float) -> dict:
    runs = [_run_child(task, path, limit_gb) for _ in range(repeats)]
    failed = [r["outcome"] for r in runs if r["outcome"] != "ok"]
    return {
        "peak_mb": statistics.median(r["peak_mb"] for r in runs),
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "outcome": failed[0] if failed else "ok",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit-gb", type=float, default=4.0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], float(args.child[2]))
        return
    lines = [
        "| rows | requests | store MB | task | peak RSS MB | wall s |",
        "|---:|---:|---:|---|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            path = Path(folder) / f"agent_{n}.db"
            # Built in a child too: Linux keeps a process's peak RSS across
            # exec, so a big parent would inflate every child's ru_maxrss.
            info = _run_child(f"build-{n}", path, args.limit_gb)
            for task in ("import", "resume", "status"):
                m = measure(path, task, args.repeats, args.limit_gb)
                wall = f"{m['wall_s']:.3f}"
                if m["outcome"] != "ok":
                    wall += f" ({m['outcome']})"
                lines.append(
                    f"| {n:,} | {info['requests']:,} | {info['store_mb']:.1f} | "
                    f"{task} | {m['peak_mb']:.0f} | {wall} |"
                )
            print(f"built {n:,} rows: observe took {info['observe_s']:.1f} s")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
