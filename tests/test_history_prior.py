"""The class prior from the labelled history through the process (history_prior).

The beliefs are checked against a brute-force sum over every state path
from the last labelled step; the stream learner and the agent decide
identically with it; a block decided at once equals its steps one by one;
and an agent resumed from its store decides as one that never stopped.
"""

import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skrbal import BayesianGMMClassifier, DecisionProcess, synthetic_decision_process
from skrbal._learning import CampaignParams, StreamState
from skrbal._learning._history import HistoryPrior
from skrbal.active import RiskBasedLearner
from skrbal.budget import PacedBudget
from skrbal.online import RiskBasedAgent
from skrbal.online._settings import parameters_of, settings_of

# Three states; do nothing lets damage grow, repair resets to healthy.
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


def _brute_force(process, anchor_dist, anchor_step, actions, proba, weights, share):
    """Beliefs of a block by summing over every state path from the anchor.

    ``actions`` are those of the steps from the anchor to the block's first
    step; within the block the action is the optimal one of each belief.
    """
    transition = np.asarray(process.transition)
    K = transition.shape[1]
    taken = list(actions)
    out = []
    for row in proba:
        n = len(taken)  # transitions from the anchor step to this one
        prior = np.zeros(K)
        for path in itertools.product(range(K), repeat=n + 1):
            p = anchor_dist[path[0]]
            for u in range(n):
                p *= transition[taken[u], path[u], path[u + 1]]
            prior[path[-1]] += p
        mixed = share * prior + (1 - share) * weights
        belief = mixed * row / weights
        belief /= belief.sum()
        out.append(belief)
        taken.append(int(process.optimal_action(belief[None])[0]))
    return np.array(out)


@pytest.mark.parametrize("share", [1.0, 0.6])
@pytest.mark.parametrize("soft", [False, True])
def test_beliefs_equal_the_sum_over_state_paths(share, soft):
    rng = np.random.default_rng(1)
    n_steps, start, n_block = 14, 9, 4
    y = np.array(["healthy"] * n_steps, dtype=object)
    y[3] = "damaged"
    action = rng.integers(0, 2, size=n_steps)
    # Labels at steps 1 and 3 (3 is the anchor), and one after the block
    # that must be ignored.
    state = StreamState(
        X=np.zeros((n_steps, 1)),
        y=y,
        known=np.isin(np.arange(n_steps), [1, 3, 13]),
        labelled=[3, 1, 13],
        action=action,
        exogenous_actions=None,
    )
    anchor_dist = np.array([0.0, 1.0, 0.0])
    anchor_step = 3
    if soft:
        anchor_dist = np.array([0.2, 0.5, 0.3])
        anchor_step = 5
        state.soft[5] = anchor_dist
    proba = rng.dirichlet(np.ones(3), size=n_block)
    weights = np.array([0.8, 0.15, 0.05])
    history = HistoryPrior(SMALL, share)
    got = history.beliefs(proba, weights, state, start)
    expected = _brute_force(
        SMALL,
        anchor_dist,
        anchor_step,
        action[anchor_step:start],
        proba,
        weights,
        share,
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    # Extending a cached prediction gives the same bits as starting afresh.
    later = history.beliefs(proba[:3], weights, state, start + 1)
    fresh = HistoryPrior(SMALL, share).beliefs(proba[:3], weights, state, start + 1)
    np.testing.assert_array_equal(later, fresh)


def test_without_a_labelled_step_before_the_block_the_model_decides():
    state = StreamState(
        X=np.zeros((4, 1)),
        y=np.array(["healthy"] * 4, dtype=object),
        known=np.array([False, False, True, False]),
        labelled=[2],
        action=np.zeros(4, dtype=int),
        exogenous_actions=None,
    )
    proba = np.array([[0.5, 0.3, 0.2]])
    out = HistoryPrior(SMALL, 1.0).beliefs(proba, np.ones(3) / 3, state, 1)
    assert out is proba


def test_a_share_below_one_never_erases_a_state():
    # Right after a healthy label, severe cannot be reached in one step
    # with a share of 1 (prior 0.02 after one step, 0 at the label's step
    # with repair); a share below 1 keeps the model's weight times 1 - s.
    state = StreamState(
        X=np.zeros((2, 1)),
        y=np.array(["healthy", "healthy"], dtype=object),
        known=np.array([True, False]),
        labelled=[0],
        action=np.array([1, 0]),  # repaired at the label: healthy for sure
        exogenous_actions=None,
    )
    proba = np.array([[0.1, 0.1, 0.8]])
    weights = np.array([0.9, 0.05, 0.05])
    pure = HistoryPrior(SMALL, 1.0).beliefs(proba, weights, state, 1)
    assert pure[0, 2] == 0.0
    mixed = HistoryPrior(SMALL, 0.9).beliefs(proba, weights, state, 1)
    assert mixed[0, 2] > 0.0


def _stream(seed=0, per_state=25, n_cycles=2):
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([1, 2, 3, 4], per_state), n_cycles)
    X = rng.normal(np.array([-5.0, -0.7, 5.8, 19.0])[y - 1], 2.5)[:, None]
    first = np.concatenate([np.flatnonzero(y == c)[:2] for c in (1, 2, 3, 4)])
    order = np.concatenate([first, np.setdiff1d(np.arange(y.size), first)])
    return X[order], y[order]


