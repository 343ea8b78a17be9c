"""What resuming an agent with a large forest costs, paired with one fit of it.

Run with::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_load_forest.py
    # other sizes: --trees 100 1000 --results 0 4 16 --repeats 3

Issue 27 point 13: a stored 10,000-tree forest cost 86-124 s per
``from_store``. A store holds configurations, not fitted models (loading
never unpickles), so ``from_store`` rebuilds the model by replaying the
campaign: the commissioning fit, then each recorded result. A model without
``partial_fit`` (a forest) is fitted again on the whole labelled set at each
result, so resuming costs about ``1 + n_results`` fits of the forest.

Here an agent (``RandomForestClassifier(n_estimators=T, random_state=0)``
on the synthetic stream's two features, commissioned on 200 labelled steps,
50 of each state)
records ``R`` results (true labels). Then, alternately, ``from_store`` and
one fit of the same forest on the commissioning rows are timed; reported:
their medians, and the ratio ``from_store / (1 + R) fits`` (about 1 when the
replay's fits are the cost). Wall-clock ratios of paired runs, so the
machine's load cancels.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

N_COMMISSION = 200


def _stream():
    """Commissioning rows (50 of each state first), then the rest in order."""
    from skrbal.datasets import make_degradation_stream

    X, y, _ = make_degradation_stream(random_state=0)
    per_state = N_COMMISSION // 4
    first = np.concatenate([np.flatnonzero(y == c)[:per_state] for c in np.unique(y)])
    order = np.concatenate([first, np.setdiff1d(np.arange(y.size), first)])
    return X[order], y[order]


def run(n_trees: int, n_results: int, repeats: int, folder: Path) -> dict:
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier

    from skrbal import synthetic_decision_process
    from skrbal.online import RiskBasedAgent

    X, y = _stream()
    forest = RandomForestClassifier(n_estimators=n_trees, random_state=0)
    path = folder / f"forest-{n_trees}-{n_results}.db"
    agent = RiskBasedAgent(
        estimator=forest,
        process=synthetic_decision_process(),
        store=str(path),
        name="forest",
    ).fit(X[:N_COMMISSION], y[:N_COMMISSION])
    step = N_COMMISSION
    for _ in range(n_results):  # one labelled step per result
        agent.observe(X[step : step + 1])
        agent.record_label(step, y[step])
        step += 1
    agent.close()
    times = {"resume": [], "fit": []}
    for r in range(repeats):
        order = ("resume", "fit") if r % 2 == 0 else ("fit", "resume")
        for task in order:
            start = time.perf_counter()
            if task == "resume":
                RiskBasedAgent.from_store(str(path), name="forest").close()
            else:
                clone(forest).fit(X[:N_COMMISSION], y[:N_COMMISSION])
            times[task].append(time.perf_counter() - start)
    resume, fit = (statistics.median(times[k]) for k in ("resume", "fit"))
    return {
        "trees": n_trees,
        "results": n_results,
        "resume_s": resume,
        "fit_s": fit,
        "ratio": resume / ((1 + n_results) * fit),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--results", type=int, nargs="+", default=[0, 4, 16])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print("trees  results  resume_s  one_fit_s  resume/((1+results) fits)")
    with tempfile.TemporaryDirectory() as folder:
        for n_trees in args.trees:
            for n_results in args.results:
                r = run(n_trees, n_results, args.repeats, Path(folder))
                print(
                    f"{r['trees']:>5}  {r['results']:>7}  {r['resume_s']:>8.2f}  "
                    f"{r['fit_s']:>9.3f}  {r['ratio']:>6.2f}"
                )


if __name__ == "__main__":
    main()
