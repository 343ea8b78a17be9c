"""The fleet store and ledger against a hostile round (issues 27 and 29).

Crafted budget rows, rollback of the newest draws, recomputed hashes, work per
draw, and the one masking rule for passwords. The PostgreSQL cases run when
``SKRBAL_TEST_POSTGRES_URL`` is set.
"""

import json
import os

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import delete, insert, select, update

from skrbal import synthetic_decision_process
from skrbal.exceptions import StoreError
from skrbal.fleet import Fleet, FleetBudget, FleetLedger
from skrbal.fleet import _schema as fleet_schema

MEANS = np.array([-5.0, -0.7, 5.8, 9.0])
COMMISSION_Y = np.tile([1, 2, 3, 4], 3)
COMMISSION_X = np.random.default_rng(99).normal(MEANS[COMMISSION_Y - 1], 2.0)[:, None]


def _process():
    return synthetic_decision_process().set_params(inspection_cost=1.0)


def _fleet(url, names=("bridge-1", "bridge-2"), **budget):
    params = {"limit": 4.0, "period": 10.0, **budget}
    fleet = Fleet(url, budget=FleetBudget(**params))
    for name in names:
        fleet.commission(
            name, COMMISSION_X, COMMISSION_Y, estimator=GaussianNB(), process=_process()
        )
    return fleet


def _set_budget_row(store, **values):
    with store.engine.begin() as conn:
        conn.execute(update(fleet_schema.budgets).values(**values))


# ---------------------------------------------------------------------- #
# a crafted budget row, read by Fleet(...)
# ---------------------------------------------------------------------- #
CRAFTED_CONFIGS = {
    "negative limit": {"limit": -5.0},
    "NaN limit": {"limit": float("nan")},
    "infinite limit": {"limit": float("inf")},
    "NaN period": {"period": float("nan")},
    "huge period": {"period": 1e308 * 10},
    "zero window": {"n_recent": 0},
    "a text limit": {"limit": "4"},
    "a missing key": {"limit": None},
    "a list": [],
}


@pytest.mark.parametrize("case", sorted(CRAFTED_CONFIGS))
def test_a_crafted_budget_row_is_refused_by_name(store_url, case):
    """A budget row edited to an invalid budget is named, never used: a NaN
    limit made every draw refuse every inspection, silently."""
    with _fleet(store_url, names=()) as fleet:
        store = fleet.store_
        with store.engine.connect() as conn:
            config = json.loads(
                conn.execute(select(fleet_schema.budgets.c.config)).scalar_one()
            )
        edit = CRAFTED_CONFIGS[case]
        if isinstance(edit, dict):
            config.update(edit)
            config = {k: v for k, v in config.items() if v is not None}
        else:
            config = edit
        _set_budget_row(store, config=json.dumps(config))
        with pytest.raises(StoreError, match="skrbal_fleet_budgets") as info:
            Fleet(store)
        assert "'fleet'" in str(info.value)
        with pytest.raises(StoreError, match="skrbal_fleet_budgets"):
            FleetLedger(store).verify()


_STATE = {
    "first_time": None,
    "clock": None,
    "cost": None,
    "recent_times": [],
    "recent_values": [],
    "spent": {},
}
CRAFTED_STATES = {
    "not JSON": "{price",
    "a list": "[]",
    "no spent": json.dumps({k: v for k, v in _STATE.items() if k != "spent"}),
    "NaN clock": json.dumps({**_STATE, "clock": float("nan")}),
    "spent not a dict": json.dumps({**_STATE, "spent": 5}),
    "negative spent": json.dumps({**_STATE, "spent": {"0": -100.0}}),
    "a window of unequal lists": json.dumps({**_STATE, "recent_times": [1.0]}),
}


