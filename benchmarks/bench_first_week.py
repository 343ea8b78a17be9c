"""A new user's first week, replayed from Python (issue 26).

The setting of the first-week trial driven through the command line: a record
of :func:`~skrbal.datasets.make_z24_like` (``random_state=7``, 3,932
observations two hours apart, raw Hz, damage growing in stages during the late
summer), commissioned on its first 48 observations labelled ``healthy``, a
three-state process typed by hand (healthy / damaged / severe: an inspection
50, a repair 1,500, a step of damage 200, of severe damage 5,000), the
estimator ``skrbal agent init`` builds (``mean_prior='data'``,
``covariance_prior='data'``), with or without the stated direction (damage
about 2 %, severe damage about 5 % below the healthy level). A
:class:`~skrbal.online.RiskBasedAgent` observes one day (12 rows) at a time,
and each requested inspection is answered with the true state once 36 rows
(3 days) have been observed after the day it was requested in.

Measured: inspections, steps from the onset to the first inspection of a
damaged or severe step, repairs on severe steps (and the first, in steps after
the first severe step), and the share of healthy steps repaired (false
repair), also on cold steps alone.

Run (from the repository root)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_first_week.py

With ``--history-prior 0 0.9 1`` each record is replayed with each share of
the process's prediction from the labelled history in the class prior
(``history_prior``), and with ``--random-states 0 1 ... 11`` over several
records; the table then gives medians over the records and, per share, in
how many records a measure is higher / lower than at share 0 (paired). The
prediction's damage rate is learnt from the labelled history, the process's
rate its prior mean, so ``--hazard-scale`` now scales only that prior
(``results/unseen_learnt_rate.md``).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from _unseen_cases import trial_process

from skrbal.datasets import make_z24_like
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent

STATES = ["healthy", "damaged", "severe"]
#: The Z24-like classes 1 (normal) and 2 (cold) are healthy.
NAMES = np.array(["healthy", "healthy", "damaged", "severe"])
STATEMENT = {
    "damaged": {"shift": -0.02, "units": "relative"},
    "severe": {"shift": -0.05, "units": "relative"},
}
PER_DAY = 12


def scaled_hazard(process, scale: float):
    """``process`` with the chance of damage from the healthy state, doing
    nothing, times ``scale`` (the hand-typed 0.005 a step is about 17 times
    the record's rate: its damage begins after about 3,400 steps)."""
    if scale == 1.0:
        return process
    transition = np.array(process.transition, dtype=float)
    transition[0, 0, 1:] *= scale
    transition[0, 0, 0] = 1.0 - transition[0, 0, 1:].sum()
    return process.set_params(transition=transition.tolist())


def replay(
    stated: bool,
    *,
    random_state: int = 7,
    n_commissioning: int = 48,
    late: int = 36,
    history_prior: float = 0.0,
    hazard_scale: float = 1.0,
) -> dict:
    """One replay; ``late``: rows observed after a request's day before its answer."""
    X, y, _ = make_z24_like(random_state=random_state)
    states = NAMES[y - 1]
    estimator = BayesianGMMClassifier(
        classes=STATES,
        mean_prior="data",
        covariance_prior="data",
        class_priors=STATEMENT if stated else None,
    )
    agent = RiskBasedAgent(
        estimator=estimator,
        process=scaled_hazard(trial_process(STATES), hazard_scale),
        history_prior=history_prior,
    ).fit(X[:n_commissioning], states[:n_commissioning])
    X, y, states = X[n_commissioning:], y[n_commissioning:], states[n_commissioning:]
    pending, decisions = [], []
    for start in range(0, len(X), PER_DAY):
        day = agent.observe(X[start : start + PER_DAY])
        decisions.append(day)
        for _, row in day[day["inspect"]].iterrows():
            pending.append(
                (int(row["request_id"]), int(row["step"]) - n_commissioning, start)
            )
        waiting = []
        for request, row, made in pending:
            if start - made >= late:
                agent.record_inspection(request, states[row])
            else:
                waiting.append((request, row, made))
        pending = waiting
    decisions = pd.concat(decisions, ignore_index=True)
    inspected = decisions["inspect"].to_numpy(bool)
    acted = decisions["action"].to_numpy() != 0
    onset = int(np.argmax(y >= 3))
    found = np.flatnonzero(inspected & (y >= 3))
    severe = np.flatnonzero(acted & (y == 4))
    return {
        "statement": "stated direction" if stated else "default prior",
        "history_prior": history_prior,
        "hazard_scale": hazard_scale,
        "random_state": random_state,
        "inspections": int(inspected.sum()),
        "first damage inspection (steps after onset)": (
            int(found[0] - onset) if found.size else None
        ),
        "severe steps": int((y == 4).sum()),
        "repairs on severe steps": int(acted[y == 4].sum()),
        "first severe repair (steps after severe onset)": (
            int(severe[0] - np.argmax(y == 4)) if severe.size else None
        ),
        "repairs on damaged steps": int(acted[y == 3].sum()),
        "false repair %": 100 * acted[y <= 2].mean(),
        "false repair, cold steps %": 100 * acted[y == 2].mean(),
    }


MEASURES = [
    "inspections",
    "first damage inspection (steps after onset)",
    "repairs on severe steps",
    "first severe repair (steps after severe onset)",
    "repairs on damaged steps",
    "false repair %",
    "false repair, cold steps %",
]


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Medians over the records; per share, records higher / lower than share 0.

    A missing first inspection or repair counts as never (above any delay)
    in the paired count, and is left out of the median (with the count of
    records that have none).
    """
    rows = []
    for (statement, share), group in runs.groupby(["statement", "history_prior"]):
        base = runs[(runs["statement"] == statement) & (runs["history_prior"] == 0)]
        base = base.set_index("random_state").loc[group["random_state"]]
        row = {"statement": statement, "history_prior": share, "records": len(group)}
        for m in MEASURES:
            values = group[m].astype(float).to_numpy()
            given = values[~np.isnan(values)]
            text = f"{np.median(given):.3g}" if given.size else "none"
            if given.size < values.size:
                text += f" ({values.size - given.size} never)"
            if share != 0:
                a = np.nan_to_num(values, nan=np.inf)
                b = np.nan_to_num(base[m].astype(float).to_numpy(), nan=np.inf)
                text += f" [{int((a > b).sum())}+/{int((a < b).sum())}-]"
            row[m] = text
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random-states", type=int, nargs="+", default=[7])
    parser.add_argument("--history-prior", type=float, nargs="+", default=[0.0])
    parser.add_argument(
        "--hazard-scale",
        type=float,
        default=1.0,
        help="the process's chance of damage doing nothing, times this",
    )
    parser.add_argument("--output", help="CSV of every replay")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    shares = sorted(set(args.history_prior) | {0.0})
    rows = [
        replay(
            stated,
            random_state=rs,
            history_prior=share,
            hazard_scale=args.hazard_scale,
        )
        for rs in args.random_states
        for stated in (False, True)
        for share in shares
    ]
    runs = pd.DataFrame(rows)
    if args.output:
        runs.to_csv(args.output, index=False)
    if len(args.random_states) == 1 and shares == [0.0]:
        print(runs.to_markdown(index=False))
    else:
        print(summary(runs).to_markdown(index=False))


if __name__ == "__main__":
    main()
