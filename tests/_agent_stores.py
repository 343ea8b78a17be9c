"""Agent stores to draw and report on (tests/test_plotting_agent.py,
tests/test_agent_report.py): every kind of request, times as dates."""

import warnings

import numpy as np
import pandas as pd
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.exceptions import RequestExpiredWarning
from skrbal.online import RiskBasedAgent

START = pd.Timestamp("2025-01-01", tz="UTC")
MEANS = np.array([-5.0, -0.7, 5.8, 9.0])


def stream(n: int, seed: int = 0):
    """A one-feature stream of the four synthetic states, ambiguous enough
    that the agent inspects (states 3 and 4 overlap)."""
    rng = np.random.default_rng(seed)
    y = np.tile([1, 2, 3, 4], n // 4 + 1)[:n]
    return rng.normal(MEANS[y - 1], 2.0)[:, None], y


def grow_agent(store, name: str, n: int = 200, *, dates: bool = True, seed=0):
    """Commission ``name`` in ``store`` and observe ``n`` rows (hourly dates
    or steps): one request answered, one cancelled, some expired, others open.
    The budget caps the spend per day (or per 24 steps). Returns the truth."""
    X, y = stream(n + 8, seed)
    day = 86400.0 if dates else 24
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process().set_params(inspection_cost=1.0),
        budget=CostThreshold()
        & SpendCap(limit=4.0, period=day, origin=START.timestamp() if dates else 0),
        request_timeout=2 * day,
        store=store,
        name=name,
    )
    times = pd.date_range(START, periods=n + 8, freq="h") if dates else None
    half = 8 + n // 2
    agent.fit(X[:8], y[:8], timestamps=times[:8] if dates else None)
    first = agent.observe(X[8:half], times[8:half] if dates else None)
    ids = first["request_id"].dropna().astype(int).tolist()
    steps = first.set_index("request_id")["step"]
    assert len(ids) >= 3, "the stream must make the agent inspect"
    agent.record_inspection(ids[0], int(y[steps[ids[0]]]))
    agent.cancel_request(ids[1], reason="no <access> & rain")
    with warnings.catch_warnings():  # the expiry is meant
        warnings.simplefilter("ignore", RequestExpiredWarning)
        agent.observe(X[half:], times[half:] if dates else None)
    agent.close()
    return y