@pytest.mark.parametrize("case", sorted(CRAFTED_STATES))
def test_a_crafted_budget_state_is_named_at_the_next_draw(tmp_path, case):
    """A state that is not the ledger's ends the draw in a named StoreError
    (was a raw JSONDecodeError, KeyError or TypeError), and nothing commits."""
    with _fleet(str(tmp_path / "fleet.db")) as fleet:
        _set_budget_row(fleet.store_, state=CRAFTED_STATES[case])
        with pytest.raises(StoreError, match=r"skrbal_fleet_budgets.*state"):
            fleet.observe("bridge-1", [[9.0], [2.0]])
        assert fleet.store_.status("bridge-1")["n_observations"] == 0


# ---------------------------------------------------------------------- #
# rollback of the newest draws; hashes recomputed
# ---------------------------------------------------------------------- #
def _fleet_rows(store):
    with store.engine.connect() as conn:
        return {
            t.name: [dict(r) for r in conn.execute(select(t)).mappings()]
            for t in (fleet_schema.budgets, fleet_schema.events)
        }


def _put_back(store, rows):
    """An older copy of the fleet's tables put back (no hash recomputed)."""
    with store.engine.begin() as conn:
        conn.execute(delete(fleet_schema.events))
        conn.execute(delete(fleet_schema.budgets))
        conn.execute(insert(fleet_schema.budgets), rows["skrbal_fleet_budgets"])
        if rows["skrbal_fleet_events"]:
            conn.execute(insert(fleet_schema.events), rows["skrbal_fleet_events"])


def test_a_rollback_of_the_newest_draws_is_caught_by_the_head_kept(tmp_path):
    """The newest draw (it granted nothing) deleted and the budget row set back:
    the chain alone passes (a truncated chain is whole), the head kept outside
    (given, or in the store's anchor file) does not."""
    heads = tmp_path / "heads.jsonl"
    from skrbal.online import AgentStore

    store = AgentStore(str(tmp_path / "fleet.db"))
    with _fleet(store) as fleet:
        fleet.observe("bridge-1", [[-5.0]])
        before = _fleet_rows(store)
        fleet.observe("bridge-2", [[-5.0]])
        head = fleet.ledger_.verify()
        _put_back(store, before)
        # the chain alone (and the agents' own chains) cannot tell
        assert fleet.ledger_.verify()["n_draws"] == head["n_draws"] - 1
        with pytest.raises(StoreError, match=r"rolled back"):
            fleet.ledger_.verify(expected_head=head)
        with pytest.raises(StoreError, match=r"rolled back"):
            fleet.ledger_.verify(expected_head=f"{head['n_draws']}:{head['hash']}")
    store.close()

    # the same with the store's anchor file: each draw appends its head
    store = AgentStore(str(tmp_path / "anchored.db"), anchor_file=heads)
    with _fleet(store) as fleet:
        fleet.observe("bridge-1", [[-5.0]])
        before = _fleet_rows(store)
        fleet.observe("bridge-2", [[-5.0]])
        assert fleet.ledger_.verify()["n_draws"] == 2
        assert store.anchor.expected("fleet", kind="fleet")[0] == 2
        assert store.verify("bridge-1")  # the agents read their own lines
        _put_back(store, before)
        with pytest.raises(StoreError, match=r"anchor file.*draw 2.*rolled back"):
            fleet.ledger_.verify()
    with pytest.raises(StoreError, match=r"rolled back"):
        Fleet(store)  # opening the fleet checks the anchor too
    store.close()


def test_an_expected_head_that_is_not_one_is_named(tmp_path):
    with _fleet(str(tmp_path / "fleet.db")) as fleet:
        for head in ("2:abc", {"n_draws": 0, "hash": "0" * 64}, 5):
            with pytest.raises(ValueError, match="expected_head"):
                fleet.ledger_.verify(expected_head=head)


