"""The fleet budget: one purse for the agents of a store, drawn under a lock."""

import json
import multiprocessing

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB
from sqlalchemy import update

from skrbal import synthetic_decision_process
from skrbal.exceptions import StoreError
from skrbal.fleet import Fleet, FleetBudget, FleetDrawError, FleetLedger
from skrbal.fleet import _schema as fleet_schema
from skrbal.online import AgentStore

MEANS = np.array([-5.0, -0.7, 5.8, 9.0])
COMMISSION_Y = np.tile([1, 2, 3, 4], 3)
COMMISSION_X = np.random.default_rng(99).normal(MEANS[COMMISSION_Y - 1], 2.0)[:, None]


def _stream(n, seed):
    """One feature, the four states overlapping: the agents want inspections."""
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 5, size=n)
    return rng.normal(MEANS[y - 1], 2.0)[:, None]


def _process():
    return synthetic_decision_process().set_params(inspection_cost=1.0)


def _commission(fleet, names):
    for name in names:
        fleet.commission(
            name, COMMISSION_X, COMMISSION_Y, estimator=GaussianNB(), process=_process()
        )


def _spent_by_period(store, names, budget):
    """Money per period from the agents' own requests (cost 1 each)."""
    spent = {}
    for name in names:
        steps = store.requests(name)["step"].to_numpy()
        for q in np.floor((steps - budget.origin) / budget.period).astype(int):
            spent[q] = spent.get(q, 0.0) + 1.0
    return spent


# ---------------------------------------------------------------------- #
def test_the_policy_decides_only_within_a_draw():
    budget = FleetBudget(limit=3.0, period=10.0)
    with pytest.raises(FleetDrawError, match="within a draw"):
        budget.scan([5.0], [0.0], [True], 1.0, budget.initial_state())


def _snapshot(budget, seq, **changes):
    return {"seq": seq, **budget.fleet_state(budget.initial_state()), **changes}


def test_a_limit_below_one_inspection_is_starved():
    from skrbal.exceptions import BudgetStarvedError

    budget = FleetBudget(limit=0.5, period=10.0)
    budget.draw_snapshot(_snapshot(budget, 1))
    with pytest.raises(BudgetStarvedError, match="never inspect"):
        budget.scan([5.0], [0.0], [True], 1.0, budget.initial_state())


def _grants(budget, evpi, times, state, cost=1.0):
    """Every step one scan after another grants, and the state after."""
    granted, start = [], 0
    while start < len(evpi):
        hit, state = budget.scan(
            evpi[start:], times[start:], np.ones(len(evpi) - start, bool), cost, state
        )
        if hit < 0:
            break
        granted.append(start + hit)
        start += hit + 1
    return granted, state


def test_the_policy_caps_each_period():
    budget = FleetBudget(limit=2.0, period=10.0)
    budget.draw_snapshot(_snapshot(budget, 5))
    # Rising values: each a record, so each is granted while money lasts;
    # every period spends at most the elapsed share of its money, one
    # inspection ahead (1 at its start, 2 from its middle).
    evpi = np.arange(20.0) + 2.0
    granted, state = _grants(budget, evpi, np.arange(20.0), budget.initial_state())
    assert granted == [0, 5, 10, 15]
    assert state["spent"] == {"0": 2.0, "1": 2.0}
    # Another agent's draw, period 0 already spent: nothing left in it.
    budget.draw_snapshot(_snapshot(budget, 6, clock=0.0, spent={"0": 2.0}))
    hit, _ = budget.scan([9.0], [3.0], [True], 1.0, state)
    assert hit == -1
    # A step not worth its cost on its own is never granted.
    budget.draw_snapshot(_snapshot(budget, 7))
    hit, _ = budget.scan([0.5, 1.0], [0.0, 0.0], [True, True], 1.0, state)
    assert hit == -1


def test_the_money_of_every_period_is_paced():
    """With no history every new highest value was granted: a week's money
    (10 inspections) went in the first 10 hours of rising values. A period
    spends at most its elapsed share, one ahead: the first (cold start) and
    every later one, so a record that ends inside a period has spent that
    period's share, as a deployment would have by then."""
    budget = FleetBudget(limit=10.0, period=168.0)
    budget.draw_snapshot(_snapshot(budget, 1))
    evpi = 2.0 + 0.1 * np.arange(48.0)
    granted, state = _grants(budget, evpi, np.arange(48.0), budget.initial_state())
    assert granted == [0, 17, 34]  # 10 * t / 168 + 1 inspections by hour t
    # A full period seen: records are granted at the pace of the money.
    budget.draw_snapshot({"seq": 2, **budget.fleet_state(state)})
    times = 168.0 + np.arange(48.0)
    granted, _ = _grants(budget, 20.0 + np.arange(48.0), times, state)
    assert granted == [0, 17, 34]


