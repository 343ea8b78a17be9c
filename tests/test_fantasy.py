"""Fantasised pending results: bounded work per call (issue 27, point 13).

The work is counted, never timed: every ``partial_fit`` a call makes, and the
rows it teaches, through a counting wrapper.
"""

import copy

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal._learning import Campaign
from skrbal._learning import _campaign as campaign_module
from skrbal._learning import _fantasy as fantasy_module
from skrbal._learning._fantasy import MAX_FANTASISED, MAX_OUTCOMES
from skrbal.active import RiskBasedLearner
from skrbal.mixture import BayesianGMMClassifier
from skrbal.online import RiskBasedAgent

X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)


@pytest.fixture
def fits(monkeypatch):
    """The number of rows of every ``GaussianNB.partial_fit`` call, in order."""
    calls = []
    original = GaussianNB.partial_fit

    def counting(self, X, y, classes=None, sample_weight=None):
        calls.append(len(X))
        return original(self, X, y, classes=classes, sample_weight=sample_weight)

    monkeypatch.setattr(GaussianNB, "partial_fit", counting)
    return calls


def _busy_agent(tmp_path, n_rows):
    """An agent whose ``n_rows``-row observe left most rows' requests open."""
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        # So cheap that nearly every ambiguous row is worth inspecting.
        process=synthetic_decision_process().set_params(inspection_cost=1e-300),
        store=str(tmp_path / "agent.db"),
    ).fit(X0, Y0)
    rows = np.random.default_rng(0).uniform(11.5, 13.5, size=(n_rows, 1))
    made = agent.observe(rows)
    return agent, made


def test_a_call_fantasises_at_most_the_oldest_requests(tmp_path, fits):
    # The old kernel taught every open request's row to each of 32 copies at
    # every call: 32 fits of 150 rows per call here.
    agent, _ = _busy_agent(tmp_path, 150)
    with agent:
        n_open = agent.status()["n_open"]
        assert n_open > 2 * MAX_FANTASISED
        fits.clear()
        agent.observe([[12.0]])
    assert 0 < len(fits) <= MAX_OUTCOMES
    assert max(fits) == MAX_FANTASISED


def test_the_copies_are_kept_while_the_model_and_oldest_requests_stay(tmp_path, fits):
    # Once more than MAX_FANTASISED requests are open a new request does not
    # change the fantasised set: calls after the first refit nothing. The old
    # kernel refitted 32 copies at every call.
    agent, first = _busy_agent(tmp_path, 100)
    with agent:
        agent.observe([[12.0]])
        fits.clear()
        made = [agent.observe([[x]]) for x in np.linspace(11.0, 13.0, 5)]
        assert fits == []
        assert any(bool(m["inspect"].iloc[0]) for m in made)
        # A result changes the model: the copies are built again, once, also
        # when the request was not one of those fantasised (the newest).
        newest = int(first.loc[first["inspect"], "request_id"].max())
        agent.record_inspection(newest, 3)
        fits.clear()
        agent.observe([[12.0]])
        n_rebuilt = len(fits)
        agent.observe([[12.5]])
    assert 0 < n_rebuilt <= MAX_OUTCOMES
    assert len(fits) == n_rebuilt


def test_kept_copies_decide_as_copies_built_at_every_call(monkeypatch):
    # Results 12 steps late keep many requests open; the copies kept between
    # blocks must give exactly the decisions of copies built afresh at every
    # block: they are dropped whenever the model learns, a routine label too
    # (which closes no request). Smaller bounds keep the test fast; the logic
    # is the same.
    monkeypatch.setattr(campaign_module, "MAX_FANTASISED", 4)
    monkeypatch.setattr(fantasy_module, "MAX_OUTCOMES", 8)
    # Rows where states 3 and 4 overlap, inspected at little cost.
    rows = np.random.default_rng(3).uniform(9.0, 16.0, size=(60, 1))
    X = np.vstack([X0, rows])
    y = np.concatenate([Y0, np.where(rows[:, 0] < 12.4, 3, 4)])

    def walk():
        return RiskBasedLearner(
            estimator=GaussianNB(),
            process=synthetic_decision_process().set_params(inspection_cost=1e-6),
            result_delay=12,
            random_state=0,
        ).fit(X, y, initial=np.arange(8), routine=np.arange(10, 68, 5))

    kept = walk()
    original = Campaign._fantasise

    def afresh(self, X):
        self.fantasies.key = None  # never reuse: build at every block
        return original(self, X)

    monkeypatch.setattr(Campaign, "_fantasise", afresh)
    built = walk()
    steps = kept.history_.steps
    inspected = np.flatnonzero(steps["inspected"])
    most_open = max(np.sum((inspected > t - 12) & (inspected <= t)) for t in inspected)
    assert most_open > 4
    assert steps.equals(built.history_.steps)
    assert kept.history_.queries.equals(built.history_.queries)


