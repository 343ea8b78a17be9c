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
from skrbal.online import (
    AgentStore,
    ConfigurationError,
    RiskBasedAgent,
    StoreError,
)

PROCESS = synthetic_decision_process()
X0 = np.array([[-5.0], [0.0], [6.0], [19.0]])
Y0 = np.array([1, 2, 3, 4])
# Commissioning after which steps near 12.3 are worth inspecting.
X8 = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
Y8 = np.array([1, 2, 3, 4] * 2)


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
    from skrbal.online._sql import _schema as schema

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
    from skrbal.online._sql import _schema as schema

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

    from skrbal.online._sql import _schema as schema

    with store.engine.connect() as conn:
        rows = {t.name: conn.execute(select(t)).mappings().all() for t in _tables()}
        rows["agents"] = conn.execute(select(schema.agents)).mappings().all()
    return {k: [dict(r) for r in v] for k, v in rows.items()}


def _restore(store, snapshot):
    """Put an older copy back (a rollback: no hash is recomputed)."""
    from sqlalchemy import delete, insert, update

    from skrbal.online._sql import _schema as schema

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

    from skrbal.online._sql import _schema as schema
    from skrbal.online._sql._chain import block_digest, event_hash, genesis_hash

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

    from skrbal.online._sql import _schema as schema

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


# ---------------------------------------------------------------------- #
# 6. every column of every table is covered by the chain, or derived
# ---------------------------------------------------------------------- #
# Columns no decision, history, status or report reads: who holds the lock.
NOT_CONTENT = {("skrbal_agents", "owner"), ("skrbal_agents", "agent_id")}


def _rich_agent(url):
    """Agent 'bridge' with every kind of row (timestamps, an inspection
    method's report, a cancellation with a reason, an expiry, an action, a
    routine label), and agent 'other' beside it."""
    import warnings

    from skrbal.exceptions import RequestExpiredWarning
    from skrbal.inspection import InspectionMethod, perfect_inspection

    process = PROCESS.set_params(inspection_cost=0.05)
    drone = InspectionMethod(  # cheap and good: chosen for most requests
        name="drone",
        cost=0.05 * process.inspection_cost,
        confusion=[[0.999, 0.001], [0.999, 0.001], [0.999, 0.001], [0.001, 0.999]],
        outcomes=["no damage", "damage"],
    )
    t0 = 1.7e9
    X = np.array([[-5.0], [-0.7], [5.8], [19.0], [-4.0], [0.3], [6.8], [18.0]])
    agent = RiskBasedAgent(
        estimator=GaussianNB(),
        process=process,
        inspections=[perfect_inspection(process), drone],
        request_timeout=3000.0,
        store=url,
        name="bridge",
    ).fit(X, np.concatenate([Y0, Y0]), timestamps=t0 + np.arange(8.0))
    first = agent.observe(
        np.linspace(11.9, 12.7, 30)[:, None], timestamps=t0 + 100 * np.arange(1, 31)
    )
    made = first.dropna(subset=["request_id"])
    ids = made["request_id"].astype(int).tolist()
    methods = made["method"].tolist()
    assert "drone" in methods and "perfect" in methods, made
    drone_id = ids[methods.index("drone")]
    perfect_id = ids[methods.index("perfect")]
    others = [i for i in ids if i not in (drone_id, perfect_id)]
    agent.record_inspection(drone_id, report="damage", timestamp=t0 + 3100)
    agent.record_inspection(perfect_id, 3, timestamp=t0 + 3101, key="wo-1")
    agent.cancel_request(others[0], reason="=no access")
    agent.record_action(9, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RequestExpiredWarning)
        agent.observe([[1.0], [7.0]], timestamps=[t0 + 9000, t0 + 9001])
    agent.record_label(9, 2, timestamp=t0 + 9002)
    agent.close()
    _agent(url, "other").close()


