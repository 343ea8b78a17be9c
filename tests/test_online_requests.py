"""Requests that never come back: expiry, stalls, late results (issue 20 §3)."""

import warnings

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal._learning import CampaignParams
from skrbal.exceptions import (
    MissingStatesWarning,
    RequestExpiredWarning,
    StalledRequestsWarning,
)
from skrbal.online import AgentStore, RequestError, RiskBasedAgent

CHEAP = synthetic_decision_process().set_params(inspection_cost=1.0)
MEANS = np.array([-5.0, -0.7, 5.8, 19.0])
# Between states 3 and 4: worth inspecting at this cost; far ones are not.
AMBIGUOUS = [[12.5], [12.6], [12.4], [12.55], [12.45], [12.52]]


def _agent(store=None, **params):
    y0 = np.array([1, 2, 3, 4] * 2)
    X0 = MEANS[y0 - 1][:, None] + np.tile([-0.3, 0.3], 4)[:, None]
    params.setdefault("pending_value", "ignore")
    return RiskBasedAgent(
        estimator=GaussianNB(var_smoothing=0.05), process=CHEAP, store=store, **params
    ).fit(X0, y0)


def _feed(agent, rows):
    """Observe rows one per call; the warnings each call raised, by class name."""
    inspected, raised = [], []
    for x in rows:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            inspected.append(bool(agent.observe([x])["inspect"].iloc[0]))
        raised.append([w.category.__name__ for w in caught])
    return inspected, raised


def test_results_that_never_come_stall_warn_expire_and_inspecting_resumes():
    # The stall of issue 20: three requests, then nothing for ever. With
    # request_timeout the agent warns, expires them and asks again.
    rows = AMBIGUOUS * 4
    with _agent(max_open_requests=3) as stuck:
        inspected, raised = _feed(stuck, rows)
    assert sum(inspected) == 3 and inspected[:3] == [True] * 3
    stalls = [i for i, names in enumerate(raised) if "StalledRequestsWarning" in names]
    # When the stall begins, then at a rising interval (#28.15): at 1, 3, 7
    # and 15 blocked observations; not at every one, nor once only.
    assert stalls == [3, 5, 9, 17]

    with _agent(max_open_requests=3, request_timeout=6) as agent:
        inspected, raised = _feed(agent, rows)
        status = agent.status()
    expired_at = [
        i for i, names in enumerate(raised) if "RequestExpiredWarning" in names
    ]
    assert expired_at, "the open requests never expired"
    first = expired_at[0]
    assert first == 6  # the requests of steps 0..2 are 6 observations old
    assert any(inspected[first:]), "inspections did not resume after the expiry"
    assert status["n_expired"] >= 3
    assert status["n_open"] <= 3


def test_an_expired_request_takes_a_late_result_and_cannot_be_cancelled():
    with _agent(request_timeout=2) as agent:
        assert agent.observe([AMBIGUOUS[0]])["request_id"].iloc[0] == 1
        with pytest.warns(
            RequestExpiredWarning,
            match=r"request\(s\) 1 \(step 8\) waited 2 observations",
        ):
            for _ in range(2):
                agent.observe([[-5.0]])
        with pytest.raises(RequestError, match="expired"):
            agent.cancel_request(1)
        before = agent.estimator_.class_count_.copy()
        with pytest.warns(RequestExpiredWarning, match="late result is learnt"):
            assert agent.record_inspection(1, 4) == 1  # repair
        np.testing.assert_array_equal(
            agent.estimator_.class_count_ - before, [0, 0, 0, 1]
        )
        with pytest.raises(RequestError, match="already has a result"):
            agent.record_inspection(1, 4)
        requests = agent.store_.requests(agent.name)
        assert requests["status"].tolist() == ["done"]


def test_expiry_is_stored_verified_and_resumed(store_url):
    rows = AMBIGUOUS * 3
    params = dict(max_open_requests=2, request_timeout=4)
    with _agent(name="reference", **params) as reference:
        expected, _ = _feed(reference, rows)
    with _agent(store=store_url, name="bridge", **params) as agent:
        first, _ = _feed(agent, rows[:7])
        status = agent.status()
    assert status["n_expired"] >= 1
    store = AgentStore(store_url)
    store.verify("bridge")  # the expire events are part of the chain
    with RiskBasedAgent.from_store(store, "bridge") as resumed:
        assert resumed.request_timeout == 4
        rest, _ = _feed(resumed, rows[7:])
        assert resumed.status()["n_expired"] >= status["n_expired"]
    store.close()
    assert first + rest == expected


def test_a_stall_ends_when_a_slot_frees():
    with _agent(max_open_requests=1) as agent:
        _, raised = _feed(agent, AMBIGUOUS[:3])
        assert [n for n in raised if n] == [["StalledRequestsWarning"]]
        agent.cancel_request(1)  # the slot frees (the model learns nothing)
        _, raised = _feed(agent, AMBIGUOUS[:3])
        # a new request fills the slot again; the next stall warns again
        assert [n for n in raised if n] == [["StalledRequestsWarning"]]


@pytest.mark.parametrize("timeout", [0, -1.0, True, float("inf"), "1d"])
def test_a_bad_request_timeout_is_named(timeout):
    with pytest.raises(ValueError, match="request_timeout"):
        _agent(request_timeout=timeout)


