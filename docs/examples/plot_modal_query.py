"""
==============================
EVPI as a modAL query strategy
==============================

In pool-based active learning a batch of unlabelled observations is at
hand and the question is which to label next.
:class:`~skrbal.query.EVPISampling` ranks them by the expected value of
perfect information of their labels and has the signature of a `modAL
<https://modal-python.readthedocs.io>`_ query strategy, so it plugs into
modAL's ``ActiveLearner``. modAL 0.4.2 can query on current scikit-learn but
cannot ``teach`` on scikit-learn 1.8 or newer; the loop below uses
:class:`skrbal.active.ActiveLearner`, which has the same interface.
"""

# %%
# A pool and a few labels
# -----------------------
# The pool is half of the synthetic monitoring record (shuffled: a pool has
# no time order); the other half measures how good the decisions are.
import numpy as np

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal.datasets import make_degradation_stream, stream_test_split
from skrbal.query import EVPISampling

X, y, actions = make_degradation_stream(random_state=0)
split = stream_test_split(X, y, actions, random_state=1)
X_pool, y_pool = split.X_test, split.y_test
X_eval, y_eval = split.X_stream, split.y_stream
process = synthetic_decision_process()

rng = np.random.default_rng(0)
start = rng.choice(len(y_pool), size=8, replace=False)
print("initial labels:", y_pool[start])

# %%
# modAL's learner, EVPI's query
# -----------------------------
from modAL.models import ActiveLearner as ModALLearner

# The features are raw: the mixture's prior takes its mean and scale from the
# labelled data (fixed by the first fit, kept by every partial_fit).
data_prior = {"mean_prior": "data", "covariance_prior": "data"}
modal_learner = ModALLearner(
    estimator=BayesianGMMClassifier(**data_prior, classes=[1, 2, 3, 4]),
    query_strategy=EVPISampling(process=process),
    X_training=X_pool[start],
    y_training=y_pool[start],
)
indices, instances = modal_learner.query(X_pool, n_instances=5)
print("pool indices to label next:", indices)
print("their EVPI:", process.evpi(modal_learner.predict_proba(instances)).round(2))

# %%
# The loop, with skrbal's learner
# -------------------------------
# :class:`skrbal.active.ActiveLearner` takes the same arguments, queries the
# same way and teaches with ``partial_fit`` (an exact update for the
# Bayesian mixture). Compare EVPI with the usual strategies, each labelling
# one observation per round.
from functools import partial

from skrbal.active import ActiveLearner
from skrbal.metrics import decision_accuracy, utility_regret
from skrbal.query import entropy_sampling, random_sampling


def campaign(strategy, n_rounds=30):
    learner = ActiveLearner(
        estimator=BayesianGMMClassifier(**data_prior, classes=[1, 2, 3, 4]),
        query_strategy=strategy,
        X_training=X_pool[start],
        y_training=y_pool[start],
    )
    unlabelled = np.setdiff1d(np.arange(len(y_pool)), start)
    scores = []
    for _ in range(n_rounds + 1):
        proba = learner.predict_proba(X_eval)
        scores.append(
            (
                decision_accuracy(y_eval, proba, process, classes=learner.classes_),
                utility_regret(y_eval, proba, process, classes=learner.classes_),
                learner.score(X_eval, y_eval),
            )
        )
        chosen, _ = learner.query(X_pool[unlabelled], n_instances=1)
        learner.teach(X_pool[unlabelled[chosen]], y_pool[unlabelled[chosen]])
        unlabelled = np.delete(unlabelled, chosen)
    return np.array(scores), learner


results = {}
for name, strategy in [
    ("EVPI", EVPISampling(process=process)),
    ("entropy", entropy_sampling),
    ("random", partial(random_sampling, random_state=np.random.RandomState(0))),
]:
    results[name], learner = campaign(strategy)
    labels, counts = np.unique(learner.y_training, return_counts=True)
    print(f"{name:8s} labelled set: {dict(zip(labels.tolist(), counts.tolist()))}")

# %%
# EVPI sampling spends the labels on the boundary where the optimal action
# changes and gets the decisions right first; entropy sampling spreads them
# over every uncertain boundary, most of which do not matter to the
# decision.
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for name, scores in results.items():
    for ax, column in zip(axes, range(3)):
        ax.plot(scores[:, column], label=name)
for ax, title in zip(axes, ["decision accuracy", "regret per decision", "accuracy"]):
    ax.set_title(title)
    ax.set_xlabel("labels queried")
axes[0].legend()
fig.tight_layout()
plt.show()