def _changed(value, column):
    """Another value of a column's type (JSON text stays JSON)."""
    import json

    if value is None:
        kinds = {
            "Integer": 7,
            "Float": 1234.5,
            "LargeBinary": b"\1" * 8,
        }
        return kinds.get(type(column.type).__name__, '"x"')
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, (bytes, memoryview)):
        value = bytearray(value)
        value[0] ^= 1
        return bytes(value)
    try:
        decoded = json.loads(value)
    except ValueError:
        if len(value) >= (getattr(column.type, "length", None) or len(value) + 1):
            return value[:-1] + ("0" if value[-1] != "0" else "1")  # a hash
        return value + "x"
    if isinstance(decoded, (int, float)) and not isinstance(decoded, bool):
        return json.dumps(decoded + 1)
    if isinstance(decoded, str):
        return json.dumps(decoded + "x")
    if isinstance(decoded, list):
        return json.dumps([*decoded, 0] if decoded else [1])
    if isinstance(decoded, dict):
        return json.dumps({**decoded, "x": 1})
    return json.dumps(1)


def _edits():
    from skrbal.online._sql import _schema as schema

    tables = [
        schema.agents,
        schema.observations,
        schema.blocks,
        schema.actions,
        schema.requests,
        schema.events,
    ]
    cases = []
    for table in tables:
        for column in table.columns:
            if (table.name, column.name) in NOT_CONTENT:
                continue
            cases.append((table.name, column.name, "edit"))
        if table is not schema.agents:
            cases += [(table.name, None, "delete"), (table.name, None, "insert")]
    return cases


def _apply(store, table_name, column_name, kind):
    from sqlalchemy import and_, delete, insert, select, update

    from skrbal.online._sql import _schema as schema

    table = schema.metadata.tables[table_name]
    with store.engine.begin() as conn:
        bridge, other = (
            conn.execute(
                select(schema.agents.c.agent_id).where(schema.agents.c.name == name)
            ).scalar()
            for name in ("bridge", "other")
        )
        key = [c for c in table.primary_key.columns]
        mine = (
            table.c.agent_id == bridge if "agent_id" in table.c else table.c.name == ""
        )
        if table is schema.agents:
            mine = table.c.agent_id == bridge
        rows = conn.execute(select(table).where(mine)).mappings().all()
        assert rows, table_name
        if column_name is not None:
            # the row where the column says most: not NULL, the last one
            filled = [r for r in rows if r[column_name] is not None]
            row = (filled or rows)[-1]
        else:
            row = rows[-1]
        where = and_(*(c == row[c.name] for c in key))
        if kind == "delete":
            conn.execute(delete(table).where(where))
        elif kind == "insert":
            copy = dict(row)
            for c in key:
                if c.name != "agent_id":
                    copy[c.name] = row[c.name] + 1000
            if table is schema.requests:  # one request per step
                copy["step"] = row["step"] + 1000
            conn.execute(insert(table), copy)
        else:
            column = table.c[column_name]
            value = other if column_name == "agent_id" else None
            if value is None:
                value = _changed(row[column_name], column)
                if column.primary_key:
                    value = row[column_name] + 1000
            conn.execute(update(table).where(where).values({column_name: value}))


@pytest.fixture(scope="module")
def rich_sqlite_store(tmp_path_factory):
    """``_rich_agent``'s SQLite store, built once a module: tests edit copies."""
    path = tmp_path_factory.mktemp("rich") / "agents.db"
    _rich_agent(str(path))
    # closed, so the file holds every row: no write-ahead log beside it
    assert not path.with_name("agents.db-wal").exists()
    return path


@pytest.fixture(scope="module")
def rich_postgres_schema(postgres_module_schema_url):
    """The schema of ``_rich_agent``'s store on PostgreSQL, built once a module."""
    from _store_copies import schema_of

    _rich_agent(postgres_module_schema_url)
    return schema_of(postgres_module_schema_url)


def _rich_store(store_url, sqlite_template, request):
    """``_rich_agent`` at ``store_url``: a copy of a template built once
    (tests/_store_copies.py). The ~160 edits below each need the rows
    unedited; building them costs three times the edit and its checks."""
    from _store_copies import copy_store

    if "://" in store_url:
        copy_store(store_url, None, request.getfixturevalue("rich_postgres_schema"))
    else:
        copy_store(store_url, sqlite_template)


