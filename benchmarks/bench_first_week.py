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
damaged or severe step, repairs on severe steps, and the share of healthy
steps repaired (false repair).

Run (from the repository root)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_first_week.py
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


def replay(
    stated: bool, *, random_state: int = 7, n_commissioning: int = 48, late: int = 36
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
    agent = RiskBasedAgent(estimator=estimator, process=trial_process(STATES)).fit(
        X[:n_commissioning], states[:n_commissioning]
    )
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
    return {
        "statement": "stated direction" if stated else "default prior",
        "inspections": int(inspected.sum()),
        "first damage inspection (steps after onset)": (
            int(found[0] - onset) if found.size else None
        ),
        "repairs on severe steps": f"{int(acted[y == 4].sum())} of {(y == 4).sum()}",
        "false repair": f"{acted[y <= 2].mean():.2%}",
        "false repair, cold steps": f"{acted[y == 2].mean():.2%}",
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random-state", type=int, default=7)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = [replay(stated, random_state=args.random_state) for stated in (False, True)]
    print(pd.DataFrame(rows).to_markdown(index=False))


if __name__ == "__main__":
    main()
