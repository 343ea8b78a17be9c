"""MulticlassRVC from a handful of labels of the synthetic degradation stream.

Issue 14 §5: from 10 labels on raw features, mRVM2 with the paper's width
``gamma = 1/D`` discriminated poorly when its auxiliary class scores started at
zero. This draws ``--sets`` labelled sets of ``--labels`` samples (each holding
all four health states) from ``make_degradation_stream(random_state=0)``,
outside a held-out test set of 3000 samples, and reports per method and width
the mean and median test accuracy, the mean number of relevance vectors and
the share of fits that discriminate their training classes
(``discriminates_``, when the installed version has it).

Run::

    .venv/bin/python benchmarks/bench_rvm_few_labels.py --labels 10 --sets 30

Works against older versions of skrbal too (no ``random_state``: the fit is
then deterministic), which is how the before/after numbers were measured.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from skrbal.datasets import make_degradation_stream
from skrbal.rvm import MulticlassRVC

WIDTHS = (None, 0.05)


def labelled_sets(y, pool, n_labels, n_sets, seed=7):
    """``n_sets`` random subsets of ``pool`` of size ``n_labels``, all classes in."""
    rng = np.random.default_rng(seed)
    n_classes = np.unique(y).size
    sets = []
    while len(sets) < n_sets:
        chosen = rng.choice(pool, n_labels, replace=False)
        if np.unique(y[chosen]).size == n_classes:
            sets.append(chosen)
    return sets


def run(n_labels, n_sets, methods=("mrvm1", "mrvm2")):
    X, y, _ = make_degradation_stream(random_state=0)
    rng = np.random.default_rng(0)
    test = rng.choice(len(X), 3000, replace=False)
    pool = np.setdiff1d(np.arange(len(X)), test)
    seeded = "random_state" in MulticlassRVC().get_params()
    rows = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, chosen in enumerate(labelled_sets(y, pool, n_labels, n_sets)):
            for method in methods:
                for gamma in WIDTHS:
                    params = {"method": method, "gamma": gamma}
                    if seeded:
                        params["random_state"] = k
                    model = MulticlassRVC(**params).fit(X[chosen], y[chosen])
                    rows.setdefault((method, gamma), []).append(
                        (
                            model.score(X[test], y[test]),
                            len(model.relevance_indices_),
                            getattr(model, "discriminates_", np.nan),
                        )
                    )
    return {key: np.array(value, dtype=float) for key, value in rows.items()}


def report(results, n_labels, n_sets):
    lines = [
        f"# {n_labels} labels, {n_sets} sets, raw features",
        "",
        "| method | gamma | test accuracy mean | median | relevance vectors "
        "| fits that discriminate |",
        "|---|---|---|---|---|---|",
    ]
    for (method, gamma), rows in results.items():
        width = "1/D" if gamma is None else f"{gamma:g}"
        known = ~np.isnan(rows[:, 2])
        share = f"{rows[known, 2].mean():.2f}" if known.any() else "n/a"
        lines.append(
            f"| {method} | {width} | {rows[:, 0].mean():.3f} "
            f"| {np.median(rows[:, 0]):.3f} | {rows[:, 1].mean():.1f} "
            f"| {share} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=int, default=10)
    parser.add_argument("--sets", type=int, default=30)
    args = parser.parse_args(argv)
    results = run(args.labels, args.sets)
    print(report(results, args.labels, args.sets))
    return results


if __name__ == "__main__":
    main()