def test_a_chain_key_signs_the_fleet_ledger_too(tmp_path, monkeypatch):
    from skrbal.fleet._ledger import _genesis, _hash
    from skrbal.online import AgentStore

    monkeypatch.setenv("SKRBAL_CHAIN_KEY", "k" * 32)
    store = AgentStore(str(tmp_path / "fleet.db"))
    with _fleet(store) as fleet:
        fleet.observe("bridge-1", [[9.0], [2.0]])
    # the limit raised, every hash of the fleet chain recomputed
    rows = _fleet_rows(store)
    config = json.loads(rows["skrbal_fleet_budgets"][0]["config"])
    config["limit"] = 1000.0
    text = json.dumps(config, sort_keys=True)
    rows["skrbal_fleet_budgets"][0]["config"] = text
    previous = _genesis("fleet", text)
    for e in sorted(rows["skrbal_fleet_events"], key=lambda e: e["seq"]):
        e["hash"] = previous = _hash(
            previous,
            e["seq"],
            e["kind"],
            e["agent"],
            e["first_step"],
            e["payload"],
            e["created_at"],
        )
    _put_back(store, rows)
    with pytest.raises(StoreError, match="hash"):
        FleetLedger(store).verify()
    store.close()


# ---------------------------------------------------------------------- #
# work per draw
# ---------------------------------------------------------------------- #
def test_a_draws_record_does_not_grow_with_the_periods_behind_it(tmp_path):
    """Count the bytes each draw writes after 5 and after 60 periods with
    spending: a draw's work must not grow with the history."""
    with _fleet(str(tmp_path / "fleet.db"), names=("bridge-1",), limit=2.0) as fleet:
        sizes, rng = [], np.random.default_rng(0)
        for _ in range(60):
            # one period of steps valued for an inspection
            fleet.observe("bridge-1", 7.0 + rng.normal(0, 0.3, (10, 1)))
            with fleet.store_.engine.connect() as conn:
                payload = conn.execute(
                    select(fleet_schema.events.c.payload)
                    .order_by(fleet_schema.events.c.seq.desc())
                    .limit(1)
                ).scalar_one()
            sizes.append(len(payload))
        assert len(fleet.ledger_.status()["spent"]) > 30  # many periods spent in
    assert sizes[-1] <= 2 * sizes[4], sizes


# ---------------------------------------------------------------------- #
# passwords: one masking rule, the fleet too
# ---------------------------------------------------------------------- #
SECRET = "s3cr3t-Fl33t"


def _with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{SECRET}@{host}"


def _said(call) -> str:
    import traceback

    try:
        value = call()
    except Exception as exc:
        return "".join(traceback.format_exception(exc)) + repr(exc)
    return repr(value)


def test_fleet_urls_refused_before_connecting_never_echo_the_password(capsys):
    from skrbal.cli import main
    from skrbal.fleet import replay_fleet

    urls = [
        f"postgres://bridge:{SECRET}@db.example:5432/fleet",
        f"postgresql://bridge:{SECRET}@127.0.0.1:1/fleet",  # nobody listens
        f"mysql+pymysql://bridge:{SECRET}@db.example/fleet",
    ]
    said = []
    for url in urls:
        said.append(_said(lambda u=url: Fleet(u)))
        said.append(
            _said(
                lambda u=url: replay_fleet(
                    u, [], estimator=GaussianNB(), process=_process()
                )
            )
        )
        for argv in (
            ["fleet", "status", "--store", url],
            ["fleet", "report", "--store", url, "--out", os.devnull],
            ["fleet", "observe", "--store", url, "--data", os.devnull],
            ["fleet", "inspect", "--store", url, "a", "1", "1"],
        ):
            assert main(argv) != 0
            said.append("".join(capsys.readouterr()))
    for text in said:
        assert SECRET not in text, text


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_every_fleet_error_and_page_masks_the_password(store_url, tmp_path, capsys):
    from skrbal.cli import main
    from skrbal.online import AgentStore

    url = _with_password(store_url)
    said = [
        _said(lambda: Fleet(url)),  # no budget yet
        _said(lambda: FleetLedger(AgentStore(url), create=False).status()),
    ]
    for argv in (
        ["fleet", "status", "--store", url],
        ["fleet", "report", "--store", url, "--out", tmp_path / "r.html"],
        ["fleet", "inspect", "--store", url, "bridge-1", "1", "1"],
    ):
        assert main([str(a) for a in argv]) != 0
        said.append("".join(capsys.readouterr()))
    fleet = _fleet(url)
    fleet.observe("bridge-1", [[9.0], [2.0]])
    said += [
        repr(fleet),
        repr(fleet.ledger_),
        repr(fleet.store_),
        _said(lambda: Fleet(url, budget=FleetBudget(limit=9.0, period=1.0))),
        _said(lambda: fleet.observe("nobody", [[1.0]])),
        _said(lambda: Fleet(url).agent("bridge-1")),  # held by the other
    ]
    _set_budget_row(fleet.store_, last_seq=99)
    said.append(_said(lambda: FleetLedger(fleet.store_).verify()))
    said.append(_said(lambda: fleet.observe("bridge-1", [[1.0]])))
    fleet.close()
    with AgentStore(url) as store:
        _set_budget_row(store, last_seq=1)
    for argv in (
        ["fleet", "status", "--store", url],
        ["fleet", "status", "--store", url, "--json"],
        ["fleet", "report", "--store", url, "--out", tmp_path / "r.html"],
    ):
        assert main([str(a) for a in argv]) == 0, capsys.readouterr()
        said.append("".join(capsys.readouterr()))
    said.append((tmp_path / "r.html").read_text())
    for text in said:
        assert SECRET not in text, text


