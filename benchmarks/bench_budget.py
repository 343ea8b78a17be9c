"""Budgeted EVPI against random inspection and scikit-activeml (issue 11 study).

On the synthetic and the Z24-like case studies, each repetition first runs the
unconstrained EVPI rule (the paper: inspect when EVPI exceeds the cost) and
counts its inspections ``n_evpi``. Every method then gets the same budget of
``round(f * n_evpi)`` inspections, for ``f`` in 25 %, 50 % and 100 %:

- ``evpi+cap``: the EVPI rule until the campaign's money runs out,
  ``CostThreshold() & SpendCap(limit=budget * cost, period=stream length)``;
- ``evpi+quantile``: the EVPI rule throttled to a rate, within the same
  campaign budget, ``CostThreshold() & QuantileThreshold(rate=budget / stream
  length, tolerance=1 / rate) & SpendCap(...)`` (the tolerance lets the spend
  run one inspection ahead of the rate; the cap keeps the total);
- ``random``: the paper's baseline, ``query='random'`` with
  ``n_queries=budget``;
- ``skal-split``, ``skal-varunc``: scikit-activeml's ``Split`` and
  ``VariableUncertainty`` stream strategies (Zliobaite et al. 2014) with
  ``budget = budget / stream length`` and a hard stop at ``budget`` labels.

All run through the same :class:`~skrbal.active.RiskBasedLearner`, with the
same model (the Bayesian GMM, updated by ``partial_fit``), split and metrics.
scikit-activeml's strategies are driven through a :class:`BudgetPolicy`
adapter: its utility is theirs, ``1 - max belief`` on the beliefs the learner
has just computed, and its budget manager is theirs, updated one step at a
time as in their own stream loop.

Run (from the repository root; writes ``benchmarks/results/budget.md``, its
figure ``budget.png`` and the per-run table ``budget_runs.csv``)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget.py --repeats 50
"""

from __future__ import annotations

import argparse
import copy
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from skrbal.active import RiskBasedLearner
from skrbal.budget import BudgetPolicy, CostThreshold, QuantileThreshold, SpendCap
from skrbal.experiments import get_case_study
from skrbal.experiments._runner import repetition_seed
from skrbal.metrics import decision_accuracy
from skrbal.mixture import BayesianGMMClassifier

RESULTS = Path(__file__).parent / "results"
FRACTIONS = (0.25, 0.5, 1.0)
CASES = ("synthetic", "z24")
METHODS = ("evpi+cap", "evpi+quantile", "random", "skal-split", "skal-varunc")


class SkactivemlPolicy(BudgetPolicy):
    """A scikit-activeml uncertainty stream strategy as a budget policy.

    Benchmark only: its state holds the strategy object (not JSON) and it
    reads the beliefs of the block from ``beliefs_``, set by
    :class:`TappedLearner` just before each scan.
    """

    def __init__(self, *, strategy, max_labels):
        self.strategy = strategy
        self.max_labels = max_labels

    def initial_state(self) -> dict:
        strategy = copy.deepcopy(self.strategy)
        # An update on no candidates builds the strategy's budget manager.
        strategy.update(np.zeros((0, 1)), [])
        return {"strategy": strategy, "n_labels": 0}

    def scan(self, evpi, times, available, cost, state):
        proba = self.beliefs_
        if proba.shape[0] != len(evpi):
            raise RuntimeError("the beliefs do not belong to the scanned block.")
        strategy = copy.deepcopy(state["strategy"])
        # As UncertaintyZliobaite.query: utility = 1 - max belief.
        utilities = 1.0 - proba.max(axis=1)
        position, n = 0, len(evpi)
        # Their budget managers are sequential (the threshold moves after
        # each step), so they are stepped one observation at a time.
        while position < n and state["n_labels"] < self.max_labels:
            queried = strategy.budget_manager_.query_by_utility(utilities[position:])
            if len(queried) == 0:
                break
            hit = position + int(queried[0])
            take = bool(available[hit])
            for step in range(position, hit + 1):
                chosen = [0] if (take and step == hit) else []
                strategy.update(np.zeros((1, 1)), chosen)
            if take:
                return hit, {"strategy": strategy, "n_labels": state["n_labels"] + 1}
            position = hit + 1
        for _ in range(position, n):
            strategy.update(np.zeros((1, 1)), [])
        return -1, {"strategy": strategy, "n_labels": state["n_labels"]}


class TappedLearner(RiskBasedLearner):
    """The stream learner, handing each block's beliefs to a scikit-activeml policy."""

    def _beliefs(self, model, X):
        proba = super()._beliefs(model, X)
        if isinstance(self.query, SkactivemlPolicy):
            self.query.beliefs_ = proba
        return proba


