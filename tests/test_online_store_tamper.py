"""Tamper evidence: every kind of edit of a store ends in a named StoreError.

Each case builds an agent (observations, results, a cancellation, an action,
a spend cap), edits its store as a careless or hostile writer would, and
requires :meth:`RiskBasedAgent.from_store` (and :meth:`AgentStore.verify`)
to refuse it, naming the agent, the table and the event or row.
"""

import json

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import delete, select, text, update

from skrbal import synthetic_decision_process
from skrbal.budget import CostThreshold, SpendCap
from skrbal.online import AgentStore, RiskBasedAgent, StoreError
from skrbal.online._sql import _schema as schema

PROCESS = synthetic_decision_process().set_params(inspection_cost=1e-4)
X0 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y0 = np.array([1, 2, 3, 4] * 2)
ev, req, b, ag, obs = (
    schema.events,
    schema.requests,
    schema.blocks,
    schema.agents,
    schema.observations,
)


def _build(url):
    """An agent with results (keyed calls, a routine label), a cancellation
    and an action; its event seqs."""
    budget = CostThreshold() & SpendCap(limit=1.0, period=10**6)
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, budget=budget, store=url
    ).fit(X0, Y0) as agent:
        # EVPI exceeds the cost between 12.1 and 12.6 only
        ids = (
            agent.observe(np.linspace(11.0, 13.0, 40)[:, None])["request_id"]
            .dropna()
            .astype(int)
            .tolist()
        )
        assert len(ids) >= 3
        agent.record_inspection(ids[0], 2)
        agent.cancel_request(ids[1], reason="no access")
        agent.record_action(10, 1)
        agent.observe(np.linspace(-5.0, 20.0, 30)[:, None], key="batch-2")
        agent.record_inspection(ids[2], 3, key="work-order-3")
        agent.record_label(48, 1)  # a routine inspection of a quiet step
    with AgentStore(url) as store:
        return store.events("agent").set_index("seq")["kind"].to_dict()


@pytest.fixture(scope="module")
def built_sqlite(tmp_path_factory):
    """``_build``'s SQLite store and event kinds, built once a module."""
    path = tmp_path_factory.mktemp("tamper") / "agents.db"
    kinds = _build(str(path))
    # closed, so the file holds every row: no write-ahead log beside it
    assert not path.with_name("agents.db-wal").exists()
    return path, kinds


@pytest.fixture(scope="module")
def built_postgres(postgres_module_schema_url):
    """``_build``'s schema on PostgreSQL and event kinds, built once a module."""
    from _store_copies import schema_of

    return schema_of(postgres_module_schema_url), _build(postgres_module_schema_url)


@pytest.fixture
def built(store_url, request):
    """``_build`` at ``store_url``, copied from a store built once a module
    (tests/_store_copies.py); its event kinds."""
    from _store_copies import copy_store

    if "://" in store_url:
        template, kinds = request.getfixturevalue("built_postgres")
        copy_store(store_url, None, template)
    else:
        template, kinds = request.getfixturevalue("built_sqlite")
        copy_store(store_url, template)
    return dict(kinds)


def _first(kinds, kind):
    return min(seq for seq, k in kinds.items() if k == kind)


def _edit_blob(conn, column, change):
    row = conn.execute(select(b.c.first_step, b.c[column])).first()
    values = np.frombuffer(row[1], dtype="<f8").copy()
    change(values)
    conn.execute(
        update(b)
        .where(b.c.first_step == row.first_step)
        .values({column: values.astype("<f8").tobytes()})
    )


def _negative_spend(conn):
    state = json.loads(conn.execute(select(ag.c.budget_state)).scalar())
    state["policies"][1]["spent"] = -1e9
    conn.execute(update(ag).values(budget_state=json.dumps(state)))


def _swap(conn, kinds):
    a, c = _first(kinds, "result"), _first(kinds, "cancel")
    conn.execute(update(ev).where(ev.c.seq == a).values(seq=-1))
    conn.execute(update(ev).where(ev.c.seq == c).values(seq=a))
    conn.execute(update(ev).where(ev.c.seq == -1).values(seq=c))


