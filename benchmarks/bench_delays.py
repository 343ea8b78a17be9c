"""Results that come back late: inspections and regret against immediate results.

Issue 20 §2. On the synthetic and the Z24-like case studies (the studies'
splits, the Bayesian GMM updated by ``partial_fit``), each repetition runs the
EVPI rule with every result learnt at once (the paper), then with results
``d`` steps late (``result_delay=d``) and at most 3 requests open, for
``d`` in 5 and 50, twice: valuing a new request as if nothing were pending
(``pending_value='ignore'``, the one-step view) and with the pending results'
fantasised outcomes (``'fantasy'``). The learner decides exactly as the
agent fed one observation per call with each result recorded ``d``
observations later (tests/test_kernel_equivalence.py).

Targets: on average at most 1 extra inspection over immediate results, and no
higher median regret.

A third run per delay is a yardstick, not a policy: the very steps the
immediate run inspected, with their results ``d`` steps late and no cap on
open requests (``same steps``). Its regret above immediate results is what
the delay alone costs, whatever a policy chooses to inspect.

Run (from the repository root; writes ``benchmarks/results/delays.md`` and
the per-run table ``delays_runs.csv``)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_delays.py --repeats 50
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from skrbal.active import RiskBasedLearner
from skrbal.budget import BudgetPolicy
from skrbal.experiments import get_case_study
from skrbal.mixture import BayesianGMMClassifier

RESULTS = Path(__file__).parent / "results"
CASES = ("synthetic", "z24")
DELAYS = (5, 50)
MAX_OPEN = 3


class SameSteps(BudgetPolicy):
    """Inspect exactly ``steps`` (benchmark only: offline, times are steps)."""

    _parameter_constraints: ClassVar[dict] = {"steps": ["array-like"]}

    def __init__(self, *, steps):
        self.steps = steps

    def _initial_state(self) -> dict:
        return {}

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        return np.isin(times, self.steps)

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        return {}


def run_repetition(case_name: str, repetition: int) -> list[dict]:
    """Immediate results, then each delay with and without fantasies."""
    case = get_case_study(case_name)
    process = case.process()
    split = case.split(random_state=1000 + repetition)
    settings = [("immediate", 0, None, "ignore")]
    for delay in DELAYS:
        for pending in ("ignore", "fantasy", "same steps"):
            cap = None if pending == "same steps" else MAX_OPEN
            settings.append((f"delay {delay}, {pending}", delay, cap, pending))
    rows, steps = [], None
    for name, delay, cap, pending in settings:
        same = pending == "same steps"
        learner = RiskBasedLearner(
            estimator=BayesianGMMClassifier(),
            process=process,
            budget=SameSteps(steps=steps) if same else None,
            result_delay=delay,
            max_open_requests=cap,
            pending_value="ignore" if same else pending,
            history="full",
        )
        start = time.perf_counter()
        learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)
        if steps is None:  # the immediate run's inspections
            queries = learner.history_.queries
            steps = queries.loc[queries["step"] >= 0, "step"].to_numpy()
        totals = learner.history_.totals
        rows.append(
            {
                "case": case_name,
                "repetition": repetition,
                "setting": name,
                "n_inspections": totals["n_inspections"],
                "regret": totals["regret"],
                "decision_accuracy": totals["decision_accuracy"],
                "seconds": time.perf_counter() - start,
            }
        )
    return rows


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Per case and setting: inspections and regret, paired with immediate."""
    base = runs[runs["setting"] == "immediate"].set_index(["case", "repetition"])
    out = []
    for (case, setting), group in runs.groupby(["case", "setting"], sort=False):
        paired = group.set_index(["case", "repetition"])
        extra = paired["n_inspections"] - base.loc[paired.index, "n_inspections"]
        more_regret = paired["regret"] > base.loc[paired.index, "regret"]
        out.append(
            {
                "case": case,
                "setting": setting,
                "runs": len(group),
                "mean inspections": group["n_inspections"].mean(),
                "mean extra inspections": extra.mean(),
                "median regret": group["regret"].median(),
                "regret IQR": "[{:.0f}, {:.0f}]".format(
                    *group["regret"].quantile([0.25, 0.75])
                ),
                "runs with higher regret than immediate": f"{more_regret.mean():.0%}",
                "median s/run": group["seconds"].median(),
            }
        )
    return pd.DataFrame(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args(argv)
    jobs = [(case, r) for case in args.cases for r in range(args.repeats)]
    rows = Parallel(n_jobs=args.n_jobs)(delayed(run_repetition)(*job) for job in jobs)
    runs = pd.DataFrame([row for block in rows for row in block])
    RESULTS.mkdir(exist_ok=True)
    runs.to_csv(RESULTS / "delays_runs.csv", index=False)
    table = summarise(runs)
    text = (
        "# Results that come back late\n\n"
        f"Command: `OPENBLAS_NUM_THREADS=1 python benchmarks/bench_delays.py "
        f"--repeats {args.repeats}`; at most {MAX_OPEN} requests open.\n\n"
        + table.to_markdown(index=False, floatfmt=".2f")
        + "\n"
    )
    (RESULTS / "delays.md").write_text(text)
    print(text)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