def _query(method, budget, n_stream, cost, seed):
    from skactiveml.stream import Split, VariableUncertainty

    rate = budget / n_stream
    campaign = SpendCap(limit=budget * cost, period=float(n_stream))
    if method == "evpi+cap":
        return CostThreshold() & campaign
    if method == "evpi+quantile":
        # tolerance 1 / rate: the spend may run one inspection ahead of the rate.
        return (
            CostThreshold()
            & QuantileThreshold(rate=rate, tolerance=1.0 / rate)
            & campaign
        )
    if method == "skal-split":
        return SkactivemlPolicy(
            strategy=Split(budget=rate, random_state=seed), max_labels=budget
        )
    if method == "skal-varunc":
        return SkactivemlPolicy(
            strategy=VariableUncertainty(budget=rate, random_state=seed),
            max_labels=budget,
        )
    raise ValueError(method)


def _run(learner, split, process):
    start = time.perf_counter()
    learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)
    seconds = time.perf_counter() - start
    totals = learner.history_.totals
    proba = learner.predict_proba(split.X_test)
    return {
        "n_inspections": totals["n_inspections"],
        "regret": totals["regret"],
        "decision_accuracy": totals["decision_accuracy"],
        "test_decision_accuracy": decision_accuracy(
            split.y_test, proba, process, classes=learner.estimator_.classes_
        ),
        "seconds": seconds,
    }


def run_repetition(case_name: str, repetition: int, seed: int = 0) -> list[dict]:
    """Every method at every budget on one split of a case study."""
    case = get_case_study(case_name)
    process = case.process()
    rng_seed = repetition_seed(seed, repetition)
    split = case.split(random_state=rng_seed)
    n_stream = split.X_stream.shape[0]

    def learner(query, **params):
        return TappedLearner(
            estimator=BayesianGMMClassifier(), process=process, query=query, **params
        )

    base = {"case": case_name, "repetition": repetition}
    free = _run(learner("evpi"), split, process)
    n_evpi = free["n_inspections"]
    rows = [{**base, "fraction": "none", "method": "evpi", "budget": n_evpi, **free}]
    for fraction in FRACTIONS:
        budget = max(1, math.floor(fraction * n_evpi + 0.5))
        for method in METHODS:
            if method == "random":
                model = learner(
                    "random", n_queries=budget, random_state=(rng_seed + 1) % 2**32
                )
            else:
                model = learner(
                    _query(
                        method,
                        budget,
                        n_stream,
                        process.inspection_cost,
                        (rng_seed + 2) % 2**32,
                    )
                )
            result = _run(model, split, process)
            rows.append(
                {
                    **base,
                    "fraction": f"{fraction:.0%}",
                    "method": method,
                    "budget": budget,
                    **result,
                }
            )
    return rows


def _quartiles(values) -> str:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:.3g} [{q1:.3g}, {q3:.3g}]"


def summarise(runs: pd.DataFrame) -> str:
    """Markdown tables: per case and budget, regret and accuracy per method."""
    lines = []
    for case_name, by_case in runs.groupby("case", sort=False):
        n_reps = by_case["repetition"].nunique()
        free = by_case[by_case["method"] == "evpi"]
        lines += [
            f"### {case_name} ({n_reps} repetitions)",
            "",
            "Unconstrained EVPI rule: inspections "
            f"{_quartiles(free['n_inspections'])}, regret "
            f"{_quartiles(free['regret'])}, test decision accuracy "
            f"{_quartiles(free['test_decision_accuracy'])} (median [IQR]).",
            "",
            "| budget | method | inspections | regret | stream decision acc. | "
            "test decision acc. | paired vs evpi+cap: lower / tie / higher |",
            "|---|---|---|---|---|---|---|",
        ]
        for fraction, by_budget in by_case[by_case["method"] != "evpi"].groupby(
            "fraction", sort=False
        ):
            regret = by_budget.pivot(
                index="repetition", columns="method", values="regret"
            )
            for method, rows in by_budget.groupby("method", sort=False):
                diff = regret[method] - regret["evpi+cap"]
                paired = " / ".join(
                    f"{share:.0%}"
                    for share in (
                        (diff < 0).mean(),
                        (diff == 0).mean(),
                        (diff > 0).mean(),
                    )
                )
                lines.append(
                    f"| {fraction} | {method} | {_quartiles(rows['n_inspections'])} "
                    f"| {_quartiles(rows['regret'])} "
                    f"| {_quartiles(rows['decision_accuracy'])} "
                    f"| {_quartiles(rows['test_decision_accuracy'])} "
                    f"| {paired} |"
                )
            medians = by_budget.groupby("method")["regret"].median()
            best = medians[medians == medians.min()].index.tolist()
            lines.append(
                f"| {fraction} | lowest median regret | {', '.join(best)} | | | | |"
            )
        lines.append("")
    return "\n".join([*lines, *_verdict(runs)])


