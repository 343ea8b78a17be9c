"""
===============================================
Quick start: a risk-based learner in a Pipeline
===============================================

The shortest path through skrbal: describe the maintenance decision, put a
classifier (here a scikit-learn :class:`~sklearn.pipeline.Pipeline`) in a
:class:`~skrbal.active.RiskBasedLearner`, let it walk a monitoring stream,
and judge the result by the decisions it leads to.
"""

# %%
# The decision
# ------------
# :func:`~skrbal.synthetic_decision_process` is the maintenance decision of
# the paper's synthetic case study: four health states, two actions (do
# nothing or repair) and an inspection that costs 7. The expected value of
# perfect information (EVPI) of a belief says what an inspection is worth.
from skrbal import synthetic_decision_process

process = synthetic_decision_process()
beliefs = [[0.7, 0.0, 0.2, 0.1], [0.5, 0.0, 0.0, 0.5]]
print("optimal actions:", process.optimal_action(beliefs))
print("EVPI:", process.evpi(beliefs))
print("worth an inspection:", process.should_inspect(beliefs))

# %%
# A classifier in a Pipeline
# --------------------------
# Any classifier with ``predict_proba`` works. The Bayesian Gaussian mixture
# is told all four states, so it has a column for each even when the
# labelled set lacks some of them.
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skrbal import BayesianGMMClassifier
from skrbal.datasets import make_degradation_stream, stream_test_split

X, y, actions = make_degradation_stream(random_state=0)
split = stream_test_split(X, y, actions, random_state=1)
model = make_pipeline(StandardScaler(), BayesianGMMClassifier(classes=[1, 2, 3, 4]))

# %%
# Learn on the stream
# -------------------
# The learner clones the Pipeline, fits it to the initially labelled steps
# and, step by step, inspects when the EVPI of the current belief exceeds
# the inspection cost, refitting after each inspection.
from skrbal.active import RiskBasedLearner

learner = RiskBasedLearner(estimator=model, process=process)
learner.fit(
    split.X_stream,
    split.y_stream,
    initial=split.initial_indices,
    X_test=split.X_test,
    y_test=split.y_test,
)
totals = learner.history_.totals
print(f"{totals['n_inspections']} inspections over {totals['n_decisions']} steps")
print(f"stream decisions as good as perfect information: {totals['decision_accuracy']}")
print(learner.history_.queries[["query", "step", "label", "decision_accuracy"]])

# %%
# Judge it by its decisions
# -------------------------
# :func:`~skrbal.metrics.decision_accuracy` compares the actions chosen from
# the model's beliefs with those of an operator who knows the true states;
# :func:`~skrbal.metrics.utility_regret` weighs each wrong action by what it
# costs.
from skrbal.metrics import decision_accuracy, utility_regret

final = learner.estimator_
proba = final.predict_proba(split.X_test)
print("test accuracy:", round(final.score(split.X_test, split.y_test), 3))
print(
    "test decision accuracy:",
    decision_accuracy(split.y_test, proba, process, classes=final.classes_),
)
print(
    "test regret per decision:",
    utility_regret(split.y_test, proba, process, classes=final.classes_),
)

# %%
# The classification accuracy is well below one, the decision accuracy is
# not: the model confuses states that call for the same action, and nothing
# is lost by that. The same measures select models: with
# :func:`~skrbal.metrics.make_decision_scorer`, ``cross_val_score`` or
# ``GridSearchCV`` rank candidates by decision quality.
from sklearn.model_selection import cross_val_score

from skrbal.metrics import make_decision_scorer

scores = cross_val_score(
    model,
    split.X_test[:600],
    split.y_test[:600],
    scoring=make_decision_scorer(process, metric="regret"),
    cv=3,
)
print("cross-validated negative regret:", scores.round(3))

# %%
# Where the final model would inspect
# -----------------------------------
# The EVPI of every test observation under the final model, each health
# state named above its cluster. The EVPI is highest on the cluster of
# significant damage: doing nothing is still its best action, but the least
# safely so, since a repair pays off once critical damage is likely enough.
# It exceeds the inspection cost (circled) only at a few points far out of
# their cluster, where the model's belief spreads over all four states,
# critical damage included.
import matplotlib.pyplot as plt
import numpy as np

evpi = process.evpi(proba, classes=final.classes_)
worth_it = evpi > process.inspection_cost
print(f"{worth_it.sum()} of {evpi.size} test observations worth an inspection")
print("their beliefs:", proba[worth_it].round(2), sep="\n")

labelled = learner.labelled_indices_
fig, ax = plt.subplots(figsize=(7, 4))
points = ax.scatter(*split.X_test.T, c=evpi, s=4, cmap="magma_r")
ax.scatter(
    *split.X_test[worth_it].T,
    s=120,
    facecolors="none",
    edgecolors="black",
    label=f"EVPI > inspection cost ({process.inspection_cost:g})",
)
ax.scatter(*split.X_stream[labelled].T, marker="x", c="tab:blue", label="labelled")
names = ["undamaged", "minor", "significant", "critical"]
for state, name in zip(final.classes_, names):
    centre = np.median(split.X_test[split.y_test == state, 0])
    ax.text(centre, 1.02, name, ha="center", transform=ax.get_xaxis_transform())
fig.colorbar(points, label="EVPI")
ax.set_xlabel("feature 1")
ax.set_ylabel("feature 2")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
