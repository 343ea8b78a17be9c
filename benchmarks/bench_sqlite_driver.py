"""The SQLite file store through sqlite3 against through SQLAlchemy (issue 28.25).

Run with::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_sqlite_driver.py

Two paired studies, CPU time only (the machine's load moves wall time):

1. **Import.** Fresh interpreters, in alternating order each round, each
   importing one of: nothing (``pass``), the store of a live call through
   ``sqlite3`` (``skrbal.online._sql._sqlite_store``), the store through
   SQLAlchemy (``skrbal.online._sql._store``). Reported: each one's child
   CPU seconds over ``pass``, median and quartiles.
2. **Call.** Two agents of the same commissioning on two files, one whose
   calls go through ``sqlite3``, one through SQLAlchemy; in each round both
   observe the same new rows (``--rows``: one, or a batch of 1,000 as in
   ``bench_agent.py``), in alternating order. Reported:
   the CPU of each call (whole ``observe``: model, EVPI, budget, write),
   median and quartiles, and the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_agent import _agent, _stream

IMPORTS = {
    "pass": "pass",
    "sqlite3 store": "import skrbal.online._sql._sqlite_store",
    "SQLAlchemy store": "import skrbal.online._sql._store",
}


def _child_cpu(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _quartiles(values) -> str:
    q = np.percentile(values, [25, 50, 75])
    return f"median {q[1]:.4g} [IQR {q[0]:.4g}, {q[2]:.4g}]"


def imports(rounds: int) -> dict:
    names = list(IMPORTS)
    cpu = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            cpu[name].append(_child_cpu(IMPORTS[name]))
    base = np.array(cpu["pass"])
    print(f"import, {rounds} paired rounds, child CPU s over `python -c pass`:")
    out = {}
    for name in names[1:]:
        extra = np.array(cpu[name]) - base
        out[name] = float(np.median(extra))
        print(f"  {name:17s} {_quartiles(extra)}")
    print(f"  (`pass` itself   {_quartiles(base)})")
    return out


def calls(rounds: int, synchronous: str, pending_value: str, size: int = 1) -> dict:
    X, y = _stream(500 + rounds * size + 10)
    X0, y0, X = X[:500], y[:500], X[500:]
    times = np.empty((rounds, 2))
    with tempfile.TemporaryDirectory() as tmp:
        agents = [
            _agent(
                Path(tmp) / f"{driver}.db",
                X0,
                y0,
                synchronous,
                driver=driver,
                max_open_requests=50,
                pending_value=pending_value,
            )
            for driver in ("sqlite3", "sqlalchemy")
        ]
        for agent in agents:
            agent.observe(X[:5], output="arrays")  # warm: the WAL, the caches
        for r in range(rounds):
            row = X[5 + r * size : 5 + (r + 1) * size]
            for side in (0, 1) if r % 2 == 0 else (1, 0):
                start = time.process_time()
                agents[side].observe(row, output="arrays")
                times[r, side] = time.process_time() - start
        stores = [agent.store_ for agent in agents]
        for agent in agents:
            agent.close()
        stores[0].close()  # given to the agent
    ratio = times[:, 0] / times[:, 1]
    print(
        f"observe of {size} row(s), {rounds} paired rounds, synchronous={synchronous}, "
        f"pending_value={pending_value}, CPU ms per call:"
    )
    print(f"  through sqlite3    {_quartiles(times[:, 0] * 1e3)}")
    print(f"  through SQLAlchemy {_quartiles(times[:, 1] * 1e3)}")
    print(f"  ratio sqlite3/SQLAlchemy per round: {_quartiles(ratio)}")
    return {"ratio_median": float(np.median(ratio))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--import-rounds", type=int, default=11)
    parser.add_argument("--call-rounds", type=int, default=201)
    parser.add_argument("--rows", type=int, default=1, help="rows per call")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--synchronous", choices=["full", "normal"], default="full")
    parser.add_argument(
        "--pending-value", choices=["fantasy", "ignore"], default="ignore"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if not args.skip_import:
        imports(args.import_rounds)
    calls(args.call_rounds, args.synchronous, args.pending_value, args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
