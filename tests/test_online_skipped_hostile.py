"""Rows skipped for a missing value (issue 28.21) against a hostile round:
their record is in the chain, and a crafted one is named, never a raw error."""

import json

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import select, update

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, RiskBasedAgent, StoreError
from skrbal.online._sql import _schema as schema
from skrbal.online._sql._chain import event_hash, genesis_hash

X0 = np.array([[-5.0], [0.0], [6.0], [19.0]])
Y0 = np.array([1, 2, 3, 4])


def _skipping_agent(url):
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=synthetic_decision_process(),
        store=url,
        name="bridge",
    ).fit(X0, Y0)
    agent.observe([[0.5], [7.0]], skipped=[(3, ["f1"]), (5, ["f1"], "2026-01-01")])
    # A row skipped after the last decided one: an event of its own.
    agent.observe(np.empty((0, 1)), skipped=[(7, ["f1"])])
    agent.close()
    return AgentStore(url)


def _rewrite_skipped(store, skipped, *, rehash: bool, kind="observe"):
    """Put ``skipped`` in the ``kind`` event's payload; with ``rehash``, as a
    writer who knows the scheme, every hash after it recomputed."""
    ev = schema.events
    with store.engine.begin() as conn:
        agent = conn.execute(select(schema.agents)).first()
        previous = genesis_hash(agent)
        for e in conn.execute(select(ev).order_by(ev.c.seq)).all():
            payload = json.loads(e.payload)
            if "skipped" in payload and e.kind == kind:
                payload["skipped"] = skipped
            text = json.dumps(payload)
            if rehash:
                previous = event_hash(
                    previous,
                    e.seq,
                    e.kind,
                    e.step,
                    e.request_id,
                    text,
                    e.created_at,
                    e.client_key,
                    e.key_digest,
                )
            conn.execute(
                update(ev)
                .where(ev.c.seq == e.seq)
                .values(payload=text, **({"hash": previous} if rehash else {}))
            )


def test_the_skipped_rows_are_counted(store_url):
    with _skipping_agent(store_url) as store:
        assert store.status("bridge")["n_skipped"] == 3
        store.verify("bridge")


@pytest.mark.parametrize(
    "skipped", [[], [{"row": 3, "columns": ["f1"]}], [{"row": 99, "columns": ["x"]}]]
)
@pytest.mark.parametrize("kind", ["observe", "skip"])
def test_an_edited_skipped_record_is_caught_by_verify(store_url, skipped, kind):
    with _skipping_agent(store_url) as store:
        _rewrite_skipped(store, skipped, rehash=False, kind=kind)
        with pytest.raises(StoreError, match="hash"):
            store.verify("bridge")


@pytest.mark.parametrize(
    "skipped",
    [5, "rows", [5], [{"row": -1, "columns": ["f1"]}], [{"row": 3}], None],
    ids=["int", "text", "a number", "negative row", "no columns", "null"],
)
@pytest.mark.parametrize("kind", ["observe", "skip"])
def test_a_crafted_skipped_record_is_named(store_url, skipped, kind):
    """Hashes recomputed (no chain key): verify names the record, and status
    (n_skipped) gives a StoreError, not a raw TypeError."""
    with _skipping_agent(store_url) as store:
        _rewrite_skipped(store, skipped, rehash=True, kind=kind)
        with pytest.raises(StoreError, match="skipped"):
            store.verify("bridge")
        try:
            store.status("bridge")
        except StoreError as exc:
            assert "skipped" in str(exc)
