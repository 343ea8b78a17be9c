"""Per-inspection overhead of the stream learner (issue 14, section 3).

A :class:`~skrbal.active.RiskBasedLearner` with the Bayesian GMM walks the
synthetic stream and inspects ``--inspections`` random steps. The peer in the
same run is the model's own work: every ``fit``, ``partial_fit`` and
``predict_proba`` call of the estimator is timed, and the learner's overhead
is the rest of the wall time, per inspection. Each round times one fit;
rounds are repeated and reported as median and interquartile range.

Run (with the code under test first on the path)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python \\
        benchmarks/bench_stream_overhead.py --rounds 7 --inspections 3000

It prints a Markdown table; ``--out FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import ClassVar

import numpy as np

from skrbal import synthetic_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_degradation_stream
from skrbal.mixture import BayesianGMMClassifier


class TimedGMM(BayesianGMMClassifier):
    """The Bayesian GMM, adding the time of each of its calls to ``spent``."""

    spent: ClassVar[list] = [0.0]

    def _timed(self, method, *args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            TimedGMM.spent[0] += time.perf_counter() - start

    def fit(self, X, y, sample_weight=None):
        return self._timed(super().fit, X, y, sample_weight=sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        return self._timed(
            super().partial_fit, X, y, classes=classes, sample_weight=sample_weight
        )

    def predict_proba(self, X):
        return self._timed(super().predict_proba, X)


def one_round(X, y, initial, n_inspections, seed):
    """Wall time, model time and number of inspections of one learner fit."""
    learner = RiskBasedLearner(
        estimator=TimedGMM(),
        process=synthetic_decision_process(),
        query="random",
        n_queries=n_inspections,
        random_state=seed,
    )
    TimedGMM.spent[0] = 0.0
    start = time.perf_counter()
    learner.fit(X, y, initial=initial)
    wall = time.perf_counter() - start
    return wall, TimedGMM.spent[0], learner.history_.totals["n_inspections"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inspections", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    X, y, _ = make_degradation_stream(random_state=0)
    initial = np.arange(0, len(y), 500)
    one_round(X, y, initial, 50, 0)  # warm-up: imports, caches
    rows = []
    for seed in range(args.rounds):
        wall, model, n = one_round(X, y, initial, args.inspections, seed)
        rows.append((wall / n * 1e3, model / n * 1e3, (wall - model) / n * 1e3))
    per = np.array(rows)
    q = np.percentile(per, [25, 50, 75], axis=0)
    lines = [
        f"Stream learner, synthetic stream ({len(y)} steps), {args.inspections} "
        f"random inspections, {args.rounds} rounds; ms per inspection, median "
        "[IQR]",
        "",
        "| total | model (fit, partial_fit, predict_proba) | learner overhead "
        "| overhead / model |",
        "|---|---|---|---|",
        "| "
        + " | ".join(f"{q[1, k]:.3f} [{q[0, k]:.3f}, {q[2, k]:.3f}]" for k in range(3))
        + f" | {np.median(per[:, 2] / per[:, 1]):.2f} |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
