"""Fantasised pending results: bounded work per call (issue 27, point 13).

The work is counted, never timed: every ``partial_fit`` a call makes, and the
rows it teaches, through a counting wrapper.
"""

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal._learning import Campaign
from skrbal._learning import _campaign as campaign_module
from skrbal._learning import _fantasy as fantasy_module
from skrbal._learning._fantasy import MAX_FANTASISED, MAX_OUTCOMES
from skrbal.active import RiskBasedLearner
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
    predicted = []
    original = GaussianNB.predict_proba

    def counting(self, X):
        predicted.append(len(X))
        return original(self, X)

    monkeypatch.setattr(GaussianNB, "predict_proba", counting)
    with agent:
        made = agent.observe(rows)
    assert (made["evpi"].to_numpy()[:5] == 0).all()
    assert (made["evpi"].to_numpy()[5:] > 0).all()
    copies = [n for n in predicted if n != len(rows) and n != MAX_FANTASISED]
    assert copies and set(copies) == {5}