def test_a_high_value_is_not_crowded_out_by_earlier_low_ones():
    """Money for 2 per period: low values early leave it for a high one later."""
    rng = np.random.default_rng(3)
    budget = FleetBudget(limit=2.0, period=100.0)
    # Last period, the fleet saw 100 competitors of net value 0.5 to 1.5.
    last = rng.uniform(1.5, 2.5, 100)
    budget.draw_snapshot(_snapshot(budget, 1))
    _, state = _grants(budget, last, np.arange(100.0), budget.initial_state())
    fleet = budget.fleet_state(state)
    # Structure A draws first in the new period, its values as usual ...
    budget.draw_snapshot({"seq": 2, **fleet})
    low = rng.uniform(1.5, 2.5, 20)
    granted_a, state = _grants(budget, low, 100.0 + np.arange(20.0), state)
    # ... then structure B, whose damage makes one step worth far more.
    budget.draw_snapshot({"seq": 3, **budget.fleet_state(state)})
    hit, state = budget.scan([11.0], [121.0], [True], 1.0, state)
    assert len(granted_a) <= 1
    assert hit == 0
    assert state["spent"]["1"] <= 2.0
    # The price now: what a step must be worth to be granted.
    price = budget.clearing_price(state)
    assert price > np.median(low - 1.0)


def _period_of_a_damaged_structure(budget):
    """Period 1's money spent before structure a's damage: its 100 steps,
    each worth inspecting, are seen and none is granted."""
    budget.draw_snapshot(
        _snapshot(budget, 1, clock=99.0, first_time=0.0, spent={"1": budget.limit}),
        agent="a",
    )
    values = 5.0 + 0.01 * np.arange(100.0)
    granted, state = _grants(
        budget, values, 100.0 + np.arange(100.0), budget.initial_state()
    )
    assert granted == []
    return state


def test_a_structure_that_stays_worth_inspecting_is_one_competitor():
    """Crowd-out: a damaged structure's hundred high steps of the last period
    held the fleet's money back from every other structure (each counted as
    a competitor, so b's step ranked 101st for money for 2). They are one
    competitor: one inspection of a, whose answer its model learns, serves
    them."""
    budget = FleetBudget(limit=2.0, period=100.0)
    state = _period_of_a_damaged_structure(budget)
    # One unit: a's newest value stays (it covers the older, lower ones).
    assert state["recent_values"] == [pytest.approx(4.99)]
    fleet = budget.fleet_state(state)
    budget.draw_snapshot({"seq": 2, **fleet}, agent="b")
    hit, state = budget.scan([4.0], [210.0], [True], 1.0, state)
    assert hit == 0 and state["spent"]["2"] == 1.0
    # The previous rule counted each of a's values: so does a window of an
    # earlier version (values without structures), and b's step waited.
    times = 100.0 + np.arange(100.0)
    old = {k: v for k, v in fleet.items() if k != "recent_agents"}
    old.update(recent_times=times.tolist(), recent_values=[4.99] * 100)
    budget.draw_snapshot({"seq": 2, **old}, agent="b")
    hit, _ = budget.scan([4.0], [210.0], [True], 1.0, budget.initial_state())
    assert hit == -1
    # a's own hundred values do not hold back a's next step either.
    budget.draw_snapshot({"seq": 2, **fleet}, agent="a")
    hit, _ = budget.scan([4.0], [210.0], [True], 1.0, budget.initial_state())
    assert hit == 0


