"""
================================================
A fleet commissioned one structure after another
================================================

Each new bridge of a fleet is commissioned on its first healthy observations
alone. Learning alone, it knows nothing of its damage states; with
:class:`~skrbal.mixture.PooledGMMClassifier`, it starts from what the
structures already in service learned (:class:`~skrbal.mixture.FleetPrior`).
This example commissions a small fleet in order, both ways, on the same
data, and draws each structure's inspections and false repairs against its
place in the commissioning order. ``benchmarks/bench_fleet.py`` runs the
full study (30 structures, many repetitions).
"""

# %%
# The fleet
# ---------
# Twelve Z24-like bridges (:func:`~skrbal.datasets.make_fleet`), shorter
# records than Z24's to keep the example quick; every structure as hard as
# the ``'z24-hard'`` case study.
import warnings

import matplotlib.pyplot as plt
import numpy as np

from skrbal import z24_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.datasets import make_fleet
from skrbal.mixture import FleetPrior, PooledGMMClassifier

fleet = make_fleet(12, n_samples=1500, random_state=2)
process = z24_decision_process()
print(fleet.properties[["asset", "damaged", "repair", "unlike"]])

# %%
# Commissioning in order
# ----------------------
# Each structure: its first 50 healthy observations labelled, nothing else;
# then its whole record decided by the plain EVPI rule. The ``shared`` arm's
# fleet prior is learned from the labels the earlier structures had at the
# end of their records (their commissioning windows and inspection results).
warnings.simplefilter("ignore")  # each start names the unlabelled states


def commission(shared: bool):
    records, rows = [], []
    for structure in fleet.structures:
        initial = np.flatnonzero(structure.y == 1)[:50]
        prior = None
        if shared and len(records) >= 2:
            prior = FleetPrior.from_structures(records, classes=[1, 2, 3, 4])
        learner = RiskBasedLearner(
            estimator=PooledGMMClassifier(fleet=prior, classes=[1, 2, 3, 4]),
            process=process,
        ).fit(structure.X, structure.y, initial=initial)
        steps = learner.history_.steps
        inspected = steps["inspected"].to_numpy(bool)
        healthy = structure.y <= 2
        rows.append(
            (
                int(inspected.sum()),
                100 * float((steps["action"].to_numpy()[healthy] != 0).mean()),
                float(learner.history_.totals["regret"]),
            )
        )
        labelled = np.union1d(initial, np.flatnonzero(inspected))
        records.append((structure.X[labelled], structure.y[labelled]))
    return np.array(rows)


alone, shared = commission(False), commission(True)
print(f"total regret alone {alone[:, 2].sum():.0f}, shared {shared[:, 2].sum():.0f}")

# %%
# Inspections and false repairs against commissioning order
# ---------------------------------------------------------
# The first two structures have no fleet yet and decide alike; from then on
# the fleet tells each new structure where its damage and its frost lie.
order = np.arange(1, len(fleet.structures) + 1)
unlike = fleet.properties["unlike"].to_numpy()
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharex=True)
for ax, column, title in zip(
    axes, (0, 1), ("inspections", "false repair (% of healthy steps)")
):
    ax.plot(order, alone[:, column], "o-", label="alone")
    ax.plot(order, shared[:, column], "s-", label="shared strength")
    ax.plot(order[unlike], shared[unlike, column], "kx", ms=10, label="damage unlike")
    ax.set_xlabel("commissioning order")
    ax.set_title(title)
axes[0].legend()
fig.tight_layout()
plt.show()
