"""Idempotent calls of the live agent: client keys, on SQLite and PostgreSQL.

A call made with a client key and retried (the caller lost the answer)
returns the stored answer without acting again; the same key with other
inputs raises IdempotencyKeyError; the keys survive a restart and the
migration from schema version 4, and the event chain covers them.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import inspect, select, text, update

from skrbal import synthetic_decision_process
from skrbal.exceptions import IdempotencyKeyError, RequestError
from skrbal.online import AgentStore, RiskBasedAgent, StoreError
from skrbal.online._sql import _schema as schema

PROCESS = synthetic_decision_process().set_params(inspection_cost=1.0)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-5.3], [-0.4], [6.1], [18.5]])
Y0 = np.array([1, 2, 3, 4, 1, 2, 3, 4])
ROWS = np.array([[12.5], [-5.2], [13.0], [0.1]])
STAMPS = np.array([100.0, 200.0, 300.0, 400.0])


def _agent(url, **params):
    return RiskBasedAgent(
        estimator=GaussianNB(var_smoothing=0.05), process=PROCESS, store=url, **params
    )


def _state(agent):
    """What a retry must leave as it was: counters, log, budget, model."""
    store = agent.store_
    return (
        agent.n_steps_,
        agent._seq,
        agent._campaign.requests.n_requests,
        dict(agent.budget_state_),
        store.events(agent.name)["seq"].tolist(),
        store.status(agent.name),
        agent.estimator_.theta_.tolist(),
    )


def test_a_retried_observe_returns_the_stored_decisions(store_url):
    with _agent(store_url).fit(X0, Y0, timestamps=np.arange(8.0)) as agent:
        first = agent.observe(ROWS, timestamps=STAMPS, key="batch-1")
        assert first["inspect"].any()
        before = _state(agent)
        again = agent.observe(ROWS.tolist(), timestamps=STAMPS, key="batch-1")
        pd.testing.assert_frame_equal(again, first)
        assert _state(agent) == before
        # a key is per call: a new key decides anew
        other = agent.observe(ROWS, timestamps=STAMPS + 1000, key="batch-2")
        assert other["step"].tolist() == [12, 13, 14, 15]
        events = agent.store_.events(agent.name)
        assert events["kind"].tolist() == ["commission", "observe", "observe"]


def test_a_key_reused_for_other_inputs_is_refused(store_url):
    with _agent(store_url).fit(X0, Y0, timestamps=np.arange(8.0)) as agent:
        agent.observe(ROWS, timestamps=STAMPS, key="k")
        before = _state(agent)
        with pytest.raises(IdempotencyKeyError, match=r"'agent'.*'k'.* another X;"):
            agent.observe(ROWS + 1, timestamps=STAMPS, key="k")
        with pytest.raises(IdempotencyKeyError, match="another timestamps"):
            agent.observe(ROWS, timestamps=STAMPS + 1, key="k")
        with pytest.raises(IdempotencyKeyError, match="another X, timestamps"):
            agent.observe(ROWS[:2], timestamps=STAMPS[:2], key="k")
        with pytest.raises(
            IdempotencyKeyError, match=r"used by observe .event 2, step 8., not by "
        ):
            agent.record_inspection(1, 4, key="k")
        assert _state(agent) == before
        assert issubclass(IdempotencyKeyError, RequestError)


@pytest.mark.parametrize(
    "key", ["", "a\x00b", "x" * (schema.MAX_KEY_LENGTH + 1), 7, b"bytes"]
)
def test_a_key_is_a_short_string_without_nul(key):
    with _agent(None).fit(X0, Y0) as agent:
        with pytest.raises(IdempotencyKeyError, match="key must be"):
            agent.observe(ROWS, key=key)
        assert agent.n_steps_ == 8
    longest = "é" * schema.MAX_KEY_LENGTH  # characters, not bytes
    with _agent(None).fit(X0, Y0) as agent:
        first = agent.observe(ROWS, key=longest)
        pd.testing.assert_frame_equal(agent.observe(ROWS, key=longest), first)


def test_retried_results_cancels_and_actions_do_nothing_more(store_url):
    with _agent(store_url).fit(X0, Y0) as agent:
        ids = agent.observe(ROWS)["request_id"].dropna().astype(int).tolist()
        assert len(ids) >= 2
        action = agent.record_inspection(ids[0], 4, key="r1")
        before = _state(agent)
        assert agent.record_inspection(ids[0], 4, key="r1") == action
        assert agent.record_inspection(ids[0], np.int64(4), key="r1") == action
        assert _state(agent) == before
        with pytest.raises(IdempotencyKeyError, match="another label"):
            agent.record_inspection(ids[0], 3, key="r1")
        with pytest.raises(IdempotencyKeyError, match="another request_id"):
            agent.record_inspection(ids[1], 4, key="r1")
        # without the key, a second result is the error it always was
        with pytest.raises(RequestError, match="already has a result"):
            agent.record_inspection(ids[0], 4)
        agent.cancel_request(ids[1], reason="no access", key="c1")
        agent.record_action(9, 1, key="a1")
        before = _state(agent)
        agent.cancel_request(ids[1], reason="no access", key="c1")
        agent.record_action(9, 1, key="a1")
        assert _state(agent) == before
        with pytest.raises(IdempotencyKeyError, match="another action"):
            agent.record_action(9, 0, key="a1")
        with pytest.raises(IdempotencyKeyError, match="another reason"):
            agent.cancel_request(ids[1], reason="rain", key="c1")
        agent.store_.verify(agent.name)


def test_keys_survive_a_restart_and_are_per_agent(store_url):
    with _agent(store_url, name="a").fit(X0, Y0) as agent:
        first = agent.observe(ROWS, key="shared")
        request = int(first["request_id"].dropna().iloc[0])
        action = agent.record_inspection(request, 4, key="result")
    with _agent(store_url, name="b").fit(X0, Y0) as other:
        # another agent's key is not this agent's
        assert other.observe(ROWS[:1], key="shared")["step"].tolist() == [8]
    with RiskBasedAgent.from_store(store_url, "a") as resumed:
        before = _state(resumed)
        pd.testing.assert_frame_equal(resumed.observe(ROWS, key="shared"), first)
        assert resumed.record_inspection(request, 4, key="result") == action
        assert _state(resumed) == before


def test_keys_are_chained(store_url):
    with _agent(store_url).fit(X0, Y0) as agent:
        agent.observe(ROWS)
        first = agent.observe(ROWS, key="keyed")
        pd.testing.assert_frame_equal(agent.observe(ROWS, key="keyed"), first)
        agent.store_.verify("agent")
    # the key and its digest are in the event's hash: an edit is found
    store = AgentStore(store_url)
    ev = schema.events
    for column, value in (("client_key", "edited"), ("key_digest", "{}")):
        with store.engine.begin() as conn:
            old = conn.execute(select(ev.c[column]).where(ev.c.seq == 3)).scalar()
            conn.execute(update(ev).where(ev.c.seq == 3).values({column: value}))
        with pytest.raises(StoreError, match=r"skrbal_events, event 3 \(observe\)"):
            store.verify("agent")
        with store.engine.begin() as conn:
            conn.execute(update(ev).where(ev.c.seq == 3).values({column: old}))
    store.verify("agent")
    store.close()


def test_the_key_index_refuses_a_second_event_with_a_key(store_url):
    with _agent(store_url).fit(X0, Y0) as agent:
        agent.observe(ROWS, key="k")
        with agent.store_.engine.connect() as conn:
            indexes = inspect(conn).get_indexes("skrbal_events")
        names = [ix["name"] for ix in indexes if ix["unique"]]
        assert "uq_skrbal_events_client_key" in names
        with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
            with agent.store_.engine.begin() as conn:
                conn.execute(
                    text("UPDATE skrbal_events SET client_key = 'k' WHERE seq = 1")
                )


def test_an_empty_observe_stores_nothing_under_its_key():
    with _agent(None).fit(X0, Y0) as agent:
        assert agent.observe(np.zeros((0, 1)), key="k").empty
        assert agent.observe(ROWS[:1], key="k")["step"].tolist() == [8]


def test_the_event_log_shows_the_client_keys(store_url):
    with _agent(store_url).fit(X0, Y0) as agent:
        agent.observe(ROWS, key="batch-1")
        agent.observe(ROWS)
        events = agent.store_.events(agent.name)
    assert events["client_key"].tolist() == [None, "batch-1", None]
