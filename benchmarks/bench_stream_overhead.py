"""Per-inspection overhead of the stream learner (issue 14, section 3).

A :class:`~skrbal.active.RiskBasedLearner` with the Bayesian GMM walks the
synthetic stream and inspects ``--inspections`` random steps. The peer in the
same run is the model's own work: its updates (every ``fit`` and
``partial_fit`` call) and its beliefs (the maths of every ``predict_proba``:
the joint log likelihood and its normalisation) are timed, and the learner's
overhead is the rest of the wall time, per inspection: the input validation
of the model's predictions included, as issue 14 section 3 counts it.
Each round times one fit; rounds are repeated and reported as median and
interquartile range.

Memory: with ``--memory`` it also fits once per ``history`` option on a
stream tiled to ``--memory-steps`` steps under :mod:`tracemalloc`, and
reports bytes per stream step: the peak during the fit and what the fitted
learner keeps (its ``history_``), both beyond the stream itself.

Run (with the code under test first on the path)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python \\
        benchmarks/bench_stream_overhead.py --rounds 7 --inspections 3000 --memory

It prints a Markdown table; ``--out FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np

from skrbal import synthetic_decision_process
from skrbal._logspace import exp_normalise
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_degradation_stream
from skrbal.mixture import BayesianGMMClassifier


class TimedGMM(BayesianGMMClassifier):
    """The Bayesian GMM, timing its updates and beliefs.

    ``spent[0]`` adds up ``fit`` and ``partial_fit``, ``spent[1]`` the maths
    of ``predict_proba`` (joint log likelihood and its normalisation), not
    its input validation.
    """

    spent: ClassVar[list] = [0.0, 0.0]

    def _timed(self, slot, method, *args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            TimedGMM.spent[slot] += time.perf_counter() - start

    def fit(self, X, y, sample_weight=None):
        return self._timed(0, super().fit, X, y, sample_weight=sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        return self._timed(
            0, super().partial_fit, X, y, classes=classes, sample_weight=sample_weight
        )

    def predict_proba(self, X):
        # Input validation is not timed: it is overhead (issue 14 section 3).
        X = self._check_X(X)
        return self._timed(1, self._proba, X)

    def _proba(self, X):
        return exp_normalise(self._joint_log_likelihood(X), axis=1)


def _learner(n_inspections, seed, **params):
    return RiskBasedLearner(
        estimator=TimedGMM(),
        process=synthetic_decision_process(),
        strategy="random",
        n_queries=n_inspections,
        random_state=seed,
        **params,
    )


def one_round(X, y, initial, n_inspections, seed):
    """Wall time, update time, belief time and inspections of one learner fit."""
    learner = _learner(n_inspections, seed)
    TimedGMM.spent[:] = [0.0, 0.0]
    start = time.perf_counter()
    learner.fit(X, y, initial=initial)
    wall = time.perf_counter() - start
    update, beliefs = TimedGMM.spent
    return wall, update, beliefs, learner.history_.totals["n_inspections"]


def memory_per_step(X, y, n_steps, history):
    """Peak and kept bytes per step of one fit on the stream tiled to n_steps."""
    reps = -(-n_steps // len(y))
    X_long, y_long = np.tile(X, (reps, 1))[:n_steps], np.tile(y, reps)[:n_steps]
    initial = np.arange(0, n_steps, 500)
    # history='full' is the default, so the run also works on older code.
    learner = _learner(100, 0, **({} if history == "full" else {"history": history}))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    learner.fit(X_long, y_long, initial=initial)
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (peak - base) / n_steps, (kept - base) / n_steps


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inspections", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--memory-steps", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    # The paper's prior on the raw synthetic features, as the studies use it.
    warnings.filterwarnings("ignore", message=".*default prior")

    X, y, _ = make_degradation_stream(random_state=0)
    initial = np.arange(0, len(y), 500)
    one_round(X, y, initial, 50, 0)  # warm-up: imports, caches
    rows = []
    for seed in range(args.rounds):
        wall, update, beliefs, n = one_round(X, y, initial, args.inspections, seed)
        rows.append(
            np.array([wall, update, beliefs, wall - update - beliefs]) / n * 1e3
        )
    per = np.array(rows)
    q = np.percentile(per, [25, 50, 75], axis=0)
    lines = [
        f"Stream learner, synthetic stream ({len(y)} steps), {args.inspections} "
        f"random inspections, {args.rounds} rounds; ms per inspection, median "
        "[IQR]",
        "",
        "| total | model update (fit, partial_fit) | model beliefs (predict_proba "
        "maths) | learner overhead | overhead / update |",
        "|---|---|---|---|---|",
        "| "
        + " | ".join(f"{q[1, k]:.3f} [{q[0, k]:.3f}, {q[2, k]:.3f}]" for k in range(4))
        + f" | {np.median(per[:, 3] / per[:, 1]):.2f} |",
    ]
    if args.memory:
        lines += [
            "",
            f"Memory per stream step ({args.memory_steps} steps, 100 random "
            "inspections; tracemalloc, bytes beyond the stream itself)",
            "",
            "| history | peak during fit | kept by the fitted learner |",
            "|---|---|---|",
        ]
        histories = ["full"]
        if "history" in RiskBasedLearner._get_param_names():
            histories.append("queries")
        for history in histories:
            peak, kept = memory_per_step(X, y, args.memory_steps, history)
            lines.append(f"| {history} | {peak:.1f} | {kept:.1f} |")
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