N0 = 8
PROCESS = synthetic_decision_process()


def _params(share, semi=None):
    return dict(
        estimator=BayesianGMMClassifier(mean_prior="data", covariance_prior="data"),
        process=PROCESS,
        semi_supervised=semi,
        max_open_requests=2,
        history_prior=share,
    )


def _drive(agent, X, y, start, stop, delay, due, block=1, every=1):
    """Observe ``block`` steps per call; record each result ``delay`` later,
    after a call that ends a multiple of ``every`` steps from ``start``."""
    inspected, actions = [], []
    for t in range(start, stop, block):
        frame = agent.observe(X[t : t + block])
        for i, row in enumerate(frame.itertuples()):
            inspected.append(bool(row.inspect))
            actions.append(int(row.action))
            if row.inspect:
                due.setdefault(t + i + delay, []).append((int(row.request_id), t + i))
        if (t + block - start) % every:
            continue
        for late in [s for s in sorted(due) if s < t + block]:
            for request_id, step in due.pop(late):
                agent.record_inspection(request_id, y[step])
    return inspected, actions


@pytest.mark.parametrize(
    "share, semi, delay, paced",
    [(1.0, None, 0, False), (0.7, None, 3, True), (1.0, "em", 3, False)],
)
def test_learner_and_agent_decide_identically(share, semi, delay, paced):
    X, y = _stream()

    def budget():
        return PacedBudget(limit=40.0, period=80, allow_starved=True) if paced else None

    learner = RiskBasedLearner(
        **_params(share, semi), budget=budget(), result_delay=delay, random_state=0
    ).fit(X, y, initial=np.arange(N0))
    steps = learner.history_.steps.iloc[N0:]
    agent = RiskBasedAgent(**_params(share, semi), budget=budget())
    with agent.fit(X[:N0], y[:N0]):
        inspected, actions = _drive(agent, X, y, N0, y.size, delay, {})
    assert steps["inspected"].sum() > 0
    np.testing.assert_array_equal(inspected, steps["inspected"])
    # The learner acts at an inspected step as its state calls for.
    decided = steps["action"].to_numpy().copy()
    agent_actions = np.array(actions)
    keep = ~steps["inspected"].to_numpy()
    np.testing.assert_array_equal(agent_actions[keep], decided[keep])


def test_history_changes_the_decisions():
    X, y = _stream()
    runs = [
        RiskBasedLearner(**_params(share), result_delay=3, random_state=0)
        .fit(X, y, initial=np.arange(N0))
        .history_.steps["inspected"]
        .to_numpy()
        for share in (0.0, 1.0)
    ]
    assert not np.array_equal(*runs)


def test_a_block_decides_as_its_steps_one_by_one():
    X, y = _stream()
    runs = []
    for block in (1, 6):
        agent = RiskBasedAgent(**_params(1.0))
        with agent.fit(X[:N0], y[:N0]):
            runs.append(_drive(agent, X, y, N0, N0 + 96, 2, {}, block, every=6))
    assert sum(runs[0][0]) > 0
    assert runs[0] == runs[1]


def test_a_resumed_agent_decides_as_one_that_never_stopped(tmp_path):
    X, y = _stream()
    half = 50
    whole = RiskBasedAgent(**_params(0.8))
    with whole.fit(X[:N0], y[:N0]):
        expected = _drive(whole, X, y, N0, y.size, 3, {})
    url = str(tmp_path / "agents.db")
    first = RiskBasedAgent(**_params(0.8), store=url, name="bridge")
    due = {}
    with first.fit(X[:N0], y[:N0]):
        before = _drive(first, X, y, N0, half, 3, due)
    with RiskBasedAgent.from_store(url, "bridge") as resumed:
        assert resumed.history_prior == 0.8
        after = _drive(resumed, X, y, half, y.size, 3, due)
    assert sum(expected[0]) > 0
    assert (before[0] + after[0], before[1] + after[1]) == expected


