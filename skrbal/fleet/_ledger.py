"""The fleet budget's ledger: its row, its draws and their hash chain."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time

import numpy as np
from sqlalchemy import insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from skrbal.exceptions import ConfigurationError, FleetDrawError, StoreError
from skrbal.fleet import _schema as schema
from skrbal.fleet._policy import FleetBudget

__all__ = ["FleetLedger"]

# The agent store's advisory-lock space (key 0: no agent's), which orders
# the processes creating tables; such locks span every schema of a database,
# which only makes creators in other schemas wait their turn.
_PG_CREATE_LOCK = (0x736B7262 - 2**31, 0)


def _hash(
    previous: str, seq: int, kind: str, agent, first_step, payload: str, at: float
) -> str:
    text_ = json.dumps(
        [previous, seq, kind, agent, first_step, payload, repr(at)],
        separators=(",", ":"),
    )
    return hashlib.sha256(text_.encode()).hexdigest()


def _finite_numbers(value) -> bool:
    """Every number in ``value`` (nested lists and dicts) finite, none a bool."""
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_numbers(v) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    return value is None or isinstance(value, str)


def _damaged_row(row, where: str, what: str, text_) -> StoreError:
    shown = text_ if len(str(text_)) <= 120 else f"{str(text_)[:120]}..."
    return StoreError(
        f"{where}: fleet budget {row.name!r}, table {schema.budgets.name}: its "
        f"{what} {shown!r} is not the fleet's (the row was edited or damaged); "
        "restore it from a backup."
    )


def _budget_of(row, where: str) -> FleetBudget:
    try:
        config = json.loads(row.config)
    except (TypeError, ValueError):
        config = None
    if not isinstance(config, dict) or not _finite_numbers(config):
        raise _damaged_row(row, where, "config", row.config)
    try:
        budget = FleetBudget(**config)
    except TypeError:
        if "pacing_rate" not in config:
            raise _damaged_row(row, where, "config", row.config) from None
        raise ConfigurationError(
            f"{where}: fleet budget {row.name!r} is {row.config}, which this "
            "version of skrbal does not read (a budget of an older version, "
            "priced by a pacing rate); create the fleet anew."
        ) from None
    try:
        budget.initial_state()  # checks the parameters
    except ValueError:
        raise _damaged_row(row, where, "config", row.config) from None
    return budget


_STATE_KEYS = ("first_time", "clock", "cost", "recent_times", "recent_values", "spent")


def _state_of(row, where: str) -> dict:
    """The budget row's state, checked: a row edited to something else (no
    JSON, NaN, a negative spend) is named, never drawn on."""
    try:
        state = json.loads(row.state)
    except (TypeError, ValueError):
        state = None
    good = (
        isinstance(state, dict)
        and all(k in state for k in _STATE_KEYS)
        and _finite_numbers(state)
        and isinstance(state["spent"], dict)
        and all(isinstance(v, (int, float)) and v >= 0 for v in state["spent"].values())
        and isinstance(state["recent_times"], list)
        and isinstance(state["recent_values"], list)
        and len(state["recent_times"]) == len(state["recent_values"])
    )
    if not good:
        raise _damaged_row(row, where, "state", row.state)
    return state


def _recorded(state: dict) -> dict:
    """A fleet state as a draw records it: the window by its digest alone.

    The window (up to ``FleetBudget.n_recent`` values) lives in the budget's
    row; each draw's event holds its SHA-256, so the chain still vouches for
    it at the size of one hash.
    """
    window = json.dumps([state["recent_times"], state["recent_values"]])
    recorded = {k: v for k, v in state.items() if not k.startswith("recent_")}
    return {**recorded, "window": hashlib.sha256(window.encode()).hexdigest()}


def _genesis(name: str, config: str) -> str:
    return hashlib.sha256(
        json.dumps(["skrbal-fleet-budget", name, config]).encode()
    ).hexdigest()


def _config_text(budget: FleetBudget) -> str:
    params = budget.get_params()
    config = {k: float(params[k]) for k in ("limit", "period", "origin")}
    memory = None if params["memory"] is None else float(params["memory"])
    config.update(memory=memory, n_recent=int(params["n_recent"]))
    return json.dumps(config, sort_keys=True)


class Draw:
    """One agent's draw on the fleet budget: a transaction under the fleet lock.

    Made by :meth:`FleetLedger.draw`; :attr:`snapshot` is the fleet's state
    read under the lock, and :meth:`record` writes what the agent's call took.
    """

    def __init__(self, ledger: FleetLedger, conn, row):
        self.ledger, self.connection = ledger, conn
        self.budget = _budget_of(row, f"store {ledger.store.display_url}")
        state = _state_of(row, f"store {ledger.store.display_url}")
        self.snapshot = {"seq": int(row.last_seq), **state}
        self._previous_hash = None
        self.recorded = False

    def record(self, agent: str, first_step: int, steps, state: dict) -> None:
        """Write the draw: the steps granted and the fleet's state after.

        Parameters
        ----------
        agent : str
            The agent that drew.
        first_step : int
            Its first step in the call.
        steps : list of int
            Its steps granted an inspection.
        state : dict
            The policy's state after the call (:attr:`FleetBudget` state).
        """
        before = self.snapshot
        if state is None or state.get("draw") != before["seq"]:
            # The call decided nothing (no rows): the fleet is unchanged.
            state = self.budget.state_of(before)
        spent_before = {str(k): float(v) for k, v in before["spent"].items()}
        taken = {
            k: v - spent_before.get(k, 0.0)
            for k, v in state["spent"].items()
            if v != spent_before.get(k, 0.0)
        }
        new_state = self.budget.fleet_state(state)
        payload = json.dumps(
            {
                "steps": [int(s) for s in steps],
                "taken": taken,
                "state": _recorded(new_state),
            },
            sort_keys=True,
        )
        self.ledger.append_event(
            self.connection, before["seq"], "draw", agent, int(first_step), payload
        )
        self.ledger.set_state(self.connection, before["seq"] + 1, new_state)
        self.recorded = True


class FleetLedger:
    """The fleet budget ``name`` of an agent store: create, draw, verify, read.

    Parameters
    ----------
    store : AgentStore
        The store of the fleet's agents (a SQLite file or PostgreSQL; not
        ``":memory:"``, whose one connection a draw cannot share).
    name : str, default="fleet"
        The budget's name in the store.
    create : bool, default=True
        Create the fleet's tables if the store has none; ``False`` only
        reads (a store without them has no fleet budget).

    Examples
    --------
    >>> import os, tempfile
    >>> from skrbal.online import AgentStore
    >>> from skrbal.fleet import FleetBudget, FleetLedger
    >>> store = AgentStore(os.path.join(tempfile.mkdtemp(), "fleet.db"))
    >>> ledger = FleetLedger(store)
    >>> ledger.create(FleetBudget(limit=4.0, period=86400.0))
    >>> ledger.status()["limit"], ledger.verify()["n_draws"]
    (4.0, 0)
    >>> store.close()
    """

    def __init__(self, store, name: str = "fleet", *, create: bool = True):
        if store.path is None and store.engine.dialect.name == "sqlite":
            raise ValueError(
                f"store {store.display_url}: a fleet budget needs a SQLite file "
                "or PostgreSQL; an in-memory store has one connection that a "
                "draw cannot hold."
            )
        limit = schema.budgets.c.name.type.length
        if not isinstance(name, str) or not 0 < len(name) <= limit:
            shown = f"{len(name)}" if isinstance(name, str) else repr(name)
            raise ValueError(
                f"name: a fleet budget's name is text of 1 to {limit} "
                f"characters, got {shown}."
            )
        self.store, self.name = store, name
        self._tables = create
        if create:
            self._prepare()

    # -------------------------------------------------------------- #
    def _prepare(self) -> None:
        for attempt in range(3):
            try:
                with self.store.engine.begin() as conn:
                    self._lock_database(conn)
                    schema.metadata.create_all(conn, checkfirst=True)
                return
            except (IntegrityError, ProgrammingError, OperationalError):
                if attempt == 2:
                    raise
                time.sleep(0.1 * (attempt + 1))

    @staticmethod
    def _lock_database(conn) -> None:
        if conn.dialect.name == "sqlite":
            if not conn.connection.dbapi_connection.in_transaction:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.execute(
                text("SELECT pg_advisory_xact_lock(:space, :key)"),
                {"space": _PG_CREATE_LOCK[0], "key": _PG_CREATE_LOCK[1]},
            )

    def _row(self, conn, *, lock: bool):
        if not self._tables:
            self._tables = inspect(conn).has_table(schema.budgets.name)
            if not self._tables:
                return None
        query = select(schema.budgets).where(schema.budgets.c.name == self.name)
        if lock and conn.dialect.name == "postgresql":
            query = query.with_for_update()
        return conn.execute(query).first()

    # -------------------------------------------------------------- #
    def create(self, budget: FleetBudget) -> None:
        """Create the budget, or check that the stored one is ``budget``.

        Parameters
        ----------
        budget : FleetBudget
            Its limit, period, origin and pacing rate.

        Raises
        ------
        ConfigurationError
            When the store has a budget of this name with other parameters.
        """
        budget.initial_state()  # names an invalid parameter
        config = _config_text(budget)
        with self.store.engine.begin() as conn:
            self._lock_database(conn)
            row = self._row(conn, lock=True)
            if row is not None:
                if row.config != config:
                    raise ConfigurationError(
                        f"store {self.store.display_url}: fleet budget "
                        f"{self.name!r} is {row.config}, not {config}."
                    )
                return
            state = budget.fleet_state(budget.initial_state())
            conn.execute(
                insert(schema.budgets),
                {
                    "name": self.name,
                    "config": config,
                    "state": json.dumps(state),
                    "last_seq": 0,
                    "created_at": time.time(),
                },
            )

    def budget(self) -> FleetBudget:
        """The stored budget policy, for the fleet's agents.

        Returns
        -------
        budget : FleetBudget
        """
        with self.store.engine.connect() as conn:
            row = self._row(conn, lock=False)
        if row is None:
            raise StoreError(
                f"store {self.store.display_url} has no fleet budget "
                f"{self.name!r}; create it first."
            )
        return _budget_of(row, f"store {self.store.display_url}")

    @contextlib.contextmanager
    def draw(self, *, turn=None, timeout=600.0):
        """A transaction holding the fleet lock, committed if the block succeeds.

        Parameters
        ----------
        turn : int, default=None
            The number this draw must have: the lock is taken, and let go
            again, until the ledger holds ``turn - 1`` draws. ``None``: the
            next number, whatever it is.
        timeout : float, default=600
            Seconds to wait for the turn.

        Yields
        ------
        draw : Draw
            The fleet's state read under the lock, and where to record.

        Raises
        ------
        FleetDrawError
            When the ledger already holds draw ``turn``, or the draws before
            it do not come within ``timeout``.
        """
        deadline, pause = time.monotonic() + timeout, 0.001
        while True:
            with self.store.engine.begin() as conn:
                if conn.dialect.name == "sqlite":
                    # The database's write lock before the read: two draws
                    # never read the same state.
                    conn.exec_driver_sql("BEGIN IMMEDIATE")
                row = self._row(conn, lock=True)
                if row is None:
                    raise StoreError(
                        f"store {self.store.display_url} has no fleet budget "
                        f"{self.name!r}; create it first."
                    )
                if turn is None or row.last_seq == turn - 1:
                    yield Draw(self, conn, row)
                    return
                waiting = row.last_seq
            self._wait_turn(turn, waiting, deadline)
            time.sleep(pause)
            pause = min(2 * pause, 0.05)

    def _wait_turn(self, turn: int, seq: int, deadline: float) -> None:
        where = f"store {self.store.display_url}: fleet budget {self.name!r}"
        if seq >= turn:
            raise FleetDrawError(
                f"{where} already holds draw {turn} (it holds {seq}): two "
                "processes were given the same turn."
            )
        if time.monotonic() > deadline:
            raise FleetDrawError(
                f"{where}: draw {turn} waited for draw {seq + 1}, which did "
                "not come; is the process that draws it still running?"
            )

    # -------------------------------------------------------------- #
    def append_event(self, conn, seq: int, kind, agent, first_step, payload):
        """Append event ``seq + 1`` chained to event ``seq`` (under the lock)."""
        ev = schema.events
        if seq == 0:
            config = conn.execute(
                select(schema.budgets.c.config).where(
                    schema.budgets.c.name == self.name
                )
            ).scalar_one()
            previous = _genesis(self.name, config)
        else:
            previous = conn.execute(
                select(ev.c.hash).where((ev.c.budget == self.name) & (ev.c.seq == seq))
            ).scalar_one()
        at = time.time()
        conn.execute(
            insert(ev),
            {
                "budget": self.name,
                "seq": seq + 1,
                "kind": kind,
                "agent": agent,
                "first_step": first_step,
                "payload": payload,
                "created_at": at,
                "hash": _hash(previous, seq + 1, kind, agent, first_step, payload, at),
            },
        )

    def set_state(self, conn, seq: int, state: dict) -> None:
        """Move the budget's row to event ``seq`` and ``state``."""
        moved = conn.execute(
            update(schema.budgets)
            .where(
                (schema.budgets.c.name == self.name)
                & (schema.budgets.c.last_seq == seq - 1)
            )
            .values(last_seq=seq, state=json.dumps(state))
        )
        if moved.rowcount != 1:
            raise StoreError(
                f"store {self.store.display_url}: fleet budget {self.name!r} "
                "moved during a draw; the fleet lock was not held."
            )

    # -------------------------------------------------------------- #
    def events(self) -> list[dict]:
        """Every draw, in order.

        Returns
        -------
        events : list of dict
            ``seq``, ``kind``, ``agent``, ``first_step``, ``created_at`` and
            the decoded ``payload`` (``steps`` granted, money ``taken`` per
            period, ``state`` after).
        """
        ev = schema.events
        with self.store.engine.connect() as conn:
            rows = conn.execute(
                select(ev).where(ev.c.budget == self.name).order_by(ev.c.seq)
            ).all()
        return [
            {
                "seq": r.seq,
                "kind": r.kind,
                "agent": r.agent,
                "first_step": r.first_step,
                "created_at": r.created_at,
                "payload": json.loads(r.payload),
            }
            for r in rows
        ]

    def state(self) -> dict:
        """The fleet's state now, read without the lock (for display).

        Returns
        -------
        state : dict
            As :meth:`FleetBudget.fleet_state`, with ``seq`` (the last event).
        """
        with self.store.engine.connect() as conn:
            row = self._row(conn, lock=False)
        if row is None:
            raise StoreError(
                f"store {self.store.display_url} has no fleet budget {self.name!r}."
            )
        state = _state_of(row, f"store {self.store.display_url}")
        return {"seq": int(row.last_seq), **state}

    def status(self) -> dict:
        """The budget's parameters and state.

        Returns
        -------
        status : dict
            ``name``, ``limit``, ``period``, ``origin``, ``n_recent``,
            ``spent`` (by period number, as strings), ``clock`` (the latest
            time drawn), ``n_competitors`` (values in the window),
            ``price`` (the net value a step needs at the clock, as
            :meth:`FleetBudget.clearing_price`; None when the period's money
            is spent) and ``n_draws``.
        """
        with self.store.engine.connect() as conn:
            row = self._row(conn, lock=False)
        if row is None:
            raise StoreError(
                f"store {self.store.display_url} has no fleet budget {self.name!r}."
            )
        state = _state_of(row, f"store {self.store.display_url}")
        budget = _budget_of(row, f"store {self.store.display_url}")
        price = budget.clearing_price(state)
        return {
            "name": self.name,
            **json.loads(row.config),
            "spent": state["spent"],
            "clock": state["clock"],
            "n_competitors": len(state["recent_values"]),
            "price": price if np.isfinite(price) else None,
            "n_draws": int(row.last_seq),
        }

    def verify(self) -> dict:
        """Check the chain, the state, every period's cap, and the agents' requests.

        Returns
        -------
        head : dict
            ``n_draws`` and ``hash`` of the last event (None without one).

        Raises
        ------
        StoreError
            Naming the budget, table and event at the first damage: a hash
            that does not follow, a state other than the draws', money taken
            that is not the last state's, a period spent past its limit, or
            steps granted to an agent other than the steps it requested.
        """
        ev = schema.events
        with self.store.engine.connect() as conn:
            row = self._row(conn, lock=False)
            if row is None:
                raise StoreError(
                    f"store {self.store.display_url} has no fleet budget {self.name!r}."
                )
            rows = conn.execute(
                select(ev).where(ev.c.budget == self.name).order_by(ev.c.seq)
            ).all()
        where = f"store {self.store.display_url}: fleet budget {self.name!r}"
        budget = _budget_of(row, f"store {self.store.display_url}")
        config = json.loads(row.config)
        previous = _genesis(self.name, row.config)
        spent: dict[str, float] = {}
        granted: dict[str, list] = {}
        state = _recorded(budget.fleet_state(budget.initial_state()))
        for expected, r in enumerate(rows, start=1):
            at = f"{where}, table {ev.name}, event {r.seq}"
            if r.seq != expected:
                raise StoreError(f"{at}: expected event {expected}; one is missing.")
            digest = _hash(
                previous, r.seq, r.kind, r.agent, r.first_step, r.payload, r.created_at
            )
            if digest != r.hash:
                raise StoreError(f"{at}: its hash does not follow the chain.")
            previous = r.hash
            payload = json.loads(r.payload)
            granted.setdefault(r.agent, []).extend(payload["steps"])
            for period, amount in payload["taken"].items():
                spent[period] = spent.get(period, 0.0) + amount
            state = payload["state"]
            for period, amount in state["spent"].items():
                if abs(amount - spent.get(period, 0.0)) > 1e-9 * max(1.0, amount):
                    raise StoreError(
                        f"{at}: period {period} shows {amount!r} spent, its draws "
                        f"{spent.get(period, 0.0)!r}."
                    )
                if amount > config["limit"] * (1 + 1e-9):
                    raise StoreError(
                        f"{at}: period {period} spent {amount!r}, over the "
                        f"limit {config['limit']!r}."
                    )
        if (
            row.last_seq != len(rows)
            or _recorded(_state_of(row, f"store {self.store.display_url}")) != state
        ):
            raise StoreError(
                f"{where}, table {schema.budgets.name}: its state or last event "
                f"({row.last_seq}) is not its draws' ({len(rows)})."
            )
        self._check_requests(granted, where)
        return {"n_draws": len(rows), "hash": rows[-1].hash if rows else None}

    def _check_requests(self, granted: dict, where: str) -> None:
        """Each agent's requests are the steps its draws were granted."""
        for agent, steps in granted.items():
            requested = sorted(self.store.requests(agent)["step"].tolist())
            if sorted(steps) != requested:
                extra = sorted(set(steps) ^ set(requested))[:3]
                raise StoreError(
                    f"{where}, table {schema.events.name}: the draws of agent "
                    f"{agent!r} granted {len(steps)} inspections, its requests are "
                    f"{len(requested)} (steps {extra} differ)."
                )
