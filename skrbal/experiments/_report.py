"""Summaries of a study: inspections, scores at fixed query counts, timing."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from sklearn.utils import Bunch

# markdown_table and warning_table were defined here; the command line still
# imports them from this module.
from skrbal._tables import markdown_table, warning_table

__all__ = ["study_report", "summarise_study"]

_METRICS = {
    "decision_accuracy": ("final_decision_accuracy", "Decision accuracy"),
    "f1_macro": ("final_f1_macro", "Macro F1"),
}


def _inspections(totals: pd.DataFrame) -> pd.DataFrame:
    grouped = totals.groupby("method", sort=False)
    table = pd.DataFrame(
        {
            "runs": grouped.size(),
            "mean": grouped["n_inspections"].mean(),
            "sd": grouped["n_inspections"].std(ddof=0),
            "median": grouped["n_inspections"].median(),
            "min": grouped["n_inspections"].min(),
            "max": grouped["n_inspections"].max(),
        }
    )
    for column in ("inspection_spend", "regret"):
        if column in totals.columns:
            table[f"mean_{column}"] = grouped[column].mean()
    return table


def _scores(queries, totals, at: Sequence[int]) -> pd.DataFrame:
    from skrbal.plotting import query_curve_summary

    rows = []
    for metric, (final_column, _) in _METRICS.items():
        if metric not in queries.columns:
            continue
        summary = query_curve_summary(queries, metric, max_queries=max(at))
        for method, part in summary.groupby("method", sort=False):
            part = part.set_index("query")
            for q in at:
                rows.append(
                    {
                        "method": method,
                        "metric": metric,
                        "at": str(q),
                        **part.loc[q, ["median", "q25", "q75", "n_runs"]].to_dict(),
                    }
                )
            final = totals.loc[totals["method"] == method, final_column]
            rows.append(
                {
                    "method": method,
                    "metric": metric,
                    "at": "final",
                    "median": final.median(),
                    "q25": final.quantile(0.25),
                    "q75": final.quantile(0.75),
                    "n_runs": final.size,
                }
            )
    return pd.DataFrame(rows)


def _timing(totals: pd.DataFrame) -> pd.DataFrame:
    grouped = totals.groupby("method", sort=False)["seconds"]
    return pd.DataFrame(
        {
            "mean_seconds": grouped.mean(),
            "median_seconds": grouped.median(),
            "max_seconds": grouped.max(),
            "total_seconds": grouped.sum(),
        }
    )


def summarise_study(study, at: Sequence[int] = (0, 5, 10, 20, 50)) -> Bunch:
    """Tables of a study: inspections, scores at fixed query counts, timing.

    Parameters
    ----------
    study : Bunch
        As :func:`run_study` or :func:`load_study` return.
    at : sequence of int, default=(0, 5, 10, 20, 50)
        Numbers of inspections at which to report the test scores. A run
        that stopped inspecting earlier counts with its final model, as in
        the learning curves.

    Returns
    -------
    summary : Bunch
        ``inspections`` (per method: runs, mean, standard deviation, median,
        minimum and maximum of the number of inspections, mean inspection
        spend and decision regret), ``scores`` (long table: ``method``,
        ``metric``, ``at`` (a count or ``'final'``), ``median``, ``q25``,
        ``q75`` and ``n_runs``, the runs that made at least that many
        inspections, or all runs for ``'final'``), ``timing`` (per method:
        mean, median, maximum and total seconds per repetition; empty when
        the study has no timing) and ``warnings`` (per method and warning
        category: the runs that raised it, ``in_runs`` of ``of_runs``, and its total
        ``count``; empty when none was raised).

    See Also
    --------
    study_report : The same as Markdown.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, run_study, summarise_study
    >>> study = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=2,
    ...                   progress=False)
    >>> summary = summarise_study(study, at=(0, 5))
    >>> summary.inspections["runs"].tolist()
    [2]
    >>> summary.scores["at"].unique().tolist()
    ['0', '5', 'final']
    """
    at = sorted({int(q) for q in at})
    if not at or at[0] < 0:
        raise ValueError(f"at must hold non-negative query counts, got {at}.")
    totals, queries = study.totals, study.queries
    timing = _timing(totals) if "seconds" in totals.columns else pd.DataFrame()
    return Bunch(
        inspections=_inspections(totals),
        scores=_scores(queries, totals, at),
        timing=timing,
        warnings=warning_table(totals),
    )


def _score_table(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    part = scores[scores["metric"] == metric]
    cells = part.assign(
        cell=[
            f"{r.median:.3f} [{r.q25:.3f}, {r.q75:.3f}] ({int(r.n_runs)})"
            for r in part.itertuples()
        ]
    )
    table = cells.pivot(index="method", columns="at", values="cell")
    order = list(dict.fromkeys(part["at"]))
    methods = list(dict.fromkeys(part["method"]))
    return table.loc[methods, order]


def _method_line(method: dict) -> str:
    """One method of a study's configuration: estimator, case's parameters, query."""
    line = f"`{method['estimator']}`"
    # Studies saved before the case declared its parameters lack the key.
    case_params = method.get("case_params") or {}
    if case_params:
        params = ", ".join(f"{k}={v}" for k, v in case_params.items())
        line += f" (set by the case study: {params})"
    query = (
        f"random, as many inspections as {method['matched_to']}"
        if method["query"] == "random"
        else "inspect when EVPI exceeds the inspection cost"
    )
    line += f"; {query}"
    learner = ", ".join(f"{k}={v}" for k, v in method["learner_params"].items())
    return line + (f"; {learner}" if learner else "")


def _case_params_note(methods: dict) -> list[str]:
    """A line on the estimator parameters of a study whose case sets none."""
    if any(method.get("case_params") for method in methods.values()):
        return []  # each method's line says what the case set
    if not all("case_params" in method for method in methods.values()):
        return [
            "",
            "Estimator parameters set by the case study: not recorded (the study "
            "was saved by an older skrbal); each estimator is shown as it ran.",
        ]
    note = (
        "Estimator parameters set by the case study: none. Every estimator runs "
        "as shown, its other parameters at their defaults"
    )
    if any("MulticlassRVC(" in method["estimator"] for method in methods.values()):
        note += " (MulticlassRVC's default kernel width is the paper's gamma = 1/D)"
    return ["", note + "."]


def _standardisation_line(config: dict) -> str:
    """How the features were standardised, as a sentence (empty if not)."""
    if not config.get("standardise"):
        return ""
    window = config.get("standardise_window")
    if window is None:
        return (
            " Features standardised with the whole record's mean and standard "
            "deviation."
        )
    return (
        " Features standardised with the mean and standard deviation of the "
        f"record's first {window} observations (the commissioning window)."
    )


def study_report(
    study,
    *,
    at: Sequence[int] = (0, 5, 10, 20, 50),
    figures: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    full_repeats: int = 1000,
    full_workers: int = 2,
) -> str:
    """A Markdown report of a study.

    Parameters
    ----------
    study : Bunch
        As :func:`run_study` or :func:`load_study` return.
    at : sequence of int, default=(0, 5, 10, 20, 50)
        Inspection counts at which to report the test scores.
    figures : sequence of (file name, caption), default=()
        Figures to list (and link) at the end.
    notes : sequence of str, default=()
        Extra lines for the end of the report.
    full_repeats : int, default=1000
        Repetitions of a full reproduction, for the time estimate.
    full_workers : int, default=2
        Workers of a full reproduction, for the time estimate.

    Returns
    -------
    report : str

    See Also
    --------
    summarise_study : The tables as DataFrames.

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method, run_study, study_report
    >>> study = run_study("synthetic", [Method("nb", GaussianNB)], n_repeats=2,
    ...                   progress=False)
    >>> print(study_report(study).splitlines()[0])
    # synthetic: 2 repetitions
    """
    summary = summarise_study(study, at)
    config = study.config
    n_runs = study.totals["repetition"].nunique()
    lines = [
        f"# {config['case']}: {n_runs} repetitions",
        "",
        f"{config.get('case_description', '')}. Data: "
        f"{config.get('data_source', 'not recorded')}. Seed {config['seed']}; "
        f"{n_runs} of {config['n_repeats']} requested repetitions finished. Each "
        f"repetition draws a random test set ({config['test_size']:.0%} of the "
        "record); the rest is the stream, in temporal order, with "
        f"{config['initial_size']:.1%} of it labelled at the start.",
        "",
        f"Labelling: {config.get('labelling') or 'not recorded'}."
        + _standardisation_line(config),
        "",
        "Methods:",
        "",
    ]
    for name, method in config["methods"].items():
        lines.append(f"- `{name}`: {_method_line(method)}")
    lines += _case_params_note(config["methods"])
    lines += [
        "",
        "## Inspections per run",
        "",
        markdown_table(summary.inspections),
        "",
    ]
    for metric, (_, title) in _METRICS.items():
        if not (summary.scores["metric"] == metric).any():
            continue
        lines += [
            f"## {title} on the test set after a number of inspections",
            "",
            "Median [interquartile range] (runs that made at least that many "
            "inspections); a run that stopped earlier counts with its final "
            "model. `final`: after the run's last inspection.",
            "",
            markdown_table(_score_table(summary.scores, metric)),
            "",
        ]
    if not summary.timing.empty:
        per_repetition = study.totals.groupby("repetition")["seconds"].sum().mean()
        estimate = per_repetition * full_repeats / full_workers
        lines += [
            "## Time per repetition",
            "",
            markdown_table(summary.timing),
            "",
            f"All methods together take {per_repetition:.2f} s per repetition "
            f"on average here, so {full_repeats} repetitions on {full_workers} "
            f"workers would take about {estimate / 60:.1f} min (this machine, "
            "perfect parallel scaling, timing under whatever else it ran).",
            "",
        ]
    if not summary.warnings.empty:
        lines += [
            "## Warnings",
            "",
            "Raised while the methods ran, recorded per repetition in "
            "`totals.csv` (`n_warnings`, `warnings`) instead of being shown.",
            "",
            markdown_table(summary.warnings.set_index("method")),
            "",
        ]
    if figures:
        lines += ["## Figures", ""]
        lines += [f"- [{name}]({name}): {caption}" for name, caption in figures]
        lines.append("")
    if notes:
        lines += ["## Notes", ""]
        lines += [f"- {note}" for note in notes]
        lines.append("")
    return "\n".join(lines)