def test_settings_keep_the_share_and_old_agents_resume_without_it():
    settings = settings_of(CampaignParams(PROCESS, history_prior=0.25))
    assert parameters_of(settings, PROCESS)["history_prior"] == 0.25
    del settings["history_prior"]
    assert parameters_of(settings, PROCESS)["history_prior"] == 0.0


@pytest.mark.parametrize("bad", [-0.1, 1.5, "yes", True, float("nan")])
def test_an_invalid_share_is_named(bad):
    X, y = _stream()
    with pytest.raises(ValueError, match="history_prior must be a number"):
        RiskBasedLearner(**{**_params(0.5), "history_prior": bad}).fit(
            X, y, initial=np.arange(N0)
        )


def test_a_model_without_class_weights_is_named():
    X, y = _stream()
    learner = RiskBasedLearner(
        **{**_params(0.5), "estimator": LogisticRegression()}, random_state=0
    )
    with pytest.raises(ValueError, match="weight_concentration_"):
        learner.fit(X, y, initial=np.arange(N0))
    # naive Bayes exposes class_prior_
    RiskBasedLearner(**{**_params(0.5), "estimator": GaussianNB()}, random_state=0).fit(
        X, y, initial=np.arange(N0)
    )


def test_a_label_inside_the_block_restarts_the_prediction():
    # A learner's initial labels (an agent's commissioning steps) are known
    # before their block is decided: after one, the prediction is the
    # label's, carried under the action its state calls for.
    rng = np.random.default_rng(3)
    y = np.array(["healthy", "healthy", "severe", "healthy", "healthy"], dtype=object)
    state = StreamState(
        X=np.zeros((5, 1)),
        y=y,
        known=np.array([True, False, True, False, False]),
        labelled=[0, 2],
        action=np.zeros(5, dtype=int),
        exogenous_actions=None,
    )
    proba = rng.dirichlet(np.ones(3), size=4)
    weights = np.array([0.7, 0.2, 0.1])
    got = HistoryPrior(SMALL, 1.0).beliefs(proba, weights, state, 1)
    # Step 1 from the label at 0; steps 3 and 4 from the severe label at 2,
    # repaired there (severe's perfect action).
    repaired = int(SMALL.perfect_information_action(["severe"])[0])
    assert repaired == 1
    first = _brute_force(SMALL, np.eye(3)[0], 0, [0], proba[:1], weights, 1.0)
    after = _brute_force(SMALL, np.eye(3)[2], 2, [repaired], proba[2:], weights, 1.0)
    np.testing.assert_allclose(got[:1], first, rtol=1e-12)
    np.testing.assert_allclose(got[2:], after, rtol=1e-12)


def _learnt_idle(process, stays, departures):
    """The reference transition: the healthy state's exit rate the posterior
    mean of its Beta prior (mean the stated rate, one stated sojourn) after
    ``stays`` idle steps of labels that stay and ``departures`` departure
    intervals' lengths, by adaptive quadrature."""
    from scipy import integrate

    transition = np.array(process.transition, dtype=float)
    q0 = 1.0 - transition[0, 0, 0]
    a, b = 1.0, 1.0 / q0 - 1.0 + stays

    def density(q, power):
        like = np.prod([1.0 - (1.0 - q) ** L for L in departures])
        return q ** (power + a - 1) * (1 - q) ** (b - 1) * like

    q = (
        integrate.quad(density, 0, 1, args=(1,), limit=500)[0]
        / integrate.quad(density, 0, 1, args=(0,), limit=500)[0]
    )
    transition[0, 0, 1:] *= q / q0
    transition[0, 0, 0] = 1.0 - q
    return DecisionProcess(
        transition=transition,
        state_utility=process.state_utility,
        action_utility=process.action_utility,
        inspection_cost=process.inspection_cost,
        classes=process.classes,
    )