def test_a_damaged_structure_does_not_starve_another(tmp_path):
    """A small fleet, money for 2 inspections per 50 steps. Period 1's money
    goes to c; a then stays worth inspecting (x = 7, between states 3 and 4)
    for its 38 last steps of the period, none granted. In period 2, b's one
    step worth inspecting (less than a's) waited behind a's steps, each a
    competitor, and was refused; a is one competitor, so b is inspected."""
    calm = np.full((50, 1), -5.0)  # nothing worth inspecting
    with Fleet(
        str(tmp_path / "f.db"), budget=FleetBudget(limit=2.0, period=50.0)
    ) as fleet:
        _commission(fleet, ["a", "b", "c"])
        high = np.r_[calm, np.full((30, 1), -5.0)]
        high[[50, 68]] = 7.0  # steps 62 and 80
        c = fleet.observe("c", high)
        assert c["step"][c["inspect"]].tolist() == [62, 80]
        a = fleet.observe("a", np.r_[calm, np.full((38, 1), 7.0)])
        assert not a["inspect"].any() and (a["evpi"].iloc[-38:] > 7.0).all()
        b = fleet.observe("b", np.r_[calm, np.full((58, 1), -5.0), [[6.6]]])
        assert b["evpi"].iloc[-1] < a["evpi"].iloc[-1]
        assert b["step"][b["inspect"]].tolist() == [120]
        assert fleet.ledger_.verify()["n_draws"] == 3
        assert fleet.ledger_.status()["spent"] == {"1": 2.0, "2": 1.0}


def _quiet_period(budget):
    """Period 0 (168 hours, money for 10): structure c's healthy noise, net
    values 1 to 2 each hour, granted at the pace; then the fleet's state."""
    budget.draw_snapshot(_snapshot(budget, 1), agent="c")
    noise = 2.0 + np.random.default_rng(5).uniform(0.0, 1.0, 168)
    _, state = _grants(budget, noise, np.arange(168.0), budget.initial_state())
    return budget.fleet_state(state), float(noise.max() - 1.0)


def _draw(budget, fleet, seq, agent, value, time):
    budget.draw_snapshot({"seq": seq, **fleet}, agent=agent)
    hit, state = budget.scan([value + 1.0], [time], [True], 1.0, budget.initial_state())
    return hit == 0, budget.fleet_state(state)


def test_simultaneous_damage_on_two_structures_is_inspected_on_both():
    """Damage shows at once on a and b at the start of a period. The pace
    frees one inspection per 16.8 hours: a took it, and b's step, worth
    inspecting for that hour only, was refused (on the previous rule), with
    9 of the period's 10 inspections unspent. Worth more than anything the
    other structures offered over the last period, b borrows against the
    rest of the period; c's noise, a's next step and a burst past the
    period's money do not."""
    budget = FleetBudget(limit=10.0, period=168.0)
    fleet, noisiest = _quiet_period(budget)
    granted, fleet = _draw(budget, fleet, 2, "a", 10.0, 169.0)
    assert granted and fleet["spent"]["1"] == 1.0  # the pace's inspection
    granted, fleet = _draw(budget, fleet, 3, "b", 9.0, 169.0)
    assert granted and fleet["spent"]["1"] == 2.0
    # Noise no higher than the last period's does not borrow ...
    assert not _draw(budget, fleet, 4, "c", noisiest, 170.0)[0]
    # ... nor does a structure already served in the period (its next step
    # waits for the pace) ...
    assert not _draw(budget, fleet, 4, "a", 12.0, 170.0)[0]
    # ... and of nine more structures' damage at once, a step borrows while
    # the period's money left buys the units above it expected over the
    # rest of the period (a, b and the bursts granted before it).
    for k in range(9):
        granted, fleet = _draw(budget, fleet, 5 + k, f"d{k}", 8.0 - 0.1 * k, 170.0)
        assert granted == (k < 4)
    assert fleet["spent"]["1"] == 6.0
    # Its money spent, a period grants nothing, however high the value.
    fleet["spent"]["1"] = 10.0
    assert not _draw(budget, fleet, 20, "e", 50.0, 300.0)[0]


