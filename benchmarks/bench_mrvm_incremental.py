"""Incremental mRVM learning of a new label against a cold refit (issue 14 §4).

The stream learner refits the mRVM after every inspection. With
``MulticlassRVC(warm_start=True)`` the fit starts from the previous solution
with the new sample's basis function added (mRVM1: the previous relevance
vectors and precisions; mRVM2: those plus the new sample, at the previous
auxiliary scores). This study replays, for each repetition of a case study,
the labelled sets of a run of the built-in (cold-refit) method in the order
they were labelled, and after each new label fits

- a cold model on the labelled set, as the built-in method does, and
- a warm model, refitted from its own previous fit (a chain of warm starts,
  as a stream learner with ``warm_start=True`` would run);

then compares the maintenance decisions the two models' beliefs lead to on
the held-out test set (``DecisionProcess.optimal_action``). Reported per case
and method: the refits compared, the share of held-out decisions that agree,
the share of refits whose decisions agree on at least 99 % of the test set,
the same two for a cold refit from another random start (the solver's own
spread: mRVM2 starts at random, mRVM1 is deterministic) and the median ratio
of warm to cold fit time (paired, refit by refit).

Run::

    .venv/bin/python benchmarks/bench_mrvm_incremental.py --repeats 5

BLAS runs single-threaded, as in the other benchmarks.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

AGREEMENT_TARGET = 0.99


def _replay(case, method_name, repetition, n_test):
    """Per refit: share of test decisions that agree, cold and warm fit times."""
    from skrbal._learning import clone_for
    from skrbal.active import RiskBasedLearner
    from skrbal.experiments import get_method, repetition_seed

    seed = repetition_seed(0, repetition)
    split = case.split(random_state=seed)
    process = case.process()
    estimator = clone_for(get_method(method_name).estimator(case), process)
    learner = RiskBasedLearner(estimator=estimator, process=process)
    learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)
    order = learner.labelled_indices_
    rng = np.random.default_rng(seed)
    test = rng.choice(len(split.X_test), min(n_test, len(split.X_test)), False)
    X_test = split.X_test[test]
    warm = clone(estimator).set_params(warm_start=True)
    rows = []
    for n_labelled in range(len(split.initial_indices), len(order) + 1):
        X = split.X_stream[order[:n_labelled]]
        y = split.y_stream[order[:n_labelled]]
        start = time.perf_counter()
        cold = clone(estimator).fit(X, y)
        cold_time = time.perf_counter() - start
        start = time.perf_counter()
        warm.fit(X, y)
        warm_time = time.perf_counter() - start
        # The solver's own spread: a cold refit from another random start
        # (mRVM2; mRVM1 is deterministic and agrees with itself).
        reseeded = clone(estimator).set_params(random_state=1).fit(X, y)
        actions = [
            process.optimal_action(model.predict_proba(X_test), classes=model.classes_)
            for model in (cold, warm, reseeded)
        ]
        rows.append(
            (
                np.mean(actions[0] == actions[1]),
                np.mean(actions[0] == actions[2]),
                cold_time,
                warm_time,
            )
        )
    return np.array(rows)


def run(cases, methods, repeats, n_test):
    """``{(case, method): (agreement warm, agreement reseeded, cold s, warm s)}``.

    One row per refit.
    """
    from skrbal.experiments import get_case_study

    results = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case_name in cases:
            case = get_case_study(case_name)
            for method in methods:
                results[case_name, method] = np.vstack(
                    [_replay(case, method, r, n_test) for r in range(repeats)]
                )
    return results


def report(results, repeats):
    lines = [
        f"# Warm-started against cold mRVM refits, {repeats} repetitions",
        "",
        "| case | method | refits | warm: decisions agreeing with cold "
        "| warm: refits with >= 99 % agreeing | cold, other seed: decisions "
        "agreeing | cold, other seed: refits with >= 99 % agreeing "
        "| warm / cold fit time (median) | cold fit (ms, median) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (case, method), rows in results.items():
        warm_agree, seed_agree, cold, warm = rows.T
        lines.append(
            f"| {case} | {method} | {len(rows)} | {warm_agree.mean():.4f} "
            f"| {np.mean(warm_agree >= AGREEMENT_TARGET):.3f} "
            f"| {seed_agree.mean():.4f} "
            f"| {np.mean(seed_agree >= AGREEMENT_TARGET):.3f} "
            f"| {np.median(warm / cold):.2f} | {1e3 * np.median(cold):.1f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=["synthetic", "z24"])
    parser.add_argument("--methods", nargs="+", default=["mrvm1-evpi", "mrvm2-evpi"])
    parser.add_argument("--n-test", type=int, default=2000)
    args = parser.parse_args(argv)
    results = run(args.cases, args.methods, args.repeats, args.n_test)
    print(report(results, args.repeats))
    return results


if __name__ == "__main__":
    main()
