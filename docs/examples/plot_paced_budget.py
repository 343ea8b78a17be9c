"""
==========================================
A budget paced over a campaign, not spent
==========================================

An inspection budget spent first come, first served (``CostThreshold() &
SpendCap(...)``) goes on the first observations whose EVPI exceeds the cost:
while the model is young, that is most of them. On a bridge whose damage
comes at the end of the record, nothing is left when it comes.
:class:`~skrbal.budget.PacedBudget` spreads the same money over the period:
it inspects when the EVPI exceeds the cost plus a price that rises with each
inspection and falls while the spend lags the pro-rata budget, keeps a
reserve for EVPI that persists, and explores first come, first served only
while the model is young.
"""

# %%
# The Z24-like case, damage in the last 12 %
# ------------------------------------------
# The case study of :func:`~skrbal.experiments.get_case_study` on
# :func:`~skrbal.datasets.make_z24_like`: four natural frequencies through a
# frosty winter and a hot summer, progressive damage at the end. The
# unconstrained EVPI rule sets the scale of the budget: half its inspections.
import matplotlib.pyplot as plt
import numpy as np

from skrbal.active import RiskBasedLearner
from skrbal.budget import CostThreshold, PacedBudget, SpendCap
from skrbal.experiments import get_case_study
from skrbal.mixture import BayesianGMMClassifier

case = get_case_study("z24")
process = case.process()
cost = process.inspection_cost
split = case.split(random_state=1)
n_steps = split.X_stream.shape[0]
onset = int(np.flatnonzero(split.y_stream >= 3)[0])


def campaign(budget):
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(), process=process, budget=budget
    )
    return learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)


free = campaign(None)
budget = round(free.history_.totals["n_inspections"] / 2)
print(f"unconstrained rule: {free.history_.totals['n_inspections']} inspections")
print(f"budget: {budget} inspections, {budget * cost:g} over {n_steps} steps")
print(f"damage from step {onset}")

# %%
# Spend over time
# ---------------
# The same money, the same model, the same stream.
policies = {
    "first come, first served": CostThreshold()
    & SpendCap(limit=budget * cost, period=float(n_steps)),
    "paced (PacedBudget)": PacedBudget(limit=budget * cost, period=float(n_steps)),
}
fig, ax = plt.subplots(figsize=(8, 3.5))
for (name, policy), colour in zip(policies.items(), ("tab:red", "tab:blue")):
    learner = campaign(policy)
    queries = learner.history_.queries
    steps = queries.loc[queries["step"] >= 0, "step"].to_numpy()
    labels = queries.loc[queries["step"] >= 0, "label"].to_numpy()
    spend = cost * np.arange(1, steps.size + 1)
    ax.step(
        np.r_[0, steps, n_steps],
        np.r_[0, spend, spend[-1:]],
        where="post",
        color=colour,
        label=name,
    )
    damaged = labels >= 3
    ax.plot(steps[damaged], spend[damaged], "o", color=colour, mfc="none")
    totals = learner.history_.totals
    print(
        f"{name}: {totals['n_inspections']} inspections, last at step "
        f"{steps.max()}, damaged state inspected: {bool(damaged.any())}, "
        f"regret {totals['regret']:.0f}"
    )
ax.axvspan(onset, n_steps, color="0.9", label="damaged")
ax.axhline(budget * cost, color="0.5", linestyle=":", label="budget")
ax.set_xlabel("stream step")
ax.set_ylabel("spend")
ax.legend(loc="center right", fontsize="small")
ax.set_title("circles: inspections that found damage")
fig.tight_layout()

# %%
# This is one split. Over 100 splits and budgets of 25 % and 50 % of the
# unconstrained rule, split over one, two or four periods,
# ``benchmarks/bench_budget.py`` compares both with random inspection and
# scikit-activeml's stream strategies; see :ref:`budgets` for the table, the
# cells where pacing loses included.