def test_the_prediction_uses_the_rate_learnt_from_the_labels_before_each_step():
    # Healthy labels at 0, 4 and 8, and one inside the block at 12: the rows
    # before it are predicted with the rate learnt from 8 stays, those after
    # it with 12 (the brute-force sum over paths, through the reference
    # transition).
    rng = np.random.default_rng(5)
    n = 16
    state = StreamState(
        X=np.zeros((n, 1)),
        y=np.array(["healthy"] * n, dtype=object),
        known=np.isin(np.arange(n), [0, 4, 8, 12]),
        labelled=[0, 4, 8, 12],
        action=np.zeros(n, dtype=int),
        exogenous_actions=np.zeros(n, dtype=int),
    )
    proba = rng.dirichlet(np.ones(3), size=6)
    weights = np.array([0.8, 0.15, 0.05])
    got = HistoryPrior(SMALL, 0.6).beliefs(proba, weights, state, 10)
    before = _learnt_idle(SMALL, 8, [])
    after = _learnt_idle(SMALL, 12, [])

    # The given actions (do nothing) move the prediction, row by row.
    def rows(process, anchor, first, last):
        return np.concatenate(
            [
                _brute_force(
                    process,
                    np.eye(3)[0],
                    anchor,
                    [0] * (10 + i - anchor),
                    proba[[i]],
                    weights,
                    0.6,
                )
                for i in range(first, last)
            ]
        )

    np.testing.assert_allclose(got[:3], rows(before, 8, 0, 3), rtol=1e-9)
    np.testing.assert_allclose(got[3:], rows(after, 12, 3, 6), rtol=1e-9)
    # The stated rate would predict otherwise.
    assert np.abs(got[3:] - rows(SMALL, 12, 3, 6)).max() > 1e-3
    # A block decides as its steps one by one, bit for bit.
    single = np.concatenate(
        [
            HistoryPrior(SMALL, 0.6).beliefs(proba[[i]], weights, state, 10 + i)
            for i in range(6)
        ]
    )
    np.testing.assert_array_equal(got, single)


def test_a_departure_raises_the_learnt_rate():
    # Healthy at 0 and 3, severe at 9 (a departure within 6 idle steps),
    # repaired there, healthy again at 10: the prediction from 10 uses the
    # rate the departure raised.
    n = 13
    y = np.array(["healthy"] * n, dtype=object)
    y[9] = "severe"
    action = np.zeros(n, dtype=int)
    action[9] = 1
    state = StreamState(
        X=np.zeros((n, 1)),
        y=y,
        known=np.isin(np.arange(n), [0, 3, 9, 10]),
        labelled=[0, 3, 9, 10],
        action=action,
        exogenous_actions=None,
    )
    proba = np.full((1, 3), 1 / 3)
    weights = np.full(3, 1 / 3)
    got = HistoryPrior(SMALL, 1.0).beliefs(proba, weights, state, 12)
    reference = _learnt_idle(SMALL, 3, [6])
    expected = _brute_force(reference, np.eye(3)[0], 10, [0, 0], proba, weights, 1.0)
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_learner_and_agent_decide_identically_with_imperfect_reports():
    # A cheap method's reports are soft evidence for the learnt rate as well
    # as anchors: the agent, given the learner's reports, decides as it did.
    from skrbal.inspection import InspectionMethod, perfect_inspection

    cheap = InspectionMethod(
        name="cheap",
        cost=1.5,
        confusion=[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.05, 0.95]],
        outcomes=["ok", "damage"],
    )
    X, y = _stream()
    delay = 3
    params = dict(_params(0.5), inspections=[perfect_inspection(PROCESS), cheap])
    learner = RiskBasedLearner(**params, result_delay=delay, random_state=0).fit(
        X, y, initial=np.arange(N0)
    )
    steps = learner.history_.steps.iloc[N0:]
    queries = learner.history_.queries.iloc[1:]
    reports = dict(zip(queries["step"], queries["report"]))
    assert any(isinstance(r, str) for r in reports.values())
    agent = RiskBasedAgent(**params)
    inspected, due = [], {}
    with agent.fit(X[:N0], y[:N0]):
        for t in range(N0, y.size):
            row = next(agent.observe(X[t : t + 1]).itertuples())
            inspected.append(bool(row.inspect))
            if row.inspect:
                due.setdefault(t + delay, []).append((int(row.request_id), t))
            for late in [s for s in sorted(due) if s <= t]:
                for request_id, step in due.pop(late):
                    agent.record_inspection(request_id, report=reports[step])
    assert sum(inspected) > 0
    np.testing.assert_array_equal(inspected, steps["inspected"])