def test_borrowing_never_overspends_a_period():
    """Random fleets of 8 structures, money for 4 per period, damage bursts
    on several at once: spend per period never passes the money, while
    bursts do spend past the pace."""
    rng = np.random.default_rng(11)
    budget = FleetBudget(limit=4.0, period=40.0)
    names = [f"s{i}" for i in range(8)]
    fleet = budget.fleet_state(budget.initial_state())
    grants, seq = {}, 0
    for block in range(30):
        times = 10.0 * block + np.arange(10.0)
        burst = rng.random(8) < 0.3
        for i in rng.permutation(8):
            evpi = 1.0 + rng.uniform(0.0, 1.5, 10) + 20.0 * burst[i] * (times % 20 < 3)
            seq += 1
            budget.draw_snapshot({"seq": seq, **fleet}, agent=names[i])
            granted, state = _grants(budget, evpi, times, budget.initial_state())
            fleet = budget.fleet_state(state)
            for t in times[granted]:
                grants.setdefault(int(t // 40), []).append(t % 40)
    assert max(len(g) for g in grants.values()) == 4
    assert all(fleet["spent"][k] <= 4.0 for k in fleet["spent"])
    # Borrowed: some period spent more by some hour than the pace allows.
    ahead = [
        np.sum(np.array(g) <= t) > 4.0 * t / 40 + 1 for g in grants.values() for t in g
    ]
    assert any(ahead)


def test_a_block_and_its_pieces_borrow_alike():
    """Deciding a structure's block at once, or its pieces in turn, gives the
    same grants and the same fleet state (the pace and borrowing both)."""
    budget = FleetBudget(limit=10.0, period=168.0)
    fleet, _ = _quiet_period(budget)
    _, fleet = _draw(budget, fleet, 2, "a", 10.0, 169.0)
    evpi = np.r_[11.0, 3.0, 2.0, 14.0, np.full(40, 2.5), 30.0]
    times = 169.0 + np.arange(evpi.size)
    budget.draw_snapshot({"seq": 3, **fleet}, agent="b")
    whole, state = _grants(budget, evpi, times, budget.initial_state())
    whole_fleet = budget.fleet_state(state)
    pieces, piece_fleet = [], fleet
    for seq, cut in enumerate((slice(0, 2), slice(2, 9), slice(9, None))):
        budget.draw_snapshot({"seq": 4 + seq, **piece_fleet}, agent="b")
        got, state = _grants(budget, evpi[cut], times[cut], budget.initial_state())
        piece_fleet = budget.fleet_state(state)
        pieces += [cut.start + g for g in got]
    assert whole == pieces and whole[0] == 0  # step 0 borrowed
    assert len(whole) >= 2
    assert piece_fleet == whole_fleet


def test_a_granted_value_keeps_its_structure_and_old_windows_still_count():
    """A granted value is a unit of its own that names its structure
    (served_key), so the window knows who was served; a window of the
    previous version (granted values of key UNIT) counts the same units,
    and its structures have no grant on record (each may borrow once)."""
    from skrbal.fleet._window import UNIT, DemandWindow, served_key

    new = DemandWindow([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], [served_key(1.0)] * 2 + [1.0])
    old = DemandWindow([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], [UNIT, UNIT, 1.0])
    for window in (new, old):
        assert window.units(-1.0).tolist() == [5.0, 6.0, 7.0]
        assert window.above([4.0], [-1.0], own=2.0).tolist() == [3]
        assert window.best_before([1.5], [-1.0], own=1.0).tolist() == [6.0]
    assert new.served_since([0.5, 1.5], own=1.0).tolist() == [True, False]
    assert not old.served_since([-1.0], own=1.0).any()
    # Served by a grant: the structure's pending values leave, the grant stays.
    served = new.add([3.0], [8.0], 1.0, served=True)
    assert served.agents.tolist() == [served_key(1.0)] * 3
    assert served.values.tolist() == [5.0, 6.0, 8.0]


def _observe_damage_at_once(url, names, reopen):
    """Period 1 quiet; at step 101, a and b each show damage for one step."""
    rng = np.random.default_rng(4)
    budget = FleetBudget(limit=2.0, period=50.0)
    calls = [(name, rng.normal(-5.0, 0.1, (50, 1))) for name in names]  # 12-61
    calls += [(name, rng.normal(-5.0, 0.1, (39, 1))) for name in names]  # to 100
    burst = np.r_[[[7.0]], rng.normal(-5.0, 0.1, (5, 1))]  # step 101, then calm
    calls += [("a", burst[:3]), ("b", burst), ("a", burst[3:])]
    fleet = Fleet(url, budget=budget)
    _commission(fleet, names)
    for name, x in calls:
        if reopen:
            fleet.close()
            fleet = Fleet(url)
        fleet.observe(name, x)
    grants = {name: fleet.store_.requests(name)["step"].tolist() for name in names}
    status = fleet.ledger_.status()
    fleet.ledger_.verify()
    spent = _spent_by_period(fleet.store_, names, budget)
    fleet.close()
    return grants, status["spent"], spent


def test_simultaneous_damage_in_a_fleet_and_a_resumed_fleet(store_url, tmp_path):
    """Two structures damaged at the same step, each worth inspecting there
    only: both are inspected (the pace alone took a's and refused b's), and
    a fleet closed and reopened before every call, a's block in pieces,
    decides the same as one left open."""
    names = ["a", "b", "c"]
    grants, status, spent = _observe_damage_at_once(store_url, names, reopen=False)
    assert grants == {"a": [101], "b": [101], "c": []}
    assert status == {"2": 2.0} and spent == {2: 2.0}
    again = _observe_damage_at_once(str(tmp_path / "r.db"), names, reopen=True)
    assert again == (grants, status, spent)


def test_a_fleet_never_overspends_and_its_chain_verifies(store_url):
    budget = FleetBudget(limit=3.0, period=24.0)
    names = [f"bridge-{i}" for i in range(3)]
    with Fleet(store_url, budget=budget) as fleet:
        _commission(fleet, names)
        for block in range(6):
            for k, name in enumerate(names):
                fleet.observe(name, _stream(8, 10 * block + k))
        status = fleet.ledger_.status()
        head = fleet.ledger_.verify()
        spent = _spent_by_period(fleet.store_, names, budget)
    assert head["n_draws"] == 18
    assert max(spent.values()) == pytest.approx(3.0)  # the cap binds
    assert all(v <= 3.0 for v in spent.values())
    assert {int(k): v for k, v in status["spent"].items()} == spent


def test_a_draw_commits_with_the_agents_block_or_not_at_all(store_url, monkeypatch):
    from skrbal.fleet._ledger import Draw

    with Fleet(store_url, budget=FleetBudget(limit=3.0, period=24.0)) as fleet:
        _commission(fleet, ["a"])
        fleet.observe("a", _stream(8, 0))
        before = fleet.store_.status("a")["n_observations"]

        def broken(*args, **kwargs):
            raise OSError("disk full")

        monkeypatch.setattr(Draw, "record", broken)
        with pytest.raises(OSError, match="disk full"):
            fleet.observe("a", _stream(8, 1))
        monkeypatch.undo()
        assert fleet.store_.status("a")["n_observations"] == before
        assert fleet.ledger_.verify()["n_draws"] == 1
        # The agent reopens from the store and goes on.
        fleet.observe("a", _stream(8, 1))
        assert fleet.store_.status("a")["n_observations"] == before + 8
        assert fleet.store_.verify("a")


def test_verify_names_a_tampered_draw(tmp_path):
    path = str(tmp_path / "fleet.db")
    with Fleet(path, budget=FleetBudget(limit=3.0, period=24.0)) as fleet:
        _commission(fleet, ["a"])
        for seed in range(3):
            fleet.observe("a", _stream(8, seed))
        ev = fleet_schema.events
        with fleet.store_.engine.begin() as conn:
            conn.execute(
                update(ev)
                .where(ev.c.seq == 2)
                .values(
                    payload=json.dumps(
                        {
                            "steps": [],
                            "taken": {},
                            "state": {"price": 0.0, "last_time": 0.0, "spent": {}},
                        }
                    )
                )
            )
        with pytest.raises(StoreError, match="event 2: its hash"):
            fleet.ledger_.verify()


def test_verify_checks_the_grants_against_the_agents_requests(tmp_path):
    from skrbal.fleet._ledger import _genesis, _hash

    path = str(tmp_path / "fleet.db")
    with Fleet(path, budget=FleetBudget(limit=3.0, period=24.0)) as fleet:
        _commission(fleet, ["a"])
        for seed in range(3):
            fleet.observe("a", _stream(8, seed))
        ev = fleet_schema.events
        with fleet.store_.engine.begin() as conn:
            rows = conn.execute(ev.select().order_by(ev.c.seq)).all()
            assert any(json.loads(r.payload)["steps"] for r in rows)
            # Every step moved one on, every hash recomputed: the chain holds.
            config = conn.execute(fleet_schema.budgets.select()).first().config
            previous = _genesis("fleet", config)
            for r in rows:
                payload = json.loads(r.payload)
                payload["steps"] = [s + 1 for s in payload["steps"]]
                text = json.dumps(payload, sort_keys=True)
                digest = _hash(
                    previous, r.seq, r.kind, r.agent, r.first_step, text, r.created_at
                )
                conn.execute(
                    update(ev)
                    .where(ev.c.seq == r.seq)
                    .values(payload=text, hash=digest)
                )
                previous = digest
        with pytest.raises(StoreError, match="draws of agent 'a' granted"):
            fleet.ledger_.verify()


def test_a_second_budget_of_other_parameters_is_refused(tmp_path):
    from skrbal.exceptions import ConfigurationError

    path = str(tmp_path / "fleet.db")
    Fleet(path, budget=FleetBudget(limit=3.0, period=24.0)).close()
    with pytest.raises(ConfigurationError, match="fleet budget 'fleet'"):
        Fleet(path, budget=FleetBudget(limit=4.0, period=24.0))
    with Fleet(path) as fleet:  # the stored one
        assert fleet.budget_.limit == 3.0


def test_an_in_memory_store_is_refused():
    with AgentStore(":memory:") as store, pytest.raises(ValueError, match="in-memory"):
        FleetLedger(store)


# ---------------------------------------------------------------------- #
# Several processes drawing at once: never more than the budget.
# ---------------------------------------------------------------------- #
def _draw_from_process(url, names, seed, n_calls):
    with Fleet(url) as fleet:
        for call in range(n_calls):
            for name in names:
                fleet.observe(name, _stream(6, 1000 * seed + call))


def test_concurrent_processes_never_overspend(store_url):
    # 2 a period: the paced auction reached it in each of the 12 orders of
    # the processes' calls tried (at 4, calls in lock step spent 2 or 3).
    budget = FleetBudget(limit=2.0, period=24.0)
    groups = [[f"p{p}-{i}" for i in range(2)] for p in range(3)]
    names = [n for group in groups for n in group]
    with Fleet(store_url, budget=budget) as fleet:
        _commission(fleet, names)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_draw_from_process, args=(store_url, group, p, 5))
        for p, group in enumerate(groups)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    with AgentStore(store_url) as store:
        ledger = FleetLedger(store)
        head = ledger.verify()
        spent = _spent_by_period(store, names, budget)
        status = ledger.status()
        for name in names:
            store.verify(name)
    assert head["n_draws"] == 6 * 5
    # Demand exceeds the money: the cap is reached, never passed.
    assert max(spent.values()) == pytest.approx(2.0)
    assert all(v <= 2.0 for v in spent.values())
    assert {int(k): v for k, v in status["spent"].items()} == spent


def test_a_retried_call_draws_nothing_more(tmp_path):
    path = str(tmp_path / "fleet.db")
    with Fleet(path, budget=FleetBudget(limit=3.0, period=24.0)) as fleet:
        _commission(fleet, ["a", "b"])
        X = _stream(8, 0)
        first = fleet.observe("a", X, key="batch-1")
        fleet.observe("b", _stream(8, 1))
        spent = fleet.ledger_.status()["spent"]
        again = fleet.observe("a", X, key="batch-1")  # a retry: the stored answer
        assert again.equals(first) and first["inspect"].any()
        assert fleet.ledger_.status()["spent"] == spent
        assert fleet.ledger_.verify()["n_draws"] == 3


def test_a_budget_of_an_older_version_is_named(tmp_path):
    from skrbal.exceptions import ConfigurationError

    path = str(tmp_path / "fleet.db")
    Fleet(path, budget=FleetBudget(limit=3.0, period=24.0)).close()
    with AgentStore(path) as store:
        with store.engine.begin() as conn:
            conn.execute(
                update(fleet_schema.budgets).values(
                    config=json.dumps(
                        {"limit": 3.0, "period": 24.0, "origin": 0.0, "pacing_rate": 2}
                    )
                )
            )
        with pytest.raises(ConfigurationError, match="older version"):
            FleetLedger(store).budget()


def test_the_status_shows_the_price_and_none_once_spent(tmp_path):
    path = str(tmp_path / "fleet.db")
    with Fleet(path, budget=FleetBudget(limit=1.0, period=1000.0)) as fleet:
        _commission(fleet, ["a"])
        assert fleet.ledger_.status()["price"] == 0.0  # no draw yet
        for seed in range(4):
            fleet.observe("a", _stream(8, seed))
        status = fleet.ledger_.status()
    assert status["spent"] == {"0": 1.0}
    assert status["price"] is None
    assert status["n_competitors"] > 0
