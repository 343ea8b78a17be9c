"""The store against a hostile round (issue 27): a second name of the file,
rollback, secrets, edits of every column, crafted values.

The PostgreSQL cases run when ``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import multiprocessing
import os

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from skrbal import synthetic_decision_process
from skrbal.online import AgentStore, RiskBasedAgent, StoreError

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [0.0], [6.0], [19.0]])
Y0 = np.array([1, 2, 3, 4])


def _agent(store, name="bridge", **params):
    return RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store, name=name, **params
    ).fit(X0, Y0)


# ---------------------------------------------------------------------- #
# 1. a second writer through a hard link
# ---------------------------------------------------------------------- #
def _observe_through(path, queue):
    try:
        with RiskBasedAgent.from_store(path, "bridge") as agent:
            agent.observe([[1.0]])
        queue.put("observed")
    except StoreError as exc:
        queue.put(str(exc))


def test_a_second_name_of_the_file_meets_the_writer(tmp_path):
    db = tmp_path / "agents.db"
    agent = _agent(str(db))
    agent.observe([[0.5]])
    os.link(db, tmp_path / "agents2.db")
    # another process through the second name is refused, told who holds it
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(
        target=_observe_through, args=(str(tmp_path / "agents2.db"), queue)
    )
    child.start()
    message = queue.get(timeout=60)
    child.join()
    assert message != "observed"
    assert "2 names" in message and f"pid {os.getpid()}" in message
    # and so is a second agent object of this process, by name (no raw error)
    with pytest.raises(StoreError, match="hard link"):
        RiskBasedAgent.from_store(tmp_path / "agents2.db", "bridge")
    # the writer goes on, one step per call
    agent.observe([[0.7]])
    agent.close()
    os.unlink(tmp_path / "agents2.db")
    history = AgentStore(db).history("bridge")
    assert history["step"].tolist() == list(range(6))


# ---------------------------------------------------------------------- #
# 3. one masking rule for passwords
# ---------------------------------------------------------------------- #
SECRET = "s3cr3t-Pa55"


def _with_password(url: str) -> str:
    """``url`` with a password (PostgreSQL's test server trusts, ignores it)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{SECRET}@{host}"


def _everything_said(exc: BaseException) -> str:
    """The message, repr and traceback of an error and of its causes."""
    import traceback

    return "".join(traceback.format_exception(exc)) + repr(exc)


def _errors_of(calls):
    said = []
    for call in calls:
        try:
            call()
        except Exception as exc:
            said.append(_everything_said(exc))
        else:
            pytest.fail(f"{call} raised nothing")
    return said


def test_urls_refused_before_connecting_never_echo_the_password(capsys):
    from skrbal.cli import main

    urls = [
        f"postgres://bridge:{SECRET}@db.example:5432/fleet",
        f"mysql+pymysql://bridge:{SECRET}@db.example/fleet",
        f"postgresql://bridge:{SECRET}@db.example:port/fleet",
        f"postgresql://bridge:{SECRET}@127.0.0.1:1/fleet",  # nobody listens
        f"oracle://:{SECRET}@db.example/fleet",
        f"postgresql://bridge:{SECRET}@[::1/fleet",
    ]
    said = _errors_of([lambda u=u: AgentStore(u) for u in urls])
    for text in said:
        assert SECRET not in text
    assert "postgresql://, not postgres://" in said[0]
    for url in urls:
        for argv in (
            ["agent", "status", "--store", url],
            ["agent", "report", "--store", url, "--out", "-"],
            ["agent", "observe", "--store", url, os.devnull],
        ):
            main(argv)
            out, err = capsys.readouterr()
            assert err.startswith("skrbal: ") and SECRET not in out + err
    # an agent made with such a URL shows it masked, and clones as given
    from sklearn.base import clone

    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=urls[0], name="b"
    )
    shown = [repr(agent), str(agent.get_params()), repr(clone(agent))]
    assert not any(SECRET in text for text in shown)
    assert clone(agent).get_params()["store"] == urls[0]


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_every_store_error_masks_the_password(store_url, tmp_path, capsys):
    from sqlalchemy import update

    from skrbal.cli import main
    from skrbal.online import _schema as schema

    url = _with_password(store_url)
    store = AgentStore(url)
    said = _errors_of(
        [
            lambda: store.status("bridge"),
            lambda: store.verify("bridge"),
            lambda: store.history("bridge"),
            lambda: store.requests("bridge"),
            lambda: store.events("bridge"),
            lambda: store.configuration("bridge"),
            lambda: RiskBasedAgent.from_store(url, "bridge"),
        ]
    )
    for argv in (
        ["agent", "report", "--store", url, "--out", tmp_path / "r.html"],
        ["agent", "status", "--store", url, "--agent", "bridge"],
        ["agent", "verify", "--store", url, "--agent", "bridge"],
        ["agent", "export", "--store", url, "--agent", "x", "--out", "-"],
    ):
        assert main([str(a) for a in argv]) == 2
        said.append("".join(capsys.readouterr()))
    agent = _agent(url)
    agent.observe([[0.5], [7.0]])
    said += _errors_of(
        [
            lambda: RiskBasedAgent.from_store(url, "bridge"),  # locked
            lambda: _agent(url),  # already commissioned
            lambda: agent.record_inspection(99, 1),
        ]
    )
    said += [repr(agent), str(agent.get_params()), repr(store), store.display_url]
    with store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(last_seq=99))
    said += _errors_of([lambda: agent.observe([[1.0]]), lambda: store.verify("bridge")])
    agent.close()
    with store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(last_seq=2))
    # the pages and exports made of the store
    for argv in (
        ["agent", "report", "--store", url, "--out", tmp_path / "r.html"],
        ["agent", "export", "--store", url, "--agent", "bridge", "--out", "-"],
        [
            "agent",
            "export",
            "--store",
            url,
            "--agent",
            "bridge",
            "--table",
            "events",
            "--out",
            "-",
        ],
        ["agent", "status", "--store", url, "--agent", "bridge", "--json"],
    ):
        assert main([str(a) for a in argv]) == 0, capsys.readouterr()
        said.append("".join(capsys.readouterr()))
    said.append((tmp_path / "r.html").read_text())
    store.close()
    assert len(said) > 20
    for text in said:
        assert SECRET not in text, text