def test_copies_predict_only_the_rows_whose_value_they_can_lower(tmp_path, monkeypatch):
    # A value of 0 stays 0 whatever the pending results: the copies predict
    # only the other rows. The old kernel predicted every row with each copy.
    agent, _ = _busy_agent(tmp_path, 60)
    rows = np.array([[-40.0]] * 5 + [[12.0]] * 5)  # sure, then ambiguous
    stacked = []
    original = fantasy_module._StackedGaussianNB.__call__

    def counting(self, X):
        stacked.append((len(self.models), len(X)))
        return original(self, X)

    monkeypatch.setattr(fantasy_module._StackedGaussianNB, "__call__", counting)
    with agent:
        made = agent.observe(rows)
    assert (made["evpi"].to_numpy()[:5] == 0).all()
    assert (made["evpi"].to_numpy()[5:] > 0).all()
    assert stacked and {n for _, n in stacked} == {5}


def test_the_copies_predict_a_block_together(tmp_path, monkeypatch):
    # One prediction of the block by the model itself, and one stacked pass
    # for all the copies. The old kernel called predict_proba of each of the
    # 32 copies at every call: 33 calls for a one-row observe.
    agent, _ = _busy_agent(tmp_path, 100)
    calls = []
    original = GaussianNB.predict_proba

    def counting(self, X):
        calls.append(len(X))
        return original(self, X)

    with agent:
        agent.observe([[12.0]])  # builds the copies (and predicts their rows)
        monkeypatch.setattr(GaussianNB, "predict_proba", counting)
        for x in np.linspace(11.0, 13.0, 4):
            agent.observe([[x]])
    assert calls == [1, 1, 1, 1]


def _copies(base, rng, n_models, n_rows):
    X = rng.normal(size=(n_rows, base.n_features_in_)) * 3
    return [
        copy.deepcopy(base).partial_fit(X, rng.choice(base.classes_, n_rows))
        for _ in range(n_models)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_stacked_gaussian_nb_beliefs_are_each_copys_bit_for_bit(seed, monkeypatch):
    # Equal, not close: the decisions of the stacked copies are those of the
    # copies predicted one by one.
    rng = np.random.default_rng(seed)
    n_classes, d = 2 + seed, 1 + seed % 3
    X = rng.normal(size=(40, d)) * 3
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, 40)])[:40]
    models = _copies(GaussianNB().fit(X, y), rng, 8, 3)
    rows = rng.normal(size=(25, d)) * [1.0, 10.0, 100.0, 1.0][seed]
    predict = fantasy_module.stacked_predictor(models)
    expected = np.stack([m.predict_proba(rows) for m in models])
    assert np.array_equal(predict(rows), expected)
    # Rows in chunks (bounded memory) change nothing.
    monkeypatch.setattr(fantasy_module, "_CHUNK", 100)
    assert np.array_equal(predict(rows), expected)


@pytest.mark.filterwarnings("ignore::skrbal.exceptions.UnlabelledClassesWarning")
@pytest.mark.parametrize("directed", [False, True])
def test_stacked_gmm_beliefs_are_each_copys_bit_for_bit(directed):
    rng = np.random.default_rng(int(directed))
    X = rng.normal(size=(40, 2)) * 3
    y = np.concatenate([np.arange(3), rng.integers(0, 3, 37)])
    params = {}
    if directed:
        params = {
            "classes": [0, 1, 2, 3],
            "class_priors": {3: {"reference": 0, "shift": [3.0, 0.0]}},
        }
    models = _copies(BayesianGMMClassifier(**params).fit(X, y), rng, 8, 3)
    models.append(copy.deepcopy(models[0]))  # a repeated posterior
    # Far rows take the log-space path of the Student-t kernel.
    rows = np.vstack([rng.normal(size=(30, 2)) * 3, [[1e160, -1e160]]])
    predict = fantasy_module.stacked_predictor(models)
    expected = np.stack([m.predict_proba(rows) for m in models])
    assert np.array_equal(predict(rows), expected)


def test_models_of_mixed_kinds_are_predicted_one_by_one():
    X, y = X0, Y0
    gmm = BayesianGMMClassifier(mean_prior="data", covariance_prior="data")
    models = [GaussianNB().fit(X, y), gmm.fit(X, y)]
    assert fantasy_module.stacked_predictor(models) is None
    assert fantasy_module.stacked_predictor([LogisticRegression().fit(X, y)]) is None


def test_stacked_copies_decide_as_copies_predicted_one_by_one(monkeypatch):
    # A stream with delayed results walked twice: the decisions are the same.
    rows = np.random.default_rng(5).uniform(9.0, 16.0, size=(30, 1))
    X = np.vstack([X0, rows])
    y = np.concatenate([Y0, np.where(rows[:, 0] < 12.4, 3, 4)])

    def walk(estimator):
        return RiskBasedLearner(
            estimator=estimator,
            process=synthetic_decision_process().set_params(inspection_cost=1e-6),
            result_delay=6,
            random_state=0,
        ).fit(X, y, initial=np.arange(8))

    gmm = BayesianGMMClassifier(mean_prior="data", covariance_prior="data")
    for estimator in (GaussianNB(), gmm):
        stacked = walk(estimator)
        monkeypatch.setattr(fantasy_module, "stacked_predictor", lambda models: None)
        alone = walk(estimator)
        monkeypatch.undo()
        assert stacked.history_.steps["inspected"].sum() > 6
        assert stacked.history_.steps.equals(alone.history_.steps)
        assert stacked.history_.queries.equals(alone.history_.queries)