@pytest.mark.parametrize("name", ["x" * 201, "", 7, None])
def test_a_budget_name_the_table_cannot_hold_is_refused_by_name(store_url, name):
    """A name longer than the column (200) ended in PostgreSQL's raw
    StringDataRightTruncation; SQLite kept it."""
    with pytest.raises(ValueError, match="name"):
        Fleet(store_url, budget=FleetBudget(limit=4.0, period=10.0), name=name)


def _statements_of_one_draw(fleet, name, X):
    """The SQL statements one fleet observe sends."""
    from sqlalchemy import event

    count = [0]

    def before(*args):
        count[0] += 1

    engine = fleet.store_.engine
    event.listen(engine, "before_cursor_execute", before)
    try:
        fleet.observe(name, X)
    finally:
        event.remove(engine, "before_cursor_execute", before)
    return count[0]


def test_a_draws_statements_do_not_grow_with_draws_or_agents(tmp_path):
    """Count the statements of one observe (its agent open already) with 12
    agents and 2 draws behind it, then 40 draws later: equal. (Rows of no
    value: no request either time; one period: the state does not grow.)"""
    names = [f"bridge-{i}" for i in range(12)]
    healthy = np.array([[-5.0], [-5.3]])
    with _fleet(str(tmp_path / "f.db"), names=names, period=1e9) as fleet:
        for name in names[:2]:
            fleet.observe(name, healthy)
        early = _statements_of_one_draw(fleet, "bridge-0", healthy)
        rng = np.random.default_rng(1)
        for i in range(40):
            fleet.observe(names[i % 12], rng.normal(0, 3, (2, 1)))
        late = _statements_of_one_draw(fleet, "bridge-0", healthy)
        assert fleet.ledger_.status()["n_draws"] > 40
    assert late == early, (early, late)


def test_a_second_name_of_the_file_is_refused_to_the_fleet(tmp_path):
    """A fleet through a hard link of its store would be a second writer with
    its own write-ahead log: refused by name, and the first goes on."""
    db = tmp_path / "fleet.db"
    with _fleet(str(db)) as fleet:
        fleet.observe("bridge-1", [[-5.0]])
        os.link(db, tmp_path / "fleet2.db")
        with pytest.raises(StoreError, match="hard link"):
            Fleet(str(tmp_path / "fleet2.db"))
        os.unlink(tmp_path / "fleet2.db")
        fleet.observe("bridge-1", [[-5.2]])
        assert fleet.ledger_.verify()["n_draws"] == 2