# ---------------------------------------------------------------------- #
# 2. rollback and recomputed hashes: anchors outside, a chain key
# ---------------------------------------------------------------------- #
def _tables():
    from skrbal.online import _schema as schema

    return [
        schema.observations,
        schema.blocks,
        schema.actions,
        schema.requests,
        schema.events,
    ]


def _snapshot(store):
    """Every row of the store: what an older copy of the database holds."""
    from sqlalchemy import select

    from skrbal.online import _schema as schema

    with store.engine.connect() as conn:
        rows = {t.name: conn.execute(select(t)).mappings().all() for t in _tables()}
        rows["agents"] = conn.execute(select(schema.agents)).mappings().all()
    return {k: [dict(r) for r in v] for k, v in rows.items()}


def _restore(store, snapshot):
    """Put an older copy back (a rollback: no hash is recomputed)."""
    from sqlalchemy import delete, insert, update

    from skrbal.online import _schema as schema

    with store.engine.begin() as conn:
        for table in reversed(_tables()):
            conn.execute(delete(table))
        for table in _tables():
            if snapshot[table.name]:
                conn.execute(insert(table), snapshot[table.name])
        for row in snapshot["agents"]:
            conn.execute(
                update(schema.agents)
                .where(schema.agents.c.agent_id == row["agent_id"])
                .values(row)
            )


def _forge(store, secret=None, strip_mark=False):
    """Edit the first block's EVPI of agent 'bridge' and recompute every
    digest and hash, as a writer who knows the scheme (and ``secret``, if
    given) would."""
    import json

    from sqlalchemy import select, update

    from skrbal.online import _schema as schema
    from skrbal.online._chain import block_digest, event_hash, genesis_hash

    b, ev = schema.blocks, schema.events
    with store.engine.begin() as conn:
        agent = conn.execute(
            select(schema.agents).where(schema.agents.c.name == "bridge")
        ).first()
        mine = b.c.agent_id == agent.agent_id
        first = select(b).where(mine).order_by(b.c.first_step)
        block = dict(conn.execute(first).mappings().first())
        block["evpi"] = (np.frombuffer(block["evpi"], "<f8") + 0.125).tobytes()
        conn.execute(
            update(b)
            .where(mine & (b.c.first_step == block["first_step"]))
            .values(evpi=block["evpi"])
        )
        previous = genesis_hash(agent, secret)
        events = select(ev).where(ev.c.agent_id == agent.agent_id).order_by(ev.c.seq)
        for e in conn.execute(events).all():
            payload = json.loads(e.payload)
            if e.kind == "observe" and e.step == block["first_step"]:
                payload["block_sha256"] = block_digest(block)
            if e.seq == 1 and strip_mark:
                payload.pop("chain", None)
            elif e.seq == 1 and secret is not None:
                payload["chain"] = "hmac-sha256"
            text = json.dumps(payload)
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
                secret=secret,
            )
            conn.execute(
                update(ev)
                .where((ev.c.agent_id == agent.agent_id) & (ev.c.seq == e.seq))
                .values(payload=text, hash=previous)
            )


