"""The history prior carried from each step's belief (history_filter).

A forward filter of the stream through the process's transition model: the
beliefs are checked against the recursion written out step by step, a block
against its steps one by one, and a one-step outlier after healthy steps
against the prediction from the last label alone.
"""

import warnings

import numpy as np
import pytest

from skrbal import BayesianGMMClassifier, DecisionProcess, synthetic_decision_process
from skrbal._learning import StreamState
from skrbal._learning._history import HistoryPrior
from skrbal.active import RiskBasedLearner

SMALL = DecisionProcess(
    transition=[
        [[0.9, 0.08, 0.02], [0.0, 0.85, 0.15], [0.0, 0.0, 1.0]],
        [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
    ],
    state_utility=[0.0, -20.0, -200.0],
    action_utility=[0.0, -40.0],
    inspection_cost=5.0,
    classes=["healthy", "damaged", "severe"],
)


def _state(n_steps=20):
    y = np.array(["healthy"] * n_steps, dtype=object)
    return StreamState(
        X=np.zeros((n_steps, 1)),
        y=y,
        known=np.isin(np.arange(n_steps), [2]),
        labelled=[2],
        action=np.zeros(n_steps, dtype=int),
        exogenous_actions=None,
    )


def _recursion(history, state, proba, weights, share, start):
    """f_t oc (s f_{t-1} T[a] + (1 - s) w) / w * proba_t, from the label."""
    transition = history.learnt_transition(state, start, state.action)
    a = np.array([1.0, 0.0, 0.0])
    for d in state.action[2:start].tolist():
        a = a @ transition[d]
    out = []
    for row in proba:
        belief = (share * a + (1 - share) * weights) / weights * row
        belief /= belief.sum()
        out.append(belief)
        d = int(SMALL.optimal_action(belief[None])[0])
        a = belief @ transition[d]
    return np.array(out)


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_beliefs_are_the_forward_recursion(share):
    rng = np.random.default_rng(3)
    state = _state()
    proba = rng.dirichlet(np.ones(3), size=8)
    weights = np.array([0.7, 0.2, 0.1])
    history = HistoryPrior(SMALL, share, filtering=True)
    got = history.beliefs(proba, weights, state, 6)
    expected = _recursion(history, state, proba, weights, share, 6)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_block_equals_its_steps_one_by_one():
    rng = np.random.default_rng(4)
    proba = rng.dirichlet(np.ones(3), size=8)
    weights = np.array([0.7, 0.2, 0.1])
    block = HistoryPrior(SMALL, 0.5, filtering=True).beliefs(
        proba, weights, _state(), 6
    )
    state = _state()
    history = HistoryPrior(SMALL, 0.5, filtering=True)
    one = []
    for i in range(8):
        belief = history.beliefs(proba[[i]], weights, state, 6 + i)[0]
        state.action[6 + i] = int(SMALL.optimal_action(belief[None])[0])
        one.append(belief)
    np.testing.assert_allclose(block, np.array(one), rtol=1e-12)


def test_an_outlier_after_healthy_steps_keeps_their_prior():
    healthy = np.array([0.97, 0.02, 0.01])
    spike = np.array([0.05, 0.05, 0.9])  # one step the model calls severe
    proba = np.vstack([np.tile(healthy, (9, 1)), spike])
    weights = np.array([0.6, 0.2, 0.2])
    state = _state()
    label_only = HistoryPrior(SMALL, 1.0).beliefs(proba, weights, state, 3)
    filtered = HistoryPrior(SMALL, 1.0, filtering=True).beliefs(
        proba, weights, state, 3
    )
    # From the label alone the prior drifts to damage as the process says;
    # the healthy steps since keep the filter's prior healthy.
    assert filtered[-2, 0] > label_only[-2, 0]
    assert filtered[-1, 2] < 0.6 * label_only[-1, 2]  # 0.50 against 0.95


def _stream(seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.repeat(1, 80), np.repeat(4, 40)]
    X = rng.normal(np.array([0.0, 2.0, 4.0, 6.0])[y - 1], 1.0)[:, None]
    spikes = rng.choice(np.arange(10, 80), size=6, replace=False)
    X[spikes] += 6.0  # one-step outliers of the healthy state
    return X, y


def test_the_learner_takes_it():
    X, y = _stream()
    runs = []
    for history_filter in (False, True):
        learner = RiskBasedLearner(
            estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
            process=synthetic_decision_process(),
            history_prior=0.5,
            history_filter=history_filter,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            learner.fit(X, y, initial=np.arange(10))
        runs.append(learner.history_.steps)
    assert not np.array_equal(runs[0]["evpi"], runs[1]["evpi"])


@pytest.mark.parametrize(
    "params, match",
    [
        ({"history_filter": True}, "history_prior > 0"),
        ({"history_filter": "yes", "history_prior": 0.5}, "must be a bool"),
    ],
)
def test_invalid_settings_are_named(params, match):
    X, y = _stream()
    learner = RiskBasedLearner(
        estimator=BayesianGMMClassifier(),
        process=synthetic_decision_process(),
        **params,
    )
    with pytest.raises(ValueError, match=match):
        learner.fit(X, y, initial=np.arange(10))


@pytest.mark.parametrize("filtering", [False, True])
def test_one_row_of_weights_per_step(filtering):
    rng = np.random.default_rng(5)
    proba = rng.dirichlet(np.ones(3), size=6)
    weights = np.array([0.7, 0.2, 0.1])
    one = HistoryPrior(SMALL, 0.5, filtering=filtering).beliefs(
        proba, weights, _state(), 6
    )
    rows = HistoryPrior(SMALL, 0.5, filtering=filtering).beliefs(
        proba, np.tile(weights, (6, 1)), _state(), 6
    )
    np.testing.assert_array_equal(one, rows)
    # a step's own row is its class weight: another row changes that step
    other = np.tile(weights, (6, 1))
    other[3] = [0.2, 0.2, 0.6]
    changed = HistoryPrior(SMALL, 0.5, filtering=filtering).beliefs(
        proba, other, _state(), 6
    )
    np.testing.assert_array_equal(changed[:3], one[:3])
    assert not np.allclose(changed[3], one[3])
