"""The fleet budget's ledger: its row, its draws and their hash chain."""

from __future__ import annotations

import contextlib
import json
import time

import numpy as np
from sqlalchemy import insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from skrbal.exceptions import ConfigurationError, FleetDrawError, StoreError
from skrbal.fleet import _schema as schema
from skrbal.fleet._chain import FleetChain, _genesis, _hash
from skrbal.fleet._policy import FleetBudget
from skrbal.fleet._rows import (
    budget_of,
    config_of,
    config_text,
    recorded,
    state_of,
)
from skrbal.fleet._walk import DrawWalk

__all__ = ["FleetLedger"]

# The agent store's advisory-lock space (key 0: no agent's), which orders
# the processes creating tables; such locks span every schema of a database,
# which only makes creators in other schemas wait their turn.
_PG_CREATE_LOCK = (0x736B7262 - 2**31, 0)


class Draw:
    """One agent's draw on the fleet budget: a transaction under the fleet lock.

    Made by :meth:`FleetLedger.draw`; :attr:`snapshot` is the fleet's state
    read under the lock, and :meth:`record` writes what the agent's call took.
    """

    def __init__(self, ledger: FleetLedger, conn, row):
        self.ledger, self.connection = ledger, conn
        where = f"store {ledger.store.display_url}"
        self.budget = budget_of(row, where)
        self._digest = ledger.digest_of(row)
        state = state_of(row, where)
        self.snapshot = {"seq": int(row.last_seq), **state}
        self.recorded = False
        self.head = None

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
                "state": recorded(new_state),
            },
            sort_keys=True,
        )
        digest = self.ledger.append_event(
            self.connection,
            before["seq"],
            "draw",
            agent,
            int(first_step),
            payload,
            digest=self._digest,
        )
        self.head = (before["seq"] + 1, digest)
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
        self.chain = FleetChain(store, name)
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
        with self.store.engine.begin() as conn:
            self._lock_database(conn)
            row = self._row(conn, lock=True)
            if row is not None:
                stored = budget_of(row, f"store {self.store.display_url}")
                if config_text(stored) != config_text(budget):
                    raise ConfigurationError(
                        f"store {self.store.display_url}: fleet budget "
                        f"{self.name!r} is {row.config}, not {config_text(budget)}."
                    )
                self.digest_of(row)  # a key for a keyed ledger, and only then
                return
            config = config_text(budget, self.chain.mark({}))
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
        where = f"store {self.store.display_url}"
        budget = budget_of(row, where)
        self.digest_of(row)
        self._check_anchor(row)
        return budget

    def digest_of(self, row):
        """The digest function of the ledger of ``row`` (SHA-256, or the
        store's HMAC for a keyed one), its mode checked against the store's."""
        where = f"store {self.store.display_url}: fleet budget {self.name!r}"
        return self.chain.digest_for(config_of(row, where), where)

    def _check_anchor(self, row) -> None:
        """The ledger reaches the head the store's anchor file keeps."""
        heads = self.chain.heads()
        if not heads:
            return
        ev = schema.events

        def hash_at(seq):
            with self.store.engine.connect() as conn:
                return conn.execute(
                    select(ev.c.hash).where(
                        (ev.c.budget == self.name) & (ev.c.seq == seq)
                    )
                ).scalar()

        where = f"store {self.store.display_url}: fleet budget {self.name!r}"
        self.chain.check_heads(heads, hash_at, int(row.last_seq), where)

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
                    draw = Draw(self, conn, row)
                    yield draw
                    committed = True
                else:
                    committed = False
                    waiting = row.last_seq
            if committed:
                if draw.head is not None:
                    self.chain.record_head(*draw.head)
                return
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
    def append_event(
        self, conn, seq: int, kind, agent, first_step, payload, *, digest
    ) -> str:
        """Append event ``seq + 1`` chained to event ``seq`` (under the lock).

        ``digest`` hashes (:meth:`digest_of`); returns the event's hash.
        """
        ev = schema.events
        if seq == 0:
            config = conn.execute(
                select(schema.budgets.c.config).where(
                    schema.budgets.c.name == self.name
                )
            ).scalar_one()
            previous = _genesis(self.name, config, digest)
        else:
            previous = conn.execute(
                select(ev.c.hash).where((ev.c.budget == self.name) & (ev.c.seq == seq))
            ).scalar_one()
        at = time.time()
        new_hash = _hash(
            previous, seq + 1, kind, agent, first_step, payload, at, digest
        )
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
                "hash": new_hash,
            },
        )
        return new_hash

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
        state = state_of(row, f"store {self.store.display_url}")
        return {"seq": int(row.last_seq), **state}

    def status(self) -> dict:
        """The budget's parameters and state.

        Returns
        -------
        status : dict
            ``name``, ``limit``, ``period``, ``origin``, ``n_recent``,
            ``n_periods``, ``spent`` (money per period number, as strings,
            summed over every draw), ``clock`` (the latest time drawn),
            ``n_competitors`` (values in the window), ``price`` (the net
            value a step needs at the clock, as
            :meth:`FleetBudget.clearing_price`; None when the period's money
            is spent) and ``n_draws``.
        """
        ev = schema.events
        with self.store.engine.connect() as conn:
            row = self._row(conn, lock=False)
            if row is None:
                raise StoreError(
                    f"store {self.store.display_url} has no fleet budget {self.name!r}."
                )
            payloads = conn.execute(
                select(ev.c.payload).where(ev.c.budget == self.name)
            ).scalars()
            spent: dict[str, float] = {}
            for payload in payloads:
                for period, amount in json.loads(payload)["taken"].items():
                    spent[period] = spent.get(period, 0.0) + amount
        state = state_of(row, f"store {self.store.display_url}")
        budget = budget_of(row, f"store {self.store.display_url}")
        price = budget.clearing_price(state)
        params = budget.get_params()
        return {
            "name": self.name,
            **{k: params[k] for k in ("limit", "period", "origin", "memory")},
            "n_recent": params["n_recent"],
            "n_periods": params["n_periods"],
            "spent": dict(sorted(spent.items(), key=lambda kv: int(kv[0]))),
            "clock": state["clock"],
            "n_competitors": len(state["recent_values"]),
            "price": price if np.isfinite(price) else None,
            "n_draws": int(row.last_seq),
        }

    def verify(self, *, expected_head=None) -> dict:
        """Check the chain, the state, every period's cap, and the agents' requests.

        What it detects depends on the store's mode (the user guide's
        fleet budget page lists them): the hash chain alone, any edit,
        deletion, insertion or reordering of draws and a row other than its
        draws'; with the store's chain key, also such edits with every hash
        recomputed; with an anchor (``expected_head``, or the store's
        ``anchor_file``), also a rollback to before the anchored draw.

        Parameters
        ----------
        expected_head : dict, (int, str) or str, default=None
            A head kept outside the database: what an earlier ``verify``
            returned (``{"n_draws": n, "hash": h}``), a pair or
            ``'SEQ:HASH'``. A ledger that does not reach draw ``n`` with
            hash ``h`` is refused. The store's anchor file is checked too.

        Returns
        -------
        head : dict
            ``n_draws`` and ``hash`` of the last event (None without one).

        Raises
        ------
        StoreError
            Naming the budget, table and event at the first damage: a hash
            that does not follow, a state other than the draws', money taken
            that is not the last state's, a period spent past its limit,
            steps granted to an agent other than the steps it requested, a
            keyed ledger without its key (or a key without one), or a head
            kept outside that the ledger does not meet.
        """
        heads = self.chain.heads(expected_head)
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
        budget = budget_of(row, f"store {self.store.display_url}")
        walk = DrawWalk(budget, row, self.digest_of(row), where)
        for r in rows:
            walk.add(r)
        walk.finish(row, state_of(row, f"store {self.store.display_url}"))
        self.chain.check_heads(heads, lambda seq: rows[seq - 1].hash, len(rows), where)
        self._check_requests(walk.granted, where)
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