@pytest.mark.parametrize(("table", "column", "kind"), _edits())
def test_every_column_of_every_table_is_verified(
    store_url, rich_sqlite_store, request, table, column, kind
):
    _rich_store(store_url, rich_sqlite_store, request)
    with AgentStore(store_url) as store:
        store.verify("bridge")
        _apply(store, table, column, kind)
        # a renamed agent is found by its new name, and refused
        name = "bridgex" if column == "name" else "bridge"
        with pytest.raises(StoreError, match=rf"agent '{name}': table skrbal_"):
            store.verify(name)
        # resuming checks the configuration first: its own named error
        with pytest.raises((StoreError, ConfigurationError)):
            RiskBasedAgent.from_store(store, name)


# ---------------------------------------------------------------------- #
# 7. CSV formula injection in export
# ---------------------------------------------------------------------- #
def test_export_never_writes_a_formula_to_a_spreadsheet(tmp_path, capsys):
    import csv
    import io

    from skrbal.cli import main

    db = tmp_path / "agents.db"
    process = PROCESS.set_params(
        inspection_cost=1e-4, action_names=("+do nothing", "=cmd|' /C calc'!A0")
    )
    agent = RiskBasedAgent(
        estimator=GaussianNB(), process=process, store=str(db), name="bridge"
    ).fit(X8, Y8)
    made = agent.observe(np.linspace(11.9, 12.7, 20)[:, None], key="@SUM(1+1)")
    ids = made["request_id"].dropna().astype(int).tolist()
    agent.cancel_request(ids[0], reason='=HYPERLINK("http://x","y")')
    agent.cancel_request(ids[1], reason="-2+3", key="\tcell")
    agent.close()
    dangerous = ("=", "+", "-", "@", "\t", "\r")
    for table in ("history", "requests", "events"):
        argv = ["agent", "export", "--store", db, "--agent", "bridge"]
        argv += ["--table", table, "--out", "-"]
        assert main([str(a) for a in argv]) == 0
        cells = [c for row in csv.reader(io.StringIO(capsys.readouterr().out))
                 for c in row]  # fmt: skip
        text = [c for c in cells if not _is_number(c)]
        assert not [c for c in text if c.startswith(dangerous)], table
        assert main([str(a) for a in [*argv, "--raw"]]) == 0
        raw = [c for row in csv.reader(io.StringIO(capsys.readouterr().out))
               for c in row]  # fmt: skip
        assert any(c.startswith(dangerous) and not _is_number(c) for c in raw)
        assert len(raw) == len(cells)
    # what was quoted is the value with a leading quote; numbers stay numbers
    argv = ["agent", "export", "--store", db, "--agent", "bridge", "--table"]
    main([str(a) for a in [*argv, "requests", "--out", "-"]])
    out = capsys.readouterr().out
    assert "'=HYPERLINK" in out and "'-2+3" in out


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- #
# 8. naive datetimes next to aware ones
# ---------------------------------------------------------------------- #
def test_naive_and_aware_datetimes_follow_the_rule_of_iso_strings():
    import datetime

    from skrbal._datetimes import parse_datetimes

    utc = datetime.timezone.utc
    naive, aware = datetime.datetime(2025, 1, 2), datetime.datetime(2025, 1, 3)
    aware = aware.replace(tzinfo=utc)
    for items in (
        [naive, aware],
        ["2025-01-02T00:00", aware],
        [naive, "2025-01-03T00:00Z"],
        ["2025-01-02T00:00", "2025-01-03T00:00Z"],  # the rule as it was
    ):
        with pytest.raises(ValueError, match="mixes date-times with and without"):
            parse_datetimes(np.array(items, dtype=object), "timestamps")
    # all naive (read as UTC), or all aware, with missing values, are fine
    both = parse_datetimes(np.array([naive, None], dtype=object), "t")
    assert str(both[0]) == "2025-01-02 00:00:00+00:00"
    agent = RiskBasedAgent(estimator=GaussianNB(), process=PROCESS).fit(
        X0,
        Y0,
        timestamps=[datetime.datetime(2025, 1, 1, h, tzinfo=utc) for h in range(4)],
    )
    with pytest.raises(ValueError, match="mixes"):
        agent.observe([[1.0], [2.0]], timestamps=[naive, aware])
    assert agent.status()["n_observations"] == 0
    agent.close()


