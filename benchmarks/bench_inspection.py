"""Imperfect inspections: is a choice between two methods worth more than either?

On the synthetic and the Z24-like case studies (the paper's processes and
protocol: one record, the split and the initial labelled set redrawn per
repetition), a stream learner with a Bayesian GMM inspects with

- ``perfect``: the paper's perfect inspection at the paper's cost (7 and 30);
- ``cheap``: 20 % of that cost, detecting damage (states 3 and 4) with
  probability ``--detection`` (0.85) and calling damage in an undamaged
  state (1 and 2) with probability ``--false-call`` (0.04);
- ``both``: both methods, chosen per step by
  :func:`skrbal.inspection.choose_inspection` (largest EVSI - cost, inspect
  when positive);
- ``random``: as many inspections with each method as ``both`` made in the
  same repetition (the same spend), at random stream positions.

Every policy of a repetition sees the same split and the same seed for the
report draws. Per policy it reports, median [IQR] over repetitions: the
regret of the stream's decisions against perfect information, the stream's
decision accuracy, the spend per method and the total loss (regret + spend,
the quantity the EVSI rule trades off), and, paired per repetition, the
difference in total loss between ``both`` and every other policy.

Run (2 workers, BLAS single-threaded; about two minutes)::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 .venv/bin/python \\
        benchmarks/bench_inspection.py \\
        --repeats 200 --n-jobs 2 --output benchmarks/results/inspection.md

Importing this module does no work.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings

import numpy as np

POLICIES = ("perfect", "cheap", "both", "random")
CASES = ("synthetic", "z24")


def methods_for(process, detection: float, false_call: float, cost_share: float):
    """The perfect method at the process's cost and the cheap one."""
    from skrbal.inspection import InspectionMethod, perfect_inspection

    undamaged = [1.0 - false_call, false_call]
    damaged = [1.0 - detection, detection]
    cheap = InspectionMethod(
        name="cheap",
        cost=cost_share * float(process.inspection_cost),
        confusion=[undamaged, undamaged, damaged, damaged],
        outcomes=["no damage found", "damage found"],
    )
    return perfect_inspection(process), cheap


def one_repetition(case_name: str, rep: int, settings: dict) -> list[dict]:
    """Every policy on repetition ``rep`` of a case: one row per policy."""
    from sklearn.exceptions import ConvergenceWarning

    from skrbal.active import RiskBasedLearner
    from skrbal.experiments import get_case_study
    from skrbal.metrics import decision_accuracy
    from skrbal.mixture import BayesianGMMClassifier

    warnings.simplefilter("ignore", ConvergenceWarning)
    case = get_case_study(case_name)
    process = case.process()
    perfect, cheap = methods_for(process, **settings)
    split = case.split(random_state=rep)
    runs = {}
    for name, inspections in (
        ("perfect", [perfect]),
        ("cheap", [cheap]),
        ("both", [perfect, cheap]),
    ):
        runs[name] = RiskBasedLearner(
            estimator=BayesianGMMClassifier(),
            process=process,
            inspections=inspections,
            random_state=rep,
        )
    rows = []
    for name in POLICIES:
        if name == "random":
            learner = runs["both"].random_baseline(random_state=rep)
        else:
            learner = runs[name]
        start = time.perf_counter()
        learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)
        seconds = time.perf_counter() - start
        totals = learner.history_.totals
        proba = learner.predict_proba(split.X_test)
        spend = totals["spend_by_method"]
        rows.append(
            {
                "case": case_name,
                "rep": rep,
                "policy": name,
                "regret": totals["regret"],
                "accuracy": totals["decision_accuracy"],
                "test_accuracy": decision_accuracy(
                    split.y_test, proba, process, classes=learner.estimator_.classes_
                ),
                "n_perfect": totals["n_inspections_by_method"].get("perfect", 0),
                "n_cheap": totals["n_inspections_by_method"].get("cheap", 0),
                "spend_perfect": spend.get("perfect", 0.0),
                "spend_cheap": spend.get("cheap", 0.0),
                "spend": totals["inspection_spend"],
                "loss": totals["regret"] + totals["inspection_spend"],
                "seconds": seconds,
            }
        )
    return rows


