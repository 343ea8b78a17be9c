"""One ``observe`` call must cost time linear in its rows (issue 21 §11).

The agent used to restart the budget scan after every request on the rest of
the call's rows, so a call with many requests grew quadratically (4x the rows
took 7.5x the time). The decision kernel now scans once, in chunks that
restart small after a request.

For each size (10^4, 10^5, 10^6 rows by default) a fresh child process
commissions an agent on the synthetic case's four states (one feature, the
state means of the paper's synthetic stream with standard deviation 2.5, a
``GaussianNB``, a SQLite store in a temporary folder, the process's cost
lowered to 1 so that about 1 % of the rows are requested) and times one
``observe`` of that many rows, best of ``--rounds``. With ``--before PATH``
the same runs use another checkout (e.g. ``git worktree add
/tmp/skrbal-before 7eb6b5a``), alternating.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_observe_scaling.py \\
        --before /tmp/skrbal-before
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time, warnings
from pathlib import Path
import numpy as np
from sklearn.naive_bayes import GaussianNB
from skrbal import synthetic_decision_process
from skrbal.online import RiskBasedAgent

n = int(sys.argv[1])
rng = np.random.default_rng(0)
y = rng.integers(1, 5, n + 500)
X = rng.normal(np.array([-5.0, -0.7, 5.8, 19.0])[y - 1], 2.5)[:, None]
process = synthetic_decision_process().set_params(inspection_cost=1.0)
warnings.simplefilter("ignore")
with tempfile.TemporaryDirectory() as folder:
    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=process, store=Path(folder) / "a.db"
    ).fit(X[:500], y[:500])
    start = time.perf_counter()
    decisions = agent.observe(X[500:])
    seconds = time.perf_counter() - start
    agent.close()
print(json.dumps({"seconds": seconds, "requests": int(decisions["inspect"].sum())}))
"""


def _run(checkout: Path, n: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout), "OPENBLAS_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(n)],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None)
    args = parser.parse_args(argv)
    checkouts = {"after": ROOT}
    if args.before is not None:
        checkouts["before"] = args.before.resolve()
    rows = []
    for n in args.sizes:
        best = {}
        for r in range(args.rounds):
            order = list(checkouts) if r % 2 == 0 else list(reversed(checkouts))
            for name in order:
                result = _run(checkouts[name], n)
                if name not in best or result["seconds"] < best[name]["seconds"]:
                    best[name] = result
        for name, result in best.items():
            rows.append({"checkout": name, "rows": n, **result})
            print(
                f"{name:>6}  {n:>9,} rows  {result['requests']:>6} requests  "
                f"{result['seconds']:8.2f} s  {n / result['seconds']:>10,.0f} rows/s",
                flush=True,
            )
    for name in checkouts:
        mine = [row for row in rows if row["checkout"] == name]
        for small, large in itertools.pairwise(mine):
            print(
                f"{name}: {large['rows'] // small['rows']}x the rows took "
                f"{large['seconds'] / small['seconds']:.1f}x the time"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