# ---------------------------------------------------------------------- #
# 9. a budget period shorter than one step
# ---------------------------------------------------------------------- #
def test_a_period_shorter_than_a_step_is_refused_on_a_step_clock():
    from skrbal.budget import CostThreshold, PacedBudget, SpendCap

    cost = PROCESS.inspection_cost
    for budget, named in (
        (PacedBudget(limit=cost, period=1e-9), r"PacedBudget\(period=1e-09\)"),
        (CostThreshold() & SpendCap(limit=cost, period=0.5), r"SpendCap\(period=0.5"),
    ):
        agent = RiskBasedAgent(estimator=GaussianNB(), process=PROCESS, budget=budget)
        with pytest.raises(ValueError, match=named + ".*shorter than one step"):
            agent.fit(X8, Y8)
        # in seconds, with timestamps, the period means what it says
        agent.fit(X8, Y8, timestamps=np.arange(8.0)).close()
    # a period of two steps: one inspection's money per two steps
    with RiskBasedAgent(
        estimator=GaussianNB(),
        process=PROCESS.set_params(inspection_cost=1e-4),
        budget=CostThreshold() & SpendCap(limit=1e-4, period=2.0),
    ).fit(X8, Y8) as agent:
        decided = agent.observe(np.full((20, 1), 12.3))
        assert decided["inspect"].sum() <= 10


# ---------------------------------------------------------------------- #
# 10. a CSV number is what the documented grammar says
# ---------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "cell", ["1_000", "\u0661\u0662", "\uff11", "1,5", "inf", "nan", "0x10", "1e"]
)
def test_observe_reads_numbers_by_the_grammar_only(tmp_path, capsys, cell):
    from skrbal.cli import main

    db = tmp_path / "agents.db"
    _agent(str(db)).close()
    feed = tmp_path / "feed.csv"
    feed.write_text(f'x0\n1.5\n"{cell}"\n', encoding="utf-8")
    argv = ["agent", "observe", feed, "--store", db, "--agent", "bridge"]
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "line 3: column 'x0'" in err and "not a finite number" in err
    assert AgentStore(db).status("bridge")["n_observations"] == 1


def test_observe_reads_every_spelling_the_grammar_allows(tmp_path, capsys):
    from skrbal.cli import main

    db = tmp_path / "agents.db"
    _agent(str(db)).close()
    feed = tmp_path / "feed.csv"
    feed.write_text("x0\n-1.5\n+2\n.5\n7.\n2e-3\n1E+2\n 3 \n", encoding="utf-8")
    argv = ["agent", "observe", feed, "--store", db, "--agent", "bridge"]
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    history = AgentStore(db).history("bridge")
    assert history["feature_0"].tolist()[4:] == [-1.5, 2.0, 0.5, 7.0, 2e-3, 100.0, 3.0]


