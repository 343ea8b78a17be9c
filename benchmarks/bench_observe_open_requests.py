"""Cost of a one-row ``observe`` after many open requests, paired with a fresh agent.

Run with::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_observe_open_requests.py
    # fewer sizes: --sizes 100 10000; more calls per agent: --calls 9
    # CPU time instead of wall-clock (no disk waits): --clock cpu

Issue 27 point 13: with 58,698 open requests (after a 10^6-row observe with no
cap and no timeout) one-row ``observe`` took 108-150 s. Here an agent
(``GaussianNB`` on one feature, commissioned on 8 labelled steps, the
paper's cost rule with an inspection cost so low that nearly every
ambiguous row is requested, no cap, no timeout, pending requests valued as
``--pending-value`` says (the agent's default, ``fantasy``), a SQLite
store) observes ``n`` rows in one call, most of which open a request that
stays open. Then one-row
``observe`` calls alternate between it and a *fresh* agent of the same
configuration (same commissioning, no open request) in the same store
folder: the median time of each, and their ratio (goal: within 2x at every
size). Wall-clock ratios of paired calls, so the machine's load cancels.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def _agent(path: Path, name: str, pending_value: str):
    from sklearn.naive_bayes import GaussianNB

    from skrbal import synthetic_decision_process
    from skrbal.online import RiskBasedAgent

    X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
    y0 = np.array([1, 2, 3, 4] * 2)
    return RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process().set_params(inspection_cost=1e-300),
        pending_value=pending_value,
        store=str(path),
        name=name,
    ).fit(X0, y0)


def run(
    n: int, calls: int, folder: Path, pending_value: str, clock=time.perf_counter
) -> dict:
    busy = _agent(folder / "busy.db", "busy", pending_value)
    fresh = _agent(folder / "fresh.db", "fresh", pending_value)
    start = time.perf_counter()
    # Rows where states 3 and 4 overlap, spread: nearly every one is worth
    # inspecting, even valued with the pending results ('fantasy').
    rows = np.random.default_rng(0).uniform(11.5, 13.5, size=(n, 1))
    made = busy.observe(rows)
    build = time.perf_counter() - start
    n_open = busy.status()["n_open"]
    assert n_open == int(made["inspect"].sum())
    times = {"busy": [], "fresh": []}
    rows = np.linspace(11.0, 13.0, calls)[:, None]
    for row in rows:
        for name, agent in (("busy", busy), ("fresh", fresh)):
            start = clock()
            agent.observe(row[None, :])
            times[name].append(clock() - start)
    busy.close()
    fresh.close()
    busy_s, fresh_s = (statistics.median(times[k]) for k in ("busy", "fresh"))
    return {
        "n_rows": n,
        "n_open": n_open,
        "build_s": build,
        "busy_ms": 1e3 * busy_s,
        "fresh_ms": 1e3 * fresh_s,
        "ratio": busy_s / fresh_s,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000, 100_000])
    parser.add_argument("--calls", type=int, default=7)
    parser.add_argument(
        "--pending-value", choices=["fantasy", "ignore"], default="fantasy"
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="'cpu' times the process's CPU (no disk waits, less of the load)",
    )
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"pending_value={args.pending_value}, clock={args.clock}")
    print("n_rows  n_open  build_s  busy_ms  fresh_ms  ratio")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            r = run(n, args.calls, Path(folder), args.pending_value, clock)
        print(
            f"{r['n_rows']:>6}  {r['n_open']:>6}  {r['build_s']:>7.1f}  "
            f"{r['busy_ms']:>7.1f}  {r['fresh_ms']:>8.1f}  {r['ratio']:>5.2f}"
        )


if __name__ == "__main__":
    main()
