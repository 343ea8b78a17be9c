"""Labels taken before a repair count as the repair left their state.

A stream learner told of a repair (``fit(..., actions=)``) no longer reads
the damage labels of the structure it was before as how often damage occurs
now: the moved counts are checked against a label-by-label product of the
repairs' transitions, a block against its steps one by one, and the learner
against itself not told.
"""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from skrbal import BayesianGMMClassifier, synthetic_decision_process
from skrbal._learning._repairs import RepairedClassWeights, concentration
from skrbal.active import RiskBasedLearner
from skrbal.mixture import PooledGMMClassifier

PROCESS = synthetic_decision_process()


def _state(seed, n=60):
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 5, size=n)
    actions = (rng.uniform(size=n) < 0.1).astype(int)
    labelled = sorted(rng.choice(n, size=20, replace=False).tolist())
    return SimpleNamespace(y=y, labelled=labelled, exogenous_actions=actions)


def _by_label(state, step):
    """Each label before ``step`` moved by every repair from it to ``step``."""
    transition = np.asarray(PROCESS.transition)
    moved = np.zeros(4)
    for label in [s for s in state.labelled if s < step]:
        dist = np.eye(4)[state.y[label] - 1]
        for r in range(label, step):
            if state.exogenous_actions[r] != 0:
                dist = dist @ transition[state.exogenous_actions[r]]
        moved += dist
    return moved


@pytest.mark.parametrize("seed", range(4))
def test_moved_counts_are_each_labels_repairs_in_turn(seed):
    state = _state(seed)
    repaired = RepairedClassWeights(PROCESS)
    for step in (0, 7, 31, 60):
        counts, moved = repaired.moved_counts(
            state, step, repaired.repairs(state, step)
        )
        np.testing.assert_allclose(moved, _by_label(state, step), atol=1e-12)
        assert counts.sum() == pytest.approx(moved.sum())


@pytest.mark.parametrize("seed", range(4))
def test_a_block_equals_its_steps_one_by_one(seed):
    state = _state(seed)
    repaired = RepairedClassWeights(PROCESS)
    rng = np.random.default_rng(seed + 10)
    proba = rng.dirichlet(np.ones(4), size=30)
    # a Dirichlet prior of 1 per state plus every label the model learnt
    weights = 1.0 + np.bincount(state.y[state.labelled] - 1, minlength=4)
    block = repaired.beliefs(proba, weights, state, 25)
    one = np.vstack(
        [repaired.beliefs(proba[[i]], weights, state, 25 + i) for i in range(30)]
    )
    np.testing.assert_allclose(block, one, rtol=1e-12)
    # the formula: (c - n + n') / c times the model's belief, normalised
    for i in (0, 12, 29):
        counts, moved = repaired.moved_counts(
            state, 25 + i, repaired.repairs(state, 25 + i)
        )
        expected = (weights - counts + moved) / weights * proba[i]
        np.testing.assert_allclose(block[i], expected / expected.sum(), rtol=1e-12)


def test_without_a_repair_the_model_decides():
    state = _state(0)
    state.exogenous_actions = np.zeros(60, dtype=int)
    proba = np.full((5, 4), 0.25)
    repaired = RepairedClassWeights(PROCESS)
    assert repaired.beliefs(proba, np.ones(4), state, 10) is proba
    state.exogenous_actions = None  # not told (an agent's own recommendations)
    assert repaired.beliefs(proba, np.ones(4), state, 10) is proba


def test_concentration_of_the_models():
    X = np.r_[np.zeros(5), np.ones(5) * 4][:, None]
    y = np.r_[np.ones(5, int), np.full(5, 4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pooled = PooledGMMClassifier(classes=[1, 2, 3, 4], window=5).fit(X, y)
    # the Dirichlet prior (1 each) plus the label counts, in the process's order
    np.testing.assert_allclose(concentration(pooled, [1, 2, 3, 4]), [6, 1, 1, 6])
    np.testing.assert_allclose(concentration(pooled, [4, 1]), [6, 6])
    assert concentration(object(), [1]) is None


def _record(seed):
    """Healthy, then damage (state 4) the learner inspects, a repair, healthy."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.repeat(1, 60), np.repeat(4, 40), np.repeat(1, 200)]
    X = rng.normal(np.array([0.0, 2.0, 4.0, 6.0])[y - 1], 1.0)[:, None]
    actions = np.zeros(y.size, dtype=int)
    actions[99] = 1  # repaired at the last damaged step
    return X, y, actions


@pytest.mark.parametrize("seed", range(3))
def test_a_learner_told_of_the_repair_asks_less_after_it(seed):
    X, y, actions = _record(seed)
    runs = []
    for told in (None, actions):
        learner = RiskBasedLearner(
            estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
            process=PROCESS,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner.fit(X, y, initial=np.arange(10), actions=told)
        runs.append(learner.history_.steps.iloc[100:])
    untold, told = runs
    # Before the repair the two decide alike; after it the told one's damage
    # labels count as repaired: less value in inspecting healthy steps.
    assert told["evpi"].sum() < 0.7 * untold["evpi"].sum()
    assert told["inspected"].sum() < untold["inspected"].sum()


def test_an_agent_told_of_the_repair_decides_as_the_learner():
    from skrbal.online import RiskBasedAgent

    X, y, actions = _record(0)

    def params():
        return dict(
            estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
            process=PROCESS,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = RiskBasedLearner(**params()).fit(
            X, y, initial=np.arange(10), actions=actions
        )
        steps = learner.history_.steps.iloc[10:]
        agent = RiskBasedAgent(**params())
        inspected = []
        with agent.fit(X[:10], y[:10]):
            for t in range(10, y.size):
                row = next(agent.observe(X[t : t + 1]).itertuples())
                inspected.append(bool(row.inspect))
                if row.inspect:
                    agent.record_inspection(int(row.request_id), y[t])
                if actions[t]:
                    agent.record_action(t, int(actions[t]))  # the crew repaired
    np.testing.assert_array_equal(inspected, steps["inspected"])
    assert sum(inspected[90:]) <= 3  # as the learner told (an untold one: 5)


def test_with_history_prior_the_models_share_counts_them_as_repaired():
    X, y, actions = _record(1)
    runs = []
    for told in (None, actions):
        learner = RiskBasedLearner(
            estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
            process=PROCESS,
            history_prior=0.3,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner.fit(X, y, initial=np.arange(10), actions=told)
        runs.append(learner.history_.steps.iloc[100:])
    assert runs[1]["evpi"].sum() < runs[0]["evpi"].sum()
