"""Why a reversed statement hides damage on ``'z24-hard'`` (unseen_robust.md).

Healthy-only commissioning, EVPI rule, the first ``--repeats`` splits of
``bench_unseen.py``: per arm, the labels of the healthy "cold" state (state
2) learnt before the damage onset, the mean belief in that state over the
first 20 damaged steps, and the run's regret. Writes
``results/unseen_robust_state2_runs.csv`` and prints the medians.

Run (from the repository root)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/unseen_frost_labels.py --repeats 10
"""

from __future__ import annotations

import argparse
import warnings

import bench_unseen as bench
import numpy as np
import pandas as pd

ARMS = ("default", "z24-directed", "z24-directed-wrong", "z24-directed-wrong-w25")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    case = bench.case_study("z24-hard")
    process = case.process()
    rows = []
    for rep in range(args.repeats):
        seed = bench.seed_of(0, rep)
        split = case.split(random_state=seed)
        X, y = split.X_stream, split.y_stream
        initial = bench.initial_labels(split, "healthy-only", process, 50)
        onset = int(np.argmax(np.isin(y, bench.DAMAGED)))
        for name in ARMS:
            arm = bench.ARMS[name]
            estimator = arm.estimator(case)
            learner = bench._learner(arm, estimator, process, seed)
            run = bench.run_measures(learner, split, initial, process, estimator)
            queries = learner.history_.queries
            before = queries[(queries.step >= 0) & (queries.step < onset)]
            proba = bench.replay_beliefs(learner, estimator, X, y, initial, process)
            rows.append(
                {
                    "repetition": rep,
                    "arm": name,
                    "state2_labels_before_onset": int((before.label == 2).sum()),
                    "belief_state2_first20_damage": float(
                        proba[onset : onset + 20, 1].mean()
                    ),
                    "regret": run["regret"],
                }
            )
    runs = pd.DataFrame(rows)
    runs.to_csv(bench.RESULTS / "unseen_robust_state2_runs.csv", index=False)
    print(runs.groupby("arm", sort=False).median(numeric_only=True).to_string())


if __name__ == "__main__":
    main()