# ---------------------------------------------------------------------- #
# 11. names are text, never mathtext
# ---------------------------------------------------------------------- #
def test_names_with_dollars_are_drawn_as_text(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import io

    from matplotlib.figure import Figure

    from skrbal.cli import main
    from skrbal.plotting import AgentHistoryDisplay

    db = tmp_path / "agents.db"
    names = ("$\\undefined{x}$", "cost $5 to $10", "ok", "$x^2$")
    process = PROCESS.set_params(
        inspection_cost=1e-4, state_names=names, action_names=("$a$", "$\\b{")
    )
    with RiskBasedAgent(
        estimator=GaussianNB(), process=process, store=str(db), name="bridge"
    ).fit(X8, Y8) as agent:
        made = agent.observe(np.linspace(11.9, 12.7, 20)[:, None])
        first = int(made["request_id"].dropna().iloc[0])
        agent.record_inspection(first, 3)
    argv = ["agent", "report", "--store", db, "--out", tmp_path / "r.html"]
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    figure = Figure()
    figure.subplots(4, 1)
    with AgentStore(db) as store:
        display = AgentHistoryDisplay.from_store(store, "bridge", axes=figure.axes)
    figure.savefig(io.BytesIO(), format="png")  # draws every text
    drawn = [t.get_text() for ax in display.figure_.axes for t in ax.texts]
    drawn += [
        t.get_text()
        for ax in display.figure_.axes
        if ax.get_legend() is not None
        for t in ax.get_legend().get_texts()
    ]
    assert any("\\$x^2\\$" in text for text in drawn)


# ---------------------------------------------------------------------- #
# 12. every crash of a damaged or crafted store is a named error
# ---------------------------------------------------------------------- #
def _set_config(store, column, config):
    """Store a crafted configuration with its fingerprint recomputed."""
    import hashlib
    import json

    from sqlalchemy import update

    from skrbal.online._sql import _schema as schema

    text = config if isinstance(config, str) else json.dumps(config)
    values = {column: text}
    if column in ("estimator", "budget"):
        values[f"{column}_fingerprint"] = hashlib.sha256(text.encode()).hexdigest()
    with store.engine.begin() as conn:
        conn.execute(update(schema.agents).values(values))


def _estimator(params):
    return {"__estimator__": "sklearn.naive_bayes.GaussianNB", "params": params}


def _all_of(depth):
    """JSON text of AllOf nested ``depth`` deep (too deep for json.dumps)."""
    head = '{"__estimator__": "skrbal.budget._base.AllOf", "params": {"policies": ['
    leaf = '{"__estimator__": "skrbal.budget._policies.CostThreshold", "params": {}}'
    return head * depth + leaf + "]}}" * depth


CRAFTED = {
    "structured dtype": (
        "estimator",
        _estimator(
            {
                "priors": {
                    "__ndarray__": [[1, 2]],
                    "dtype": [["a", "<f8"], ["b", "<f8"]],
                    "shape": [1],
                }
            }
        ),
    ),
    "huge string dtype": (
        "estimator",
        _estimator(
            {"priors": {"__ndarray__": ["a"], "dtype": "<U999999999", "shape": [1]}}
        ),
    ),
    "100,000-deep JSON": ("estimator", "[" * 100_000 + "]" * 100_000),
    "900-deep AllOf": ("budget", _all_of(900)),
    "settings missing a key": (
        "settings",
        {"em_start": "labelled", "initial_state": None, "max_open_requests": None},
    ),
    "settings not an object": ("settings", "[1, 2]"),
    "budget state not JSON": ("budget_state", "{not json"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_configuration_ends_in_a_named_error(store_url, case):
    column, config = CRAFTED[case]
    with AgentStore(store_url) as store:
        _agent(store).close()
        _set_config(store, column, config)
        with pytest.raises(
            (ConfigurationError, StoreError), match=r"agent 'bridge'.*skrbal_agents"
        ):
            RiskBasedAgent.from_store(store, "bridge")
        with pytest.raises(StoreError, match="agent 'bridge'"):
            store.verify("bridge")


def test_damage_found_by_readers_is_named(store_url, tmp_path):
    from sqlalchemy import text

    from skrbal.exceptions import IdempotencyKeyError

    store = AgentStore(store_url)
    with _agent(store) as agent:
        agent.observe([[0.5], [7.0]])
        with pytest.raises(IdempotencyKeyError, match="lone surrogate"):
            agent.observe([[1.0]], key="batch-\ud800")
        assert agent.n_steps_ == 6
    if store.path is not None:  # SQLite keeps any type in any column
        with _agent(store, "other") as other:
            other.observe([[0.5]])
        with store.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE skrbal_blocks SET evpi = 'not bytes' WHERE agent_id = "
                    "(SELECT agent_id FROM skrbal_agents WHERE name = 'other')"
                )
            )
        with pytest.raises(StoreError, match=r"'other'.*skrbal_blocks.*holds str"):
            store.verify("other")
        with pytest.raises(StoreError, match=r"'other'.*skrbal_blocks"):
            RiskBasedAgent.from_store(store, "other")
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE skrbal_actions"))
    for read in (
        lambda: store.verify("bridge"),
        lambda: store.history("bridge"),
        lambda: RiskBasedAgent.from_store(store, "bridge"),
    ):
        with pytest.raises(StoreError, match=r"agent 'bridge' in store .* cannot be"):
            read()
    with store.engine.begin() as conn:
        for table in ("skrbal_events", "skrbal_requests", "skrbal_blocks",
                      "skrbal_observations", "skrbal_agents"):  # fmt: skip
            conn.execute(text(f"DROP TABLE {table}"))
    for read in (store.status, store.history, store.configuration, store.events):
        with pytest.raises(StoreError, match=r"agent 'bridge' in store .* cannot be"):
            read("bridge")
    with pytest.raises(StoreError, match="cannot be read"):
        store.agent_names()
    store.close()


def test_a_corrupted_file_is_named_on_a_later_read(tmp_path):
    db = tmp_path / "agents.db"
    with _agent(str(db)) as agent:
        agent.observe(np.linspace(-5, 20, 400)[:, None])
    store = AgentStore(db)
    size = db.stat().st_size
    with open(db, "r+b") as file:  # a disk that lost pages, header kept
        file.seek(4096)
        file.write(b"\xa5" * (size - 4096))
    for read in (store.status, store.history, store.events, store.verify):
        with pytest.raises(StoreError, match=r"agent 'bridge' in store .*cannot be"):
            read("bridge")
    store.close()


# ---------------------------------------------------------------------- #
# 5. the work of loading a crafted configuration is bounded
# ---------------------------------------------------------------------- #
def _rechain(store, name="bridge"):
    """Recompute every hash of an agent's chain (no key), as a hostile
    writer who knows the scheme would."""
    import json

    from sqlalchemy import select, update

    from skrbal.online._sql import _schema as schema
    from skrbal.online._sql._chain import event_hash, genesis_hash

    ev = schema.events
    with store.engine.begin() as conn:
        agent = conn.execute(
            select(schema.agents).where(schema.agents.c.name == name)
        ).first()
        previous = genesis_hash(agent)
        mine = ev.c.agent_id == agent.agent_id
        for e in conn.execute(select(ev).where(mine).order_by(ev.c.seq)).all():
            payload = json.loads(e.payload)
            if e.seq == 1:  # the agent's record, as the row now says
                for column in payload.get("agent", {}):
                    payload["agent"][column] = getattr(agent, column)
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
            )
            conn.execute(
                update(ev)
                .where(mine & (ev.c.seq == e.seq))
                .values(hash=previous, payload=text)
            )