def _verdict(runs: pd.DataFrame) -> list[str]:
    """Does each budgeted-EVPI policy have the lowest median regret per cell?"""
    budgeted = runs[runs["method"] != "evpi"]
    medians = budgeted.groupby(["case", "fraction", "method"], sort=False)[
        "regret"
    ].median()
    lines = ["### Verdict (median regret per case and budget)", ""]
    cells = list(medians.groupby(level=[0, 1], sort=False))
    wins = dict.fromkeys(("evpi+cap", "evpi+quantile"), 0)
    for (case_name, fraction), cell in cells:
        cell = cell.droplevel([0, 1])
        others = cell[~cell.index.isin(list(wins))]
        verdicts = []
        for policy in wins:
            won = cell[policy] <= others.min()
            wins[policy] += bool(won)
            word = "below all others" if won else "NOT below all others"
            verdicts.append(f"{policy} {cell[policy]:.4g} ({word})")
        lines.append(
            f"- {case_name}, {fraction}: {', '.join(verdicts)}; best other "
            f"{others.idxmin()} {others.min():.4g}."
        )
    lines.append("")
    lines += [
        f"{policy} has a lower median regret than every non-EVPI method in "
        f"{count} of {len(cells)} cells."
        for policy, count in wins.items()
    ]
    return [*lines, ""]


def plot(runs: pd.DataFrame, path: Path) -> None:
    """Median regret (IQR bars) against the budget, one panel per case."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(dict.fromkeys(runs["case"]))
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, case_name in zip(axes[0], cases):
        by_case = runs[runs["case"] == case_name]
        x = np.arange(len(FRACTIONS))
        for offset, method in enumerate(METHODS):
            rows = by_case[by_case["method"] == method]
            quartiles = np.array(
                [
                    np.percentile(
                        rows.loc[rows["fraction"] == f"{f:.0%}", "regret"],
                        [25, 50, 75],
                    )
                    for f in FRACTIONS
                ]
            )
            shift = (offset - (len(METHODS) - 1) / 2) * 0.08
            ax.errorbar(
                x + shift,
                quartiles[:, 1],
                yerr=[
                    quartiles[:, 1] - quartiles[:, 0],
                    quartiles[:, 2] - quartiles[:, 1],
                ],
                marker="o",
                capsize=3,
                label=method,
            )
        free = by_case.loc[by_case["method"] == "evpi", "regret"].median()
        ax.axhline(free, color="grey", linestyle=":", label="EVPI rule, no budget")
        ax.set_xticks(x, [f"{f:.0%}" for f in FRACTIONS])
        ax.set_xlabel("budget (share of the EVPI rule's inspections)")
        ax.set_ylabel("regret over the stream (median, IQR)")
        ax.set_yscale("symlog", linthresh=100)
        ax.set_ylim(bottom=0)
        ax.set_title(case_name)
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import skactiveml
    import sklearn

    start = time.perf_counter()
    rows = []
    for case_name in args.cases:
        for repetition in range(args.repeats):
            rows.extend(run_repetition(case_name, repetition, seed=args.seed))
        print(f"{case_name}: {time.perf_counter() - start:.0f} s", flush=True)
    runs = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "budget_runs.csv", index=False)
    header = [
        "# Inspection budgets: budgeted EVPI against random and scikit-activeml",
        "",
        "Generated by `OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget.py "
        f"--repeats {args.repeats} --seed {args.seed}` "
        f"({time.perf_counter() - start:.0f} s; scikit-activeml "
        f"{skactiveml.__version__}, scikit-learn {sklearn.__version__}).",
        "Budget = round(f x inspections of the unconstrained EVPI rule in the same "
        "repetition); every method runs on the same split with the same model "
        "(Bayesian GMM, partial_fit). Regret: summed over the stream, perfect-"
        "information utility minus realised utility (inspection spend excluded; "
        "spends are matched). Cells: median [IQR]. The last column: share of "
        "repetitions whose regret is lower than, equal to or higher than that of "
        "evpi+cap in the same repetition.",
        "",
    ]
    header += ["![regret against budget](budget.png)", "", ""]
    (args.out / "budget.md").write_text("\n".join(header) + summarise(runs))
    plot(runs, args.out / "budget.png")
    print(summarise(runs))


if __name__ == "__main__":
    main()