def _median_iqr(values) -> str:
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return f"{med:.4g} [{q1:.4g}, {q3:.4g}]"


def _table(frame, case) -> list[str]:
    lines = [
        f"### {case}",
        "",
        "| policy | regret | decision accuracy (stream) | decision accuracy "
        "(test) | perfect inspections | cheap inspections | spend perfect | "
        "spend cheap | total loss (regret + spend) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for policy in POLICIES:
        sub = frame[(frame.case == case) & (frame.policy == policy)]
        lines.append(
            f"| {policy} | "
            + " | ".join(
                _median_iqr(sub[column])
                for column in (
                    "regret",
                    "accuracy",
                    "test_accuracy",
                    "n_perfect",
                    "n_cheap",
                    "spend_perfect",
                    "spend_cheap",
                    "loss",
                )
            )
            + " |"
        )
    lines.append("")
    return lines


def _paired(frame, case) -> list[str]:
    """Loss of ``both`` minus the loss of every other policy, per repetition."""
    wide = frame[frame.case == case].pivot(index="rep", columns="policy", values="loss")
    lines = [
        f"Paired, {case}: total loss of `both` minus that of the other policy "
        "(negative: the choice between methods is better).",
        "",
        "| other policy | mean [95 % CI] | median [IQR] | `both` better | "
        "tie | worse |",
        "|---|---|---|---|---|---|",
    ]
    for other in ("perfect", "cheap", "random"):
        diff = (wide["both"] - wide[other]).to_numpy()
        half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
        lines.append(
            f"| {other} | {diff.mean():.4g} [{diff.mean() - half:.4g}, "
            f"{diff.mean() + half:.4g}] | {_median_iqr(diff)} | "
            f"{np.mean(diff < -1e-9):.0%} | {np.mean(np.abs(diff) <= 1e-9):.0%} | "
            f"{np.mean(diff > 1e-9):.0%} |"
        )
    lines.append("")
    return lines


def main(argv=None) -> int:
    import pandas as pd
    from joblib import Parallel, delayed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--detection", type=float, default=0.85)
    parser.add_argument("--false-call", type=float, default=0.04)
    parser.add_argument("--cost-share", type=float, default=0.2)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--output", default=None, help="Markdown file to write")
    args = parser.parse_args(argv)
    settings = {
        "detection": args.detection,
        "false_call": args.false_call,
        "cost_share": args.cost_share,
    }
    start = time.perf_counter()
    results = Parallel(n_jobs=args.n_jobs)(
        delayed(one_repetition)(case, rep, settings)
        for case in args.cases
        for rep in range(args.repeats)
    )
    wall = time.perf_counter() - start
    frame = pd.DataFrame([row for rows in results for row in rows])
    lines = [
        "# Imperfect inspections: perfect, cheap, the EVSI choice, random",
        "",
        f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python "
        "benchmarks/bench_inspection.py "
        f"{' '.join(sys.argv[1:] if argv is None else argv)}`",
        f"({args.repeats} repetitions per case, {args.n_jobs} workers, "
        f"{wall:.0f} s wall clock; Python {platform.python_version()}).",
        "",
        f"Cheap method: cost {args.cost_share:.0%} of the perfect one's, "
        f"detection of damage (states 3, 4) {args.detection:.0%}, false calls in "
        f"states 1, 2 {args.false_call:.0%}; reports 'damage found' / 'no damage "
        "found'. Estimator: BayesianGMMClassifier (default priors); soft "
        "evidence as weighted copies. Median [IQR] over repetitions; regret "
        "and accuracy are over the stream's decisions.",
        "",
    ]
    for case in args.cases:
        lines += _table(frame, case) + _paired(frame, case)
    text = "\n".join(lines)
    print(text)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text + "\n")
        frame.to_csv(args.output.rsplit(".", 1)[0] + ".csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