def test_the_product_of_bounded_parameters_is_bounded_too(store_url):
    import json
    import time

    from skrbal._fingerprint import encode_config
    from skrbal.rvm import MulticlassRVC

    crafted = MulticlassRVC(
        max_iter=1_000_000, tol=0.0, n_quadrature=1000, kernel="poly", degree=20
    )
    with AgentStore(store_url) as store:
        _agent(store).close()
        _set_config(store, "estimator", json.loads(json.dumps(encode_config(crafted))))
        _rechain(store)  # a hostile writer recomputes the chain too
        start = time.perf_counter()
        with pytest.raises(ConfigurationError, match=r"max_iter=1000000 x n_quadra"):
            RiskBasedAgent.from_store(store, "bridge")
        assert time.perf_counter() - start < 30
        # the defaults, and a heavy but plausible fit, are rebuilt
        for fine in (MulticlassRVC(), MulticlassRVC(max_iter=10_000, n_quadrature=100)):
            from skrbal.online._config import decode_config

            assert isinstance(decode_config(encode_config(fine)), MulticlassRVC)


def test_a_request_method_the_agent_does_not_have_is_named(store_url):
    """Also where the observe events logged no methods (older stores)."""
    import json

    from sqlalchemy import select, update

    from skrbal.online._sql import _schema as schema

    _rich_agent(store_url)
    ev, req = schema.events, schema.requests
    with AgentStore(store_url) as store:
        with store.engine.begin() as conn:
            for e in conn.execute(select(ev).where(ev.c.kind == "observe")).all():
                payload = json.loads(e.payload)
                payload.pop("methods", None)
                conn.execute(
                    update(ev)
                    .where((ev.c.agent_id == e.agent_id) & (ev.c.seq == e.seq))
                    .values(payload=json.dumps(payload))
                )
        _rechain(store)
        store.verify("bridge")  # as an older store: methods not logged
        with store.engine.begin() as conn:
            conn.execute(
                update(req).where(req.c.method == "drone").values(method="boat")
            )
        for call in (
            lambda: store.verify("bridge"),
            lambda: RiskBasedAgent.from_store(store, "bridge"),
        ):
            with pytest.raises(StoreError, match=r"'bridge'.*method 'boat' is not"):
                call()
