"""
============================================
The timeline of a live agent, and its report
============================================

A :class:`~skrbal.online.RiskBasedAgent` watches the synthetic degradation
stream, one observation an hour, with at most 21 (three inspections) to
spend a week; each inspection report comes back a day after it was
requested. :class:`~skrbal.plotting.AgentHistoryDisplay` draws what it did,
and ``skrbal agent report`` writes the same, with its status, as one HTML
page.
"""

# %%
# An agent with delayed results and a weekly budget
# -------------------------------------------------
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from skrbal.budget import CostThreshold, SpendCap
from skrbal.experiments import get_case_study
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent
from skrbal.plotting import AgentHistoryDisplay

case = get_case_study("synthetic")
split = case.split(random_state=0)
initial = split.initial_indices
stream = np.setdiff1d(np.arange(split.y_stream.size), initial)[:1500]
X, y = split.X_stream[stream], split.y_stream[stream]
start = pd.Timestamp("2025-01-01", tz="UTC")
hours = pd.date_range(start, periods=len(initial) + len(stream), freq="h")

store = str(Path(tempfile.mkdtemp()) / "fleet.db")
agent = RiskBasedAgent(
    estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
    process=case.process(),
    budget=CostThreshold()
    & SpendCap(limit=21.0, period=7 * 86400.0, origin=start.timestamp()),
    store=store,
    name="bridge",
)
agent.fit(
    split.X_stream[initial], split.y_stream[initial], timestamps=hours[: len(initial)]
)
times = hours[len(initial) :]
waiting = {}  # request id -> the stream position whose report comes a day later
for i in range(0, len(y), 24):  # a day of observations at a time
    decisions = agent.observe(X[i : i + 24], timestamps=times[i : i + 24])
    for request, position in list(waiting.items()):
        agent.record_inspection(request, y[position])
        del waiting[request]
    asked = decisions["request_id"].notna().to_numpy()
    for request, offset in zip(decisions["request_id"][asked], np.flatnonzero(asked)):
        waiting[int(request)] = i + offset

# %%
# The timeline
# ------------
# Beliefs, EVPI against the inspection cost with each request (in the colour
# of the state found), the recommended actions, and the spend of each week
# against its limit.
display = AgentHistoryDisplay.from_agent(agent)
display.figure_.suptitle("agent 'bridge': 1,500 hours")

# %%
# The spend of each week: never above the limit.
print(display.spend_by_period().tail())

# %%
# The report page
# ---------------
# The same from the shell, with the status, the waiting requests and the last
# warnings, as one self-contained HTML file:
# ``skrbal agent report --store fleet.db --out report.html``.
agent.close()
from skrbal.cli import main  # noqa: E402

page = Path(store).with_name("report.html")
main(["agent", "report", "--store", store, "--out", str(page)])
print(f"{page.stat().st_size / 1000:.0f} kB")
