"""Semi-supervised remedies against plain risk-based learning (issue 5 study).

On the synthetic stream with the synthetic decision process, over many
repetitions: mean number of inspections of GMM, GMM+EM and GMM+smoothing, the
effective class proportions at the end, and median decision accuracy and
macro-F1 against the number of queries. ``gmm-em-warm`` is the EM remedy with
``em_start='previous'`` (each refit warm-started from the previous solution),
the peer of the default restart from the labelled data: it shows the runaway
runs a locked-out class causes.

Run::

    .venv/bin/python benchmarks/bench_semi_supervised.py --repeats 50 --n-jobs 2

It writes ``benchmarks/results/semi_supervised.md`` and
``benchmarks/results/semi_supervised.png``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

RUNAWAY = 50  # inspections beyond which a run counts as a runaway
RESULTS = Path(__file__).parent / "results"


def summarise(study) -> str:
    """Markdown tables of inspections, final proportions and scores."""
    import pandas as pd

    totals = study.totals.groupby("method", sort=False)
    last = study.queries.groupby(["method", "repetition"], sort=False).tail(1)
    labelled = last.filter(regex=r"^proportion_").groupby(last["method"]).mean()
    effective = (
        last.filter(regex=r"^effective_proportion_").groupby(last["method"]).mean()
    )
    table = pd.DataFrame(
        {
            "inspections (median)": totals["n_inspections"].median(),
            "inspections (mean)": totals["n_inspections"].mean(),
            "inspections (sd)": totals["n_inspections"].std(ddof=0),
            "inspections (max)": totals["n_inspections"].max(),
            f"runs over {RUNAWAY}": totals["n_inspections"].apply(
                lambda n: (n > RUNAWAY).sum()
            ),
            "decision acc. (median)": totals["final_decision_accuracy"].median(),
            "macro F1 (median)": totals["final_f1_macro"].median(),
            "regret (mean)": totals["regret"].mean(),
        }
    )
    lines = ["| method | " + " | ".join(table.columns) + " |"]
    lines.append("|---" * (len(table.columns) + 1) + "|")
    for method, row in table.iterrows():
        lines.append(f"| {method} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    lines += ["", "Final class proportions (mean over runs): labelled set"]
    lines.append(labelled.round(3).to_string())
    lines += ["", "effective (labelled + pseudo-labelled / EM transduction)"]
    lines.append(effective.round(3).to_string())
    return "\n".join(lines)


def main(argv=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skrbal.experiments import Method, run_study
    from skrbal.mixture import BayesianGMMClassifier
    from skrbal.plotting import QueryCurveDisplay

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    warm = Method(
        "gmm-em-warm",
        BayesianGMMClassifier,
        learner_params={"semi_supervised": "em", "em_start": "previous"},
    )
    methods = ["gmm-evpi", "gmm-em", warm, "gmm-smoothing"]
    study = run_study(
        "synthetic", methods, args.repeats, seed=args.seed, n_jobs=args.n_jobs
    )
    elapsed = time.perf_counter() - start
    text = summarise(study)
    header = (
        f"# Semi-supervised remedies, synthetic case, {args.repeats} repetitions "
        f"(seed {args.seed}, {elapsed:.0f} s on {args.n_jobs} workers)\n\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "semi_supervised.md").write_text(header + text + "\n")
    print(header + text)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for ax, metric in zip(axes, ["decision_accuracy", "f1_macro"]):
        QueryCurveDisplay.from_study(study, metric, ax=ax, max_queries=30)
    fig.savefig(RESULTS / "semi_supervised.png", dpi=110)


if __name__ == "__main__":
    main()
