"""
============================================================
Choosing between a perfect and a cheap, imperfect inspection
============================================================

The paper's agent inspects with a perfect method whenever the expected value
of perfect information (EVPI) exceeds its cost. Here the agent also has a
cheap method: a fifth of the cost, which detects damage 85 % of the time and
calls damage in an undamaged structure 4 % of the time. Per observation it
picks the method of largest expected value of sample information (EVSI) net
of its cost (:func:`~skrbal.inspection.choose_inspection`), and learns each
report as soft evidence. We compare, on repetitions of the synthetic case
study, the perfect method alone, the cheap one alone, the choice between the
two, and random inspections with the same spend per method.
"""

# %%
# Two inspection methods
# ----------------------
# The cheap method reports "damage found" or "no damage found"; its
# confusion matrix has one row per health state. Where is each method worth
# its cost? For beliefs spread between undamaged (state 1) and critical
# damage (state 4), the net value ``EVSI - cost`` of each:
import matplotlib.pyplot as plt
import numpy as np

from skrbal.active import RiskBasedLearner
from skrbal.experiments import get_case_study
from skrbal.inspection import InspectionMethod, evsi, perfect_inspection
from skrbal.mixture import BayesianGMMClassifier

case = get_case_study("synthetic")
process = case.process()
perfect = perfect_inspection(process)
cheap = InspectionMethod(
    name="cheap",
    cost=0.2 * process.inspection_cost,
    confusion=[[0.96, 0.04], [0.96, 0.04], [0.15, 0.85], [0.15, 0.85]],
    outcomes=["no damage found", "damage found"],
)
methods = [perfect, cheap]

p_critical = np.linspace(0, 1, 201)
beliefs = np.column_stack(
    [1 - p_critical, np.zeros_like(p_critical), np.zeros_like(p_critical), p_critical]
)
net = evsi(beliefs, process, methods) - [perfect.cost, cheap.cost]
fig, ax = plt.subplots(figsize=(6, 3.2))
for k, method in enumerate(methods):
    ax.plot(p_critical, net[:, k], label=f"{method.name} (cost {method.cost:g})")
ax.axhline(0, color="grey", lw=0.8)
ax.set_xlabel("belief in critical damage (rest: undamaged)")
ax.set_ylabel("EVSI - cost")
ax.legend()
fig.tight_layout()

# %%
# Four policies, the same repetitions
# -----------------------------------
# Each repetition redraws the split and the initial labelled set; all four
# policies see the same split and the same seed for the report draws. The
# random policy makes as many inspections with each method as the EVSI
# choice did (:meth:`~skrbal.active.RiskBasedLearner.random_baseline`).
# ``benchmarks/bench_inspection.py`` runs 200 repetitions of both case
# studies; here 20 repetitions of the synthetic one keep the example quick.
policies = {"perfect": [perfect], "cheap": [cheap], "both": methods}
rows = []
for rep in range(20):
    split = case.split(random_state=rep)
    learners = {
        name: RiskBasedLearner(
            estimator=BayesianGMMClassifier(),
            process=process,
            inspections=inspections,
            random_state=rep,
        )
        for name, inspections in policies.items()
    }
    for name in ("perfect", "cheap", "both", "random"):
        if name == "random":
            learner = learners["both"].random_baseline(random_state=rep)
        else:
            learner = learners[name]
        learner.fit(split.X_stream, split.y_stream, initial=split.initial_indices)
        totals = learner.history_.totals
        rows.append(
            (
                name,
                totals["regret"],
                totals["spend_by_method"].get("perfect", 0.0),
                totals["spend_by_method"].get("cheap", 0.0),
            )
        )

names = ["perfect", "cheap", "both", "random"]
table = {name: np.array([r[1:] for r in rows if r[0] == name]) for name in names}
print(f"{'policy':8} {'regret':>16} {'spend perfect':>14} {'spend cheap':>12}")
for name in names:
    regret, spend_p, spend_c = np.median(table[name], axis=0)
    print(f"{name:8} {regret:16.1f} {spend_p:14.1f} {spend_c:12.1f}")

# %%
# Total loss: regret plus spend
# -----------------------------
# The EVSI rule trades the regret of a decision against the cost of the
# inspection, so the sum of the two is the measure to compare (log scale:
# the cheap method alone misses damage, at a cost of thousands).
loss = [table[name][:, 0] + table[name][:, 1:].sum(axis=1) for name in names]
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.boxplot(loss, tick_labels=names)
ax.set_yscale("symlog", linthresh=10)
ax.set_ylabel("regret + inspection spend")
fig.tight_layout()

# %%
# The choice between methods beats the cheap method alone and random
# inspections with the same spend by far. It does not beat the perfect
# method alone: EVSI values a report for the decision at hand, not for what
# the model learns from it, and the cheap method's reports cannot separate
# states that share a confusion row, so the model learns less from them.
# The user guide (:ref:`imperfect_inspections`) and
# ``benchmarks/results/inspection.md`` give the full study.
plt.show()
