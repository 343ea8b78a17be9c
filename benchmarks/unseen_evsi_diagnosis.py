"""Why the EVSI choice loses to perfect-only under a stated direction (issue 26.5).

Per split of ``bench_unseen.py`` (same seeds), per case and protocol, the
stated-direction arm (``z24-directed``, ``synthetic-directed``) runs the
perfect-only EVPI rule and the EVSI choice; the beliefs of both are replayed
(:func:`bench_unseen.replay_beliefs`). Per run:

- the loss, split into regret, perfect spend and cheap spend;
- at the steps each method inspected: the value the choice promised (EVSI of
  the method, EVPI for the perfect one) and the value realised, the utility of
  the action taken after the result minus that of the action the belief alone
  called for, at the step's true state; split by the step's true state
  (healthy or damaged);
- the mean belief in the damaged states at those steps against their share;
- the regret at steps where no inspection was made, before and after the
  onset.

Writes ``results/unseen_evsi_diagnosis_runs.csv`` (one row per run) and
prints medians and sums.

Run (from the repository root)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/unseen_evsi_diagnosis.py --repeats 5
"""

from __future__ import annotations

import argparse
import warnings

import bench_unseen as bench
import numpy as np
import pandas as pd

from skrbal.inspection import evsi, perfect_inspection

STATED = {"z24-hard": "z24-directed", "synthetic-hard": "synthetic-directed"}


def _run(policy, arm_name, case, process, split, initial, seed, **extra):
    arm = bench.ARMS[arm_name]
    estimator = arm.estimator(case)
    methods = [perfect_inspection(process), bench.cheap_method(process)]
    learner = bench._learner(
        arm,
        estimator,
        process,
        seed,
        inspections=methods if policy != "evpi" else None,
        **extra,
    )
    X, y = split.X_stream, split.y_stream
    learner.fit(X, y, initial=initial)
    proba = bench.replay_beliefs(learner, estimator, X, y, initial, process)
    return learner, proba, methods


def measure(case_name, protocol, arm_name, rep, policies=("evpi", "choice")):
    """One row per policy of one split."""
    case = bench.case_study(case_name)
    process = case.process()
    seed = bench.seed_of(0, rep)
    split = case.split(random_state=seed)
    initial = bench.initial_labels(split, protocol, process, 50)
    y = split.y_stream
    damaged = np.isin(y, bench.DAMAGED)
    onset = int(np.argmax(damaged)) if damaged.any() else y.size
    q = np.asarray(process.state_action_utility, float)
    state = np.searchsorted(process.classes_, y)
    rows = []
    for policy in policies:
        learner, proba, methods = _run(
            policy, arm_name, case, process, split, initial, seed
        )
        steps, totals = learner.history_.steps, learner.history_.totals
        action = steps["action"].to_numpy()
        prior_action = np.argmax(proba @ q, axis=1)
        gain = q[state, action] - q[state, prior_action]
        regret = q[state].max(axis=1) - q[state, action]
        if "method" in steps:
            # The method's name, None where nothing was inspected (NaN in the frame).
            used = np.array(
                [m if isinstance(m, str) else None for m in steps["method"]],
                dtype=object,
            )
            values = evsi(proba, process, methods)
        else:
            used = np.where(steps["inspected"].to_numpy(bool), "perfect", None).astype(
                object
            )
            values = evsi(proba, process, methods[:1])
        evpi = process.evpi(proba)
        inspected = np.array([m is not None for m in used])
        row = {
            "case": case_name,
            "protocol": protocol,
            "arm": arm_name,
            "repetition": rep,
            "policy": policy,
            "loss": totals["regret"] + totals["inspection_spend"],
            "regret": totals["regret"],
            "spend": totals["inspection_spend"],
            "regret_uninspected_before_onset": float(
                regret[:onset][~inspected[:onset]].sum()
            ),
            "regret_uninspected_after_onset": float(
                regret[onset:][~inspected[onset:]].sum()
            ),
            "regret_inspected": float(regret[inspected].sum()),
            "n_false_call": int(((used == "cheap") & ~damaged & (action != 0)).sum()),
            "n_missed_report": int(((used == "cheap") & damaged & (action == 0)).sum()),
            "regret_uninspected_healthy": float(regret[~inspected & ~damaged].sum()),
            "regret_uninspected_damaged": float(regret[~inspected & damaged].sum()),
        }
        for k, method in enumerate(methods):
            at = used == method.name
            for where, mask in (("healthy", at & ~damaged), ("damaged", at & damaged)):
                tag = f"{method.name}_{where}"
                row[f"n_{tag}"] = int(mask.sum())
                row[f"promised_{tag}"] = (
                    float(values[mask, k].sum()) if k < values.shape[1] else np.nan
                )
                row[f"realised_{tag}"] = float(gain[mask].sum())
            row[f"belief_damage_{method.name}"] = (
                float(
                    proba[at][:, np.isin(process.classes_, bench.DAMAGED)].sum(1).mean()
                )
                if at.any()
                else np.nan
            )
            row[f"evpi_{method.name}"] = float(evpi[at].mean()) if at.any() else np.nan
        rows.append(row)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--cases", nargs="+", default=list(STATED))
    parser.add_argument("--protocols", nargs="+", default=list(bench.PROTOCOLS))
    parser.add_argument("--arm", default=None, help="default: the case's statement")
    parser.add_argument("--name", default="unseen_evsi_diagnosis")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for case_name in args.cases:
        arm = args.arm or STATED[case_name]
        for protocol in args.protocols:
            for rep in range(args.start, args.start + args.repeats):
                rows += measure(case_name, protocol, arm, rep)
    runs = pd.DataFrame(rows)
    runs.to_csv(bench.RESULTS / f"{args.name}_runs.csv", index=False)
    pd.set_option("display.width", 250)
    keys = ["case", "protocol", "policy"]
    print(runs.groupby(keys).median(numeric_only=True).T.to_string())


if __name__ == "__main__":
    main()