# edit -> the words of the error (table, then what)
EDITS = {
    "delete a result event": (
        lambda c, k: c.execute(delete(ev).where(ev.c.seq == _first(k, "result"))),
        r"skrbal_events, event \d+: missing",
    ),
    "delete the last event": (
        lambda c, k: c.execute(delete(ev).where(ev.c.seq == max(k))),
        r"skrbal_agents.*last_seq is \d+ but the log ends",
    ),
    "edit a result's label in its event": (
        lambda c, k: c.execute(
            update(ev)
            .where(ev.c.seq == _first(k, "result"))
            .values(payload=json.dumps({"label": 4, "warnings": []}))
        ),
        r"skrbal_events, event \d+ \(result\): its hash",
    ),
    "reorder two events": (_swap, r"skrbal_events, event \d+ .*hash"),
    "edit an event's time": (
        lambda c, k: c.execute(
            update(ev).where(ev.c.seq == 2).values(created_at=ev.c.created_at + 1)
        ),
        r"skrbal_events, event 2 \(observe\): its hash",
    ),
    "delete a request row": (
        lambda c, k: c.execute(delete(req).where(req.c.request_id == 2)),
        r"skrbal_requests, .*request 2 is missing",
    ),
    "edit a request's label": (
        lambda c, k: c.execute(
            update(req).where(req.c.status == "done").values(label="4")
        ),
        r"skrbal_requests, request \d+ .*differs from result event",
    ),
    "reopen a cancelled request": (
        lambda c, k: c.execute(
            update(req).where(req.c.status == "cancelled").values(status="open")
        ),
        r"skrbal_requests, request \d+ .*status 'open', the log says 'cancelled'",
    ),
    "edit a feature in a block": (
        lambda c, k: _edit_blob(c, "features", lambda v: v.__setitem__(3, 0.5)),
        r"skrbal_blocks, block of step 8 .*bytes differ",
    ),
    "put NaN in a belief": (
        lambda c, k: _edit_blob(c, "belief", lambda v: v.__setitem__(0, np.nan)),
        r"skrbal_blocks, block of step 8 .*bytes differ",
    ),
    "truncate a block's blob": (
        lambda c, k: c.execute(
            update(b).where(b.c.first_step == 8).values(evpi=b"\0" * 16)
        ),
        r"skrbal_blocks, block of step 8 .*bytes differ",
    ),
    "delete a block": (
        lambda c, k: c.execute(delete(b).where(b.c.first_step == 8)),
        r"skrbal_blocks, block of step 8 \(event 2\): missing",
    ),
    "edit a commissioning label": (
        lambda c, k: c.execute(update(obs).where(obs.c.step == 0).values(label="2")),
        r"skrbal_observations, commissioning rows",
    ),
    "negative spend in the budget state": (
        lambda c, k: _negative_spend(c),
        r"skrbal_agents, row of agent \d+: budget_state differs",
    ),
    "edit the step counter": (
        lambda c, k: c.execute(update(ag).values(n_steps=ag.c.n_steps + 5)),
        r"skrbal_agents, row of agent \d+: n_steps",
    ),
    "edit a call's client key": (
        lambda c, k: c.execute(
            update(ev).where(ev.c.client_key == "batch-2").values(client_key="b")
        ),
        r"skrbal_events, event \d+ \(observe\): its hash",
    ),
    "drop a call's client key": (
        lambda c, k: c.execute(
            update(ev)
            .where(ev.c.client_key == "work-order-3")
            .values(client_key=None, key_digest=None)
        ),
        r"skrbal_events, event \d+ \(result\): its hash",
    ),
    "edit a call's input digest": (
        lambda c, k: c.execute(
            update(ev)
            .where(ev.c.client_key == "batch-2")
            .values(key_digest=json.dumps({"call": "observe"}))
        ),
        r"skrbal_events, event \d+ \(observe\): its hash",
    ),
    "turn a routine label into a request's result": (
        lambda c, k: c.execute(
            update(req).where(req.c.origin == "routine").values(origin=None)
        ),
        r"skrbal_requests, request \d+ \(step 48\).*differs from result event",
    ),
    "edit the stored process": (
        lambda c, k: c.execute(update(ag).values(process=ag.c.process.concat(" "))),
        r"skrbal_events, event 1 \(commission\): its hash",
    ),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_every_edit_is_named(store_url, built, edit):
    kinds = built
    change, words = EDITS[edit]
    with AgentStore(store_url) as store:
        with store.engine.begin() as conn:
            change(conn, kinds)
        with pytest.raises(StoreError, match=r"agent 'agent': table " + words):
            store.verify("agent")
    with pytest.raises(StoreError, match=words):
        RiskBasedAgent.from_store(store_url)


def test_an_untouched_store_verifies(store_url, built):
    with AgentStore(store_url) as store:
        store.verify("agent")
    with RiskBasedAgent.from_store(store_url) as agent:
        assert agent.status()["n_results"] == 2


def test_a_dropped_table_is_named(store_url, built):
    with AgentStore(store_url) as store:
        with store.engine.begin() as conn:
            conn.execute(text("DROP TABLE skrbal_requests"))
        with pytest.raises(StoreError, match=r"agent .agent.*skrbal_requests"):
            RiskBasedAgent.from_store(store)