def test_a_rollback_passes_the_chain_but_not_an_anchor(store_url, tmp_path):
    heads = tmp_path / "heads.jsonl"
    store = AgentStore(store_url, anchor_file=heads)
    with _agent(store) as agent:
        agent.observe([[0.5], [7.0]])
        kept = store.verify("bridge")
        older = _snapshot(store)
        agent.observe([[19.0]], key="batch-2")
        agent.observe([[1.0]])
    latest = store.verify("bridge")
    assert latest["seq"] == kept["seq"] + 2
    _restore(store, older)
    plain = AgentStore(store_url)
    # the chain alone cannot see it: the older copy is whole
    assert plain.verify("bridge") == kept
    # an anchor kept outside can, given by the caller or in the sidecar
    for head in (latest, f"{latest['seq']}:{latest['hash']}"):
        with pytest.raises(StoreError, match=r"ends at event 2.*rolled back"):
            plain.verify("bridge", expected_head=head)
        with pytest.raises(StoreError, match="rolled back"):
            RiskBasedAgent.from_store(plain, "bridge", expected_head=head)
    with pytest.raises(StoreError, match="rolled back"):
        store.verify("bridge")
    with pytest.raises(StoreError, match="rolled back"):
        RiskBasedAgent.from_store(store, "bridge")
    # what an anchor does not see: a rollback to it, or after it
    assert plain.verify("bridge", expected_head=kept) == kept
    # a rewrite up to the anchor, every hash recomputed, is seen
    _forge(plain)
    assert plain.verify("bridge")["seq"] == kept["seq"]
    with pytest.raises(StoreError, match="another hash than the anchor"):
        plain.verify("bridge", expected_head=kept)
    with pytest.raises(ValueError, match="SEQ:HASH"):
        plain.verify("bridge", expected_head="3:abc")
    plain.close()
    store.close()


def test_a_chain_key_catches_recomputed_hashes(store_url, tmp_path, monkeypatch):
    key = b"k" * 32
    (tmp_path / "key").write_bytes(key + b"\n")
    # without a key, a writer who recomputes every hash is not seen
    with AgentStore(store_url) as store:
        _agent(store, "open").close()
    monkeypatch.setenv("SKRBAL_CHAIN_KEY_FILE", str(tmp_path / "key"))
    with AgentStore(store_url) as signed:  # the key from the environment
        with _agent(signed) as agent:
            agent.observe([[0.5], [7.0]])
        older = _snapshot(signed)
        with RiskBasedAgent.from_store(signed, "bridge") as agent:
            agent.observe([[19.0]])
        head = signed.verify("bridge")
        with pytest.raises(StoreError, match=r"'open'.*not signed"):
            signed.verify("open")
    monkeypatch.delenv("SKRBAL_CHAIN_KEY_FILE")
    with AgentStore(store_url) as unsigned:
        with pytest.raises(StoreError, match=r"signed.*SKRBAL_CHAIN_KEY"):
            unsigned.verify("bridge")
        with pytest.raises(StoreError, match="signed"):
            RiskBasedAgent.from_store(unsigned, "bridge")
    with AgentStore(store_url, chain_key=key) as signed:
        # what the key does not see: a rollback to a state it signed
        _restore(signed, older)
        assert signed.verify("bridge")["seq"] == head["seq"] - 1
        with pytest.raises(StoreError, match="rolled back"):
            signed.verify("bridge", expected_head=head)
        # an edit with every hash recomputed without the key is seen
        _forge(signed)
        with pytest.raises(StoreError, match=r"event 1 .*hash does not follow"):
            signed.verify("bridge")
        _forge(signed, strip_mark=True)
        with pytest.raises(StoreError, match="not signed"):
            signed.verify("bridge")
        # and so is one with the key (but not by the key: by an anchor)
        _forge(signed, secret=key)
        assert signed.verify("bridge")["seq"] == head["seq"] - 1
    with pytest.raises(ValueError, match="at least 16 bytes"):
        AgentStore(store_url, chain_key=b"short")


# ---------------------------------------------------------------------- #
# 4. the agent's clock
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize("timed", [False, True])
def test_an_edited_clock_is_caught_by_verify(store_url, timed):
    from sqlalchemy import update

    from skrbal.online import _schema as schema

    store = AgentStore(store_url)
    stamps = [1e9 + i for i in range(4)] if timed else None
    with RiskBasedAgent(
        estimator=GaussianNB(), process=PROCESS, store=store, name="bridge"
    ).fit(X0, Y0, timestamps=stamps) as agent:
        agent.observe([[5.0]], timestamps=[1e9 + 10] if timed else None)
    for clock in ("timestamp" if not timed else "step", None, "seconds"):
        with store.engine.begin() as conn:
            conn.execute(update(schema.agents).values(clock=clock))
        with pytest.raises(StoreError, match=r"bridge.*skrbal_agents.*clock is"):
            store.verify("bridge")
        with pytest.raises(StoreError, match="clock is"):
            RiskBasedAgent.from_store(store, "bridge")
    with store.engine.begin() as conn:
        conn.execute(
            update(schema.agents).values(clock="timestamp" if timed else "step")
        )
    with RiskBasedAgent.from_store(store, "bridge") as agent:
        agent.observe([[6.0]], timestamps=[1e9 + 20] if timed else None)
    store.close()
