"""
==========================================================
A live agent on a bridge: delayed results, a yearly budget
==========================================================

A :class:`~skrbal.online.RiskBasedAgent` watches the Z24-like bridge
(:func:`~skrbal.datasets.make_z24_like`: four natural frequencies, frost in
winter, damage at the end of the record) as a monitoring system would: the
observations arrive a day at a time over two years, an inspection report
comes back a week after it was requested, and the owner can pay for at most
four inspections a year. The agent lives in a SQLite file, so it could be
stopped and resumed at any point; at the end it is.
"""

# %%
# The bridge, the decision and the commissioning inspections
# ----------------------------------------------------------
# The case study of the paper: the record is standardised, half of it is the
# stream (in temporal order) and 0.3 % of the stream was inspected at
# commissioning. The stream gets timestamps, one observation every nine hours,
# which is about two years.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skrbal.budget import CostThreshold, SpendCap
from skrbal.experiments import get_case_study
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent
from skrbal.plotting import state_styles

case = get_case_study("z24")
process = case.process()
split = case.split(random_state=0)
initial = split.initial_indices
stream = np.setdiff1d(np.arange(split.y_stream.size), initial)
X, y = split.X_stream[stream], split.y_stream[stream]
hour, day, year = 3600.0, 86400.0, 365.25 * 86400.0
times = np.arange(y.size) * 9 * hour
print(f"{initial.size} commissioning inspections, states {split.y_stream[initial]}")
print(f"{y.size} observations over {times[-1] / year:.1f} years")
print(f"inspection cost {process.inspection_cost}, actions {process.action_names}")

# %%
# Two agents: the paper's rule, and the rule within a yearly budget
# -----------------------------------------------------------------
# Both inspect when the EVPI exceeds the cost; the second also keeps to four
# inspections per year (:class:`~skrbal.budget.SpendCap`, periods in seconds
# because the observations have timestamps). Each day's observations go to
# :meth:`~skrbal.online.RiskBasedAgent.observe` together; a requested
# inspection's result is recorded seven days later with
# :meth:`~skrbal.online.RiskBasedAgent.record_inspection`, and the model
# learns it then. Decisions made in the meantime use the model as it was.
folder = Path(tempfile.mkdtemp())
yearly = CostThreshold() & SpendCap(limit=4 * process.inspection_cost, period=year)
DELAY = 7 * day
# The observations of each day, as (start, stop) positions.
day_index = (times // day).astype(int)
day_starts = np.r_[0, np.flatnonzero(np.diff(day_index)) + 1]
day_stops = np.r_[day_starts[1:], y.size]


def run(budget, store, name):
    agent = RiskBasedAgent(
        estimator=BayesianGMMClassifier(),
        process=process,
        budget=budget,
        store=store,
        name=name,
    )
    # Commissioning inspections in the days before the monitoring starts:
    # with timestamps, the budget counts time in seconds.
    commissioned = (np.arange(initial.size) - initial.size) * day
    agent.fit(split.X_stream[initial], split.y_stream[initial], timestamps=commissioned)
    pending = []  # (when the report comes, request id, position in the stream)
    first = agent.n_steps_
    for start, stop in zip(day_starts, day_stops):
        now = times[start]
        for report in [p for p in pending if p[0] <= now]:
            due, request, i = report
            agent.record_inspection(request, y[i], timestamp=due)
            pending.remove(report)
        decisions = agent.observe(X[start:stop], timestamps=times[start:stop])
        for row in decisions.loc[decisions["inspect"]].itertuples():
            i = row.step - first
            pending.append((times[i] + DELAY, row.request_id, i))
    history = agent.history_.steps
    agent.close()
    return history.iloc[first:].reset_index(drop=True)


budgeted = run(yearly, folder / "bridge.db", "z24-budgeted")
# The comparison needs no durable store: an in-memory one.
unlimited = run(None, None, "z24-unlimited")

# %%
# Spend and decisions over time
# -----------------------------
# Top: the EVPI of every observation for the budgeted agent, coloured by the
# true state (unknown to the agent), with the inspections each agent
# requested. Bottom: the cumulative spend. The first cold spell makes the
# frequencies ambiguous: the budgeted agent spends the whole of its first
# year's money there and is silent until the next year begins, then spends
# the second year's at the onset of damage. The unlimited agent asks twice as
# often, and its decisions are a little better (below).
styles = state_styles(process)
days = times / day
fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True, constrained_layout=True)
for label, style in styles.items():
    where = y == label
    axes[0].scatter(
        days[where], budgeted["evpi"][where], s=4, color=style.color, label=style.name
    )
axes[0].axhline(process.inspection_cost, color="black", lw=0.8, ls="--")
top = budgeted["evpi"].max()
for history, height, name in (
    (unlimited, 1.08, "unlimited"),
    (budgeted, 1.16, "budget"),
):
    asked = history["request_id"].notna().to_numpy()
    axes[0].scatter(
        days[asked],
        np.full(asked.sum(), height * top),
        marker="v",
        s=25,
        color="black" if name == "budget" else "grey",
        label=f"inspection ({name})",
    )
axes[0].set_ylabel("EVPI")
axes[0].legend(fontsize="small", ncol=3, loc="center left")
for history, name in ((unlimited, "EVPI > cost"), (budgeted, "EVPI > cost, 4 / year")):
    spend = np.cumsum(history["request_id"].notna()) * process.inspection_cost
    axes[1].step(days, spend, where="post", label=name)
for k in (1, 2):
    for ax in axes:
        ax.axvline(k * year / day, color="grey", lw=0.8, ls=":")
axes[1].set_ylabel("cumulative inspection spend")
axes[1].set_xlabel("days since the monitoring started")
axes[1].legend()

# %%
# What the decisions were worth
# -----------------------------
# The action taken at each step (after the result, for an inspected one) is
# compared with the action perfect information would have chosen. The cost
# of a decision is the utility it loses against that action.
utility = process.state_action_utility
state = np.searchsorted(process.classes_, y)
best = process.perfect_information_action(y)
for name, history in (("unlimited", unlimited), ("budgeted", budgeted)):
    taken = history["action"].to_numpy()
    regret = utility[state, best] - utility[state, taken]
    n_inspections = int(history["request_id"].notna().sum())
    print(
        f"{name:>9}: {n_inspections:3d} inspections, decision accuracy "
        f"{np.mean(taken == best):.3f}, regret {regret.sum():7.1f} + spend "
        f"{n_inspections * process.inspection_cost:6.1f}"
    )

# %%
# Restart from the store
# ----------------------
# The SQLite file holds the budgeted agent (a store holds any number of
# named agents, one per asset). Reopening it rebuilds its model from
# the stored commissioning data and inspection results (no pickles) and
# resumes the budget where it stopped.
with RiskBasedAgent.from_store(folder / "bridge.db", "z24-budgeted") as agent:
    status = agent.status()
print(f"{status['n_observations']} observations, {status['n_results']} results")
print(f"spend {status['spend']}, budget state {status['budget_state']}")
plt.show()
