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

``--unlabelled-state`` runs ``gmm-smoothing`` alone on repetitions
``0 .. repeats - 1``, one at a time, and appends to the same file how often
:class:`~skrbal.exceptions.UnlabelledStateSmoothingWarning` fires and how it
matches the bad runs (final decision accuracy below 0.9, or more than 50
inspections); on the first ``--paired`` repetitions it also fits each learner
with the warning's check switched off, in alternating order, for the check's
time overhead (ratio per run) and to confirm that the runs are unchanged::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_semi_supervised.py \
        --unlabelled-state --repeats 1000 --paired 200
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


BAD_ACCURACY = 0.9  # final decision accuracy below which a run counts as bad


def _smoothing_run(case, repetition, check=True):
    """One gmm-smoothing run: totals, warnings raised, the seconds it took."""
    import contextlib
    import warnings
    from unittest import mock

    from skrbal._learning import SmoothingUpdate
    from skrbal.experiments import get_method, repetition_seed
    from skrbal.experiments._runner import _fit_learner, _learner

    seed = repetition_seed(0, repetition)
    split = case.split(random_state=seed)
    learner = _learner(get_method("gmm-smoothing"), case, seed, {})
    patch = (
        contextlib.nullcontext()
        if check
        else mock.patch.object(SmoothingUpdate, "_check_unlabelled_states")
    )
    with patch, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        _fit_learner(learner, split)
        seconds = time.perf_counter() - start
    names = [type(w.message).__name__ for w in caught]
    totals = learner.history_.totals
    final = learner.history_.queries.iloc[-1]
    initial_states = set(split.y_stream[split.initial_indices].tolist())
    return {
        "repetition": repetition,
        "n_inspections": totals["n_inspections"],
        "final_decision_accuracy": final["decision_accuracy"],
        "regret": totals["regret"],
        "warned": "UnlabelledStateSmoothingWarning" in names,
        "initial_lacks": sorted(set(case.process().classes_.tolist()) - initial_states),
        "seconds": seconds,
    }


def unlabelled_state_study(repeats: int, paired: int) -> str:
    """Markdown section: the warning against the bad runs, and its cost."""
    import numpy as np
    import pandas as pd

    from skrbal.experiments import get_case_study

    case = get_case_study("synthetic")
    rows, ratios, unchanged = [], [], 0
    start = time.perf_counter()
    for repetition in range(repeats):
        if repetition < paired:
            # Alternate which fit goes first, so drift favours neither.
            order = (True, False) if repetition % 2 == 0 else (False, True)
            runs = {check: _smoothing_run(case, repetition, check) for check in order}
            ratios.append(runs[True]["seconds"] / runs[False]["seconds"])
            keys = ("n_inspections", "final_decision_accuracy", "regret")
            unchanged += all(runs[True][k] == runs[False][k] for k in keys)
            rows.append(runs[True])
        else:
            rows.append(_smoothing_run(case, repetition))
    elapsed = time.perf_counter() - start
    runs = pd.DataFrame(rows)
    bad_accuracy = runs["final_decision_accuracy"] < BAD_ACCURACY
    runaway = runs["n_inspections"] > RUNAWAY
    bad = bad_accuracy | runaway
    lacks3 = runs["initial_lacks"].apply(lambda states: 3 in states)
    lacks_any = runs["initial_lacks"].apply(bool)

    def line(name, mask):
        return (
            f"| {name} | {int(mask.sum())} | {int((mask & runs.warned).sum())} | "
            f"{int((mask & bad).sum())} | {int((mask & bad_accuracy).sum())} | "
            f"{int((mask & runaway).sum())} |"
        )

    warned = runs.warned
    precision = (warned & bad).sum() / max(warned.sum(), 1)
    ratios = np.asarray(ratios)
    lines = [
        "",
        f"## UnlabelledStateSmoothingWarning: gmm-smoothing, repetitions 0-"
        f"{repeats - 1} (seed 0, {elapsed:.0f} s, one process)",
        "",
        "Bad run: final decision accuracy below "
        f"{BAD_ACCURACY} or more than {RUNAWAY} inspections.",
        "",
        "| runs | count | warned | bad | accuracy < 0.9 | > 50 inspections |",
        "|---|---|---|---|---|---|",
        line("all", pd.Series(True, index=runs.index)),
        line("initial set lacks state 3", lacks3),
        line("initial set lacks another state only", lacks_any & ~lacks3),
        line("warned", warned),
        line("not warned", ~warned),
        "",
        f"Warned runs: {int(warned.sum())}; bad runs among them: "
        f"{int((warned & bad).sum())} (precision {precision:.2f}); "
        f"bad runs warned: {int((warned & bad).sum())} of {int(bad.sum())}.",
        f"Inspections, all runs: median {runs.n_inspections.median():.0f}, "
        f"mean {runs.n_inspections.mean():.2f}; without the warned runs: median "
        f"{runs.n_inspections[~warned].median():.0f}, mean "
        f"{runs.n_inspections[~warned].mean():.2f}.",
        "",
        f"Cost of the check, {paired} paired fits (with / without, alternating "
        f"order): time ratio median {np.median(ratios):.3f}, quartiles "
        f"{np.percentile(ratios, 25):.3f}-{np.percentile(ratios, 75):.3f}, max "
        f"{ratios.max():.3f}; runs with identical inspections, final accuracy "
        f"and regret: {unchanged} of {paired}.",
    ]
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--unlabelled-state", action="store_true")
    parser.add_argument("--paired", type=int, default=200)
    args = parser.parse_args(argv)
    if args.unlabelled_state:
        text = unlabelled_state_study(args.repeats, min(args.paired, args.repeats))
        RESULTS.mkdir(exist_ok=True)
        with open(RESULTS / "semi_supervised.md", "a") as results:
            results.write(text)
        print(text)
        return

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
