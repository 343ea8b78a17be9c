"""
======================================
A Z24-like bridge: a repeated study
======================================

The paper's second case study monitors the Z24 bridge in Switzerland: the
first four natural frequencies over a year, with frost stiffening the deck
in winter and damage introduced at the end. The record cannot be shipped;
:func:`~skrbal.datasets.make_z24_like` generates one with its difficulties,
and ``get_case_study("z24", data=path)`` runs the same study on a copy of
the real one. This example looks at the data and the decision, then repeats
risk-based learning against random inspections on fresh splits, as the paper
does (with 1000 repetitions; a few suffice here).
"""

# %%
# The record
# ----------
# Four correlated frequencies. Classes: normal (1), cold (2: frozen deck,
# every frequency up), incipient (3) and advanced damage (4); 80 % of the
# record is normal.
import matplotlib.pyplot as plt
import numpy as np

from skrbal import z24_decision_process
from skrbal.datasets import make_z24_like
from skrbal.plotting import state_styles

X, y, actions = make_z24_like(random_state=0)
process = z24_decision_process()
# Every figure of skrbal draws a state in the colour state_styles gives it.
colours = np.array([style.color for style in state_styles(process).values()])
states, counts = np.unique(y, return_counts=True)
print("observations per state:", dict(zip(states.tolist(), counts.tolist())))

fig, axes = plt.subplots(4, 1, figsize=(8, 6), sharex=True)
for mode, ax in enumerate(axes):
    ax.scatter(np.arange(len(y)), X[:, mode], c=colours[y - 1], s=1)
    ax.set_ylabel(f"mode {mode + 1} (Hz)")
axes[-1].set_xlabel("observation")
fig.tight_layout()

# %%
# The classes overlap: a projection on the first two principal components.
from sklearn.decomposition import PCA

projected = PCA(n_components=2).fit_transform((X - X.mean(axis=0)) / X.std(axis=0))
fig, ax = plt.subplots(figsize=(6, 4))
for k, name in enumerate(process.state_names):
    ax.scatter(*projected[y == k + 1].T, s=3, c=colours[k], label=name)
ax.set_xlabel("first principal component")
ax.set_ylabel("second principal component")
ax.legend(markerscale=4, fontsize="small")
fig.tight_layout()

# %%
# The decision
# ------------
# Maintenance costs 100 and an inspection 30. Both damage states call for
# maintenance, so telling them apart is worth nothing; telling incipient
# damage from a cold, undamaged deck is worth a great deal.
print("Q(state, action) for do nothing / perform maintenance:")
print(process.state_action_utility)
print("optimal action of each state:", process.perfect_information_action(states))

# %%
# Repeated study
# --------------
# Each repetition splits the standardised record at random into a test set
# and a stream with 0.3 % of it labelled, runs the risk-based learner with a
# Bayesian Gaussian mixture, and a random baseline that inspects as many
# times.
from skrbal.experiments import get_case_study, run_study
from skrbal.plotting import ClassProportionDisplay, QueryCurveDisplay

case = get_case_study("z24")
study = run_study(case, ["gmm-evpi", "gmm-random"], n_repeats=12, progress=False)
print(
    study.totals.groupby("method")[
        ["n_inspections", "regret", "final_decision_accuracy", "final_f1_macro"]
    ].median()
)

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
QueryCurveDisplay.from_study(study, "decision_accuracy", ax=axes[0], max_queries=10)
QueryCurveDisplay.from_study(study, "f1_macro", ax=axes[1], max_queries=10)
fig.tight_layout()

# %%
# EVPI-guided inspections buy decision accuracy faster than random ones,
# with few inspections: most of the record is normal and far from the
# decision boundary. As in the paper, the lead fades over later queries, and
# the spread between repetitions is wide. Which classes end up labelled tells where the value of
# information lies: the learner hardly ever inspects advanced damage, whose
# action is never in doubt.
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, method in zip(axes, ["gmm-evpi", "gmm-random"]):
    ClassProportionDisplay.from_study(
        study, method, process=case.process(), ax=ax, max_queries=10
    )
fig.tight_layout()
plt.show()