def test_stall_warning_names_the_oldest_open_requests():
    with _agent(max_open_requests=2) as agent:
        with pytest.warns(StalledRequestsWarning, match=r"oldest: 1 \(step 8\), 2"):
            agent.observe(AMBIGUOUS[:4])


def test_agents_stored_before_the_new_settings_resume_as_they_decided():
    # A store written before pending_value and request_timeout existed holds
    # settings without them: its agent resumes ignoring pending results (the
    # one-step value it decided with) and with requests that never expire.
    from skrbal.online._settings import parameters_of, settings_of

    with _agent(pending_value="fantasy", request_timeout=9) as agent:
        settings = settings_of(CampaignParams.of(agent))
    assert parameters_of(settings, CHEAP)["pending_value"] == "fantasy"
    assert parameters_of(settings, CHEAP)["request_timeout"] == 9
    old = {
        k: v
        for k, v in settings.items()
        if k not in ("pending_value", "request_timeout")
    }
    assert parameters_of(old, CHEAP)["pending_value"] == "ignore"
    assert parameters_of(old, CHEAP)["request_timeout"] is None


def test_a_cancel_reason_must_be_text():
    with _agent() as agent:
        agent.observe([AMBIGUOUS[0]])
        with pytest.raises(RequestError, match="reason must be None or a string"):
            agent.cancel_request(1, reason={"why": "flooded"})
        agent.cancel_request(1, reason="flooded")


def test_features_the_model_cannot_represent_are_named():
    with _agent() as agent:
        with pytest.raises(ValueError, match=r"X row 1: GaussianNB gives no finite"):
            agent.observe([[1.0], [1e308]])
        assert agent.status()["n_observations"] == 0  # nothing was decided


def test_a_model_that_knows_one_state_is_refused():
    # Issue 21 §9: with one labelled state a model that cannot be told the
    # others is certain everywhere: EVPI 0, no inspection ever, silently.
    from skrbal.active import RiskBasedLearner

    X0 = np.array([[-5.0], [-5.2], [-4.8]])
    with pytest.raises(ValueError, match=r"knows only state\(s\) \[1\]"):
        RiskBasedAgent(estimator=GaussianNB(), process=CHEAP).fit(X0, [1, 1, 1])
    # A study records such a repetition instead (it may be one of many): the
    # warning, counted in its history, says no inspection will be made.
    X = np.vstack([X0, MEANS[:, None]])
    y = np.array([1, 1, 1, 1, 2, 3, 4])
    with pytest.warns(MissingStatesWarning, match="no inspection will be made"):
        learner = RiskBasedLearner(estimator=GaussianNB(), process=CHEAP).fit(
            X, y, initial=[0, 1, 2]
        )
    assert learner.history_.totals["n_inspections"] == 0
    assert learner.history_.totals["n_warnings"] == 1
    # a model told every state (a classes parameter) learns from one state
    from skrbal import BayesianGMMClassifier

    learner = RiskBasedLearner(estimator=BayesianGMMClassifier(), process=CHEAP)
    learner.fit(X, y, initial=[0, 1, 2])
    assert learner.history_.totals["n_inspections"] > 0


def _stamped_agent(store=None):
    y0 = np.array([1, 2, 3, 4] * 2)
    X0 = MEANS[y0 - 1][:, None] + np.tile([-0.3, 0.3], 4)[:, None]
    return RiskBasedAgent(
        estimator=GaussianNB(var_smoothing=0.05), process=CHEAP, store=store
    ).fit(X0, y0, timestamps=np.arange(8.0))


def test_a_result_dated_before_its_request_is_refused(tmp_path):
    """Issue 18 item 7: a result years before its request was accepted."""
    observed = np.datetime64("2025-06-01T12:00:00")
    with _stamped_agent(tmp_path / "a.db") as agent:
        decisions = agent.observe(AMBIGUOUS[:1], timestamps=[observed])
        request = int(decisions["request_id"].iloc[0])
        before = agent.status()
        with pytest.raises(
            RequestError,
            match=r"2021-06-01T12:00:00Z .* before step 8 was observed, at "
            r"2025-06-01T12:00:00Z .*Nothing was recorded",
        ):
            agent.record_inspection(request, 4, timestamp="2021-06-01T12:00:00")
        with pytest.raises(RequestError, match="before step 8 was observed"):
            agent.record_inspection(request, 4, timestamp=1e9)  # 2001, in seconds
        assert agent.status() == before
        # on time, or later: taken
        assert agent.record_inspection(request, 4, timestamp=observed) == 1
        assert agent.status()["n_results"] == 1


def test_an_expiry_of_many_requests_names_a_few_and_counts_the_rest():
    # A first week's trial: one observe of a year expired 62 requests at once
    # and the warning listed every one of them, a screenful of stderr. It
    # names the oldest five and counts the others (status lists them all).
    with _agent(request_timeout=40) as agent:
        agent.observe(AMBIGUOUS * 5)
        n_open = agent.status()["n_open"]
        assert n_open > 5
        with pytest.warns(RequestExpiredWarning) as caught:
            agent.observe([[-5.0]] * 40)  # expiry is checked as a block starts
            agent.observe([[-5.0]])
    (message,) = [str(w.message) for w in caught if w.category is RequestExpiredWarning]
    assert message.count("(step ") == 5
    assert f"and {n_open - 5} more" in message
    assert "status" in message
