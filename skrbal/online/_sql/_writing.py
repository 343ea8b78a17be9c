"""Writing an agent store: each call of an agent, one transaction.

Each method of :class:`StoreWriter` is the body of a write method of
:class:`~skrbal.online.AgentStore`: it turns the records of
:mod:`skrbal.online._records` into rows of :mod:`skrbal.online._sql._schema` and
commits them with the agent's counters and one event, or nothing.

The writer sends the fixed SQL texts of :mod:`._driver` through whichever
connection its database hands out: a SQLAlchemy connection
(:class:`~._database.Database`, SQLite or PostgreSQL), or the standard
library's ``sqlite3`` (:class:`~._sqlite_file.SqliteFile`), so a live call on
a SQLite file imports no SQLAlchemy. The database supplies ``begin()``,
``held_connection()``, ``driver(conn)`` and ``head(agent_id)``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager, nullcontext

from skrbal.online._config import dumps
from skrbal.online._records import (
    AgentRecord,
    Commissioning,
    ObserveBlock,
    ResultRecord,
)
from skrbal.online._sql import _driver as driver
from skrbal.online._sql._blocks import make_block
from skrbal.online._sql._chain import (
    KEYED,
    block_digest,
    commissioning_digest,
    event_hash,
    genesis_hash,
)
from skrbal.online._sql._lock import AgentLock
from skrbal.online._storage import StoreError


def label_to_json(label) -> str:
    """JSON text of one class label (numpy scalars become Python values)."""
    return json.dumps(label.item() if hasattr(label, "item") else label)


def _with_snapshot(payload: dict, snapshot) -> dict:
    """``payload`` with the model's snapshot after the event, if there is one."""
    if snapshot is not None:
        payload["snapshot"] = snapshot
    return payload


def _agent_values(record: AgentRecord) -> dict:
    """The row of ``skrbal_agents`` for a new agent."""
    names = record.feature_names
    return {
        "name": record.name,
        "created_at": record.created_at,
        "skrbal_version": record.skrbal_version,
        "process": record.process,
        "estimator": record.estimator,
        "estimator_fingerprint": record.estimator_fingerprint,
        "budget": record.budget,
        "budget_fingerprint": record.budget_fingerprint,
        "settings": dumps(dict(record.settings)),
        "n_features": record.n_features,
        "feature_names": None if names is None else json.dumps(list(names)),
        "clock": record.clock,
        "n_steps": record.n_steps,
        "n_requests": record.n_requests,
        "last_seq": record.last_seq,
        "budget_state": json.dumps(record.budget_state),
    }


def _commissioning_rows(agent_id: int, steps: Commissioning) -> list:
    stamps = steps.timestamps
    return [
        {
            "agent_id": agent_id,
            "step": i,
            "seq": 1,
            "kind": "commissioning",
            "timestamp": None if stamps is None else float(stamps[i]),
            "time": float(steps.times[i]),
            "features": json.dumps(steps.features[i].tolist()),
            "belief": (
                None if steps.belief is None else json.dumps(steps.belief[i].tolist())
            ),
            "evpi": float(steps.evpi[i]),
            "action": int(steps.actions[i]),
            "label": label_to_json(steps.labels[i]),
            "taken_action": None,
            "request_id": None,
        }
        for i in range(steps.features.shape[0])
    ]


class Write:
    """One write's transaction: its connection, the driver's cursor in it,
    and the hash of the agent's event before the one it appends."""

    __slots__ = ("_run", "conn", "cursor", "previous")

    def __init__(self, conn, run, cursor, previous):
        self.conn, self._run, self.cursor, self.previous = conn, run, cursor, previous

    @property
    def integrity_error(self):
        """The exception a unique key's violation raises in this transaction."""
        return self._run.integrity_error

    def execute(self, sql, params, many=False):
        """Run one of :mod:`._driver`'s texts in this transaction."""
        return self._run.execute(self.cursor, sql, params, many, self.conn)


class StoreWriter:
    """The writes of an :class:`~skrbal.online.AgentStore`, one transaction each.

    Parameters
    ----------
    database : Database
        The store's database.
    chain_key : bytes or None
        The secret of the event chain (None: plain SHA-256).
    anchor : AnchorFile or None
        The sidecar that each commit's head is appended to.

    Attributes
    ----------
    locks : dict
        ``agent_id -> (lock, name)``: the write locks the store handed out,
        checked in the transaction of every write.
    """

    def __init__(self, database, chain_key, anchor):
        self.database, self.chain_key, self.anchor = database, chain_key, anchor
        self.locks = {}
        # A caller's open transaction that the writes join (see joined()).
        self._joined = None
        # A SQLite file's writes reuse one connection (see _held.py).
        self._held = database.held_connection()

    @contextmanager
    def joined(self, conn):
        """See :meth:`~skrbal.online.AgentStore.joined`."""
        if self._joined is not None:
            raise RuntimeError(
                f"store {self.database.display_url}: its writes already join a "
                "transaction."
            )
        self._joined = conn
        try:
            yield
        finally:
            self._joined = None

    def begin_write(self):
        """See :meth:`~skrbal.online.AgentStore.begin_write`."""
        if self._joined is None:
            return self.database.begin()
        return nullcontext(self._joined)

    def _begin(self):
        """The transaction of an agent's write: the joined one, or its own
        (on the held connection of a SQLite file)."""
        if self._joined is not None:
            return nullcontext(self._joined)
        if self._held is not None:
            return self._held.begin()
        return self.database.begin()

    def close(self) -> None:
        """Give back the connection held for the writes."""
        if self._held is not None:
            self._held.close()

    def _driver(self, conn):
        """The SQL texts on ``conn`` (a joined connection's too)."""
        return self.database.driver(conn)

    @contextmanager
    def _transaction(self, agent_id: int, seq: int, **values):
        """One transaction moving the agent from event ``seq`` to ``seq + 1``.

        The agent's ``last_seq`` must still be ``seq`` (a lost update is
        refused); ``values`` update the agent's row in the same statement,
        which also reads the hash of event ``seq`` where the database can
        (``UPDATE ... RETURNING``). Yields the transaction's :class:`Write`.
        """
        with self._begin() as conn:
            run = self._driver(conn)
            cursor = run.cursor(conn)
            columns = tuple(sorted(values))
            params = {"w_agent_id": agent_id, "w_seq": seq, "last_seq": seq + 1}
            params.update(values)
            held = self.locks.get(agent_id)
            if held is not None and not held[0].held:
                held = None
            probe = None if held is None or not run.returning else held[0].probe()
            if probe is not None:
                params.update(probe)
            moved = run.execute(
                cursor,
                driver.move_text(columns, run.returning, probe is not None),
                params,
                conn=conn,
            )
            if run.returning:
                got = moved.fetchall()
                n_moved = len(got)
                previous = got[0][0] if got else None
            else:
                n_moved, previous = moved.rowcount, None
            if held is not None:
                if probe is not None and got:  # checked by the move itself
                    held[0].check(got[0][1], held[1])
                else:
                    held[0].verify(conn, held[1])
            if n_moved != 1:
                raise StoreError(
                    f"store {self.database.display_url}: agent {agent_id} was "
                    "changed by another writer since it was loaded; reopen it."
                )
            if not run.returning:
                previous = run.execute(
                    cursor, driver.PREVIOUS_HASH, {"w_agent_id": agent_id, "w_seq": seq}
                ).fetchone()
                previous = None if previous is None else previous[0]
            if previous is None:
                raise StoreError(
                    f"agent {agent_id}: table {driver.EVENTS} has no hash for "
                    f"event {seq}; the store is damaged."
                )
            try:
                yield Write(conn, run, cursor, previous)
            finally:
                cursor.close()
        if self.anchor is not None:
            # After the commit: an anchor behind the store is only less strict,
            # one ahead of it would be a false alarm of rollback.
            self.anchor.record(self.database, agent_id)

    def _insert_event(
        self,
        write,
        agent_id,
        seq,
        kind,
        step,
        request_id,
        payload,
        key=None,
        *,
        secret,
    ):
        """Append event ``seq``, its hash chained to ``write.previous``.

        ``write``: the transaction's :class:`Write` (for event 1, one whose
        ``previous`` is the chain's starting hash); ``key``: the
        :class:`ClientKey` of a keyed call, stored (unique per agent) and
        hashed; ``secret``: the store's chain key (None: plain SHA-256).
        """
        text, at = json.dumps(payload), time.time()
        client_key = digest = None
        if key is not None:
            client_key = key.key
            digest = json.dumps(dict(key.digest), sort_keys=True)
        row = {
            "agent_id": agent_id,
            "seq": seq,
            "kind": kind,
            "step": step,
            "request_id": request_id,
            "payload": text,
            "created_at": at,
            "client_key": client_key,
            "key_digest": digest,
            "hash": event_hash(
                write.previous,
                seq,
                kind,
                step,
                request_id,
                text,
                at,
                client_key,
                digest,
                secret=secret,
            ),
        }
        try:
            write.execute(driver.INSERT_EVENT, row)
        except write.integrity_error:
            if key is None:
                raise
            # The agent checks a key before acting; only a writer outside its
            # lock could have used it since.
            raise StoreError(
                f"agent {agent_id}: table {driver.EVENTS} already has a call "
                f"with client key {client_key!r}; nothing was written."
            ) from None

    def create_agent(self, record: AgentRecord, steps: Commissioning) -> int:
        """See :meth:`~skrbal.online.AgentStore.create_agent`."""
        taken = StoreError(
            f"store {self.database.display_url} already has an agent named "
            f"{record.name!r}: resume it with RiskBasedAgent.from_store(), or "
            "choose another name."
        )
        with self.database.begin() as conn:
            run = self._driver(conn)
            cursor = run.cursor(conn)
            exists = run.execute(cursor, driver.AGENT_NAMED, {"name": record.name})
            if exists.fetchone() is not None:
                raise taken
            values = _agent_values(record)
            try:
                if run.returning:
                    made = run.execute(
                        cursor, driver.INSERT_AGENT + " RETURNING agent_id", values
                    )
                    agent_id = made.fetchone()[0]
                else:
                    made = run.execute(cursor, driver.INSERT_AGENT, values)
                    agent_id = made.lastrowid
            except run.integrity_error:  # created by another process since the check
                raise taken from None
            rows = _commissioning_rows(agent_id, steps)
            run.execute(cursor, driver.INSERT_OBSERVATIONS, rows, many=True)
            payload = {
                "n": len(rows),
                "warnings": list(steps.warnings),
                "rows_sha256": commissioning_digest(rows),
            }
            # The agent's columns outside the chain's genesis, logged so that
            # verify covers them (stores made before kept no such record).
            payload["agent"] = {
                column: values[column]
                for column in (
                    "name",
                    "created_at",
                    "skrbal_version",
                    "estimator_fingerprint",
                    "budget_fingerprint",
                )
            }
            if steps.snapshot is not None:  # chained with the event (issue 28.25)
                payload["snapshot"] = steps.snapshot
            secret = self.chain_key
            if secret is not None:
                payload["chain"] = KEYED
            genesis = Write(conn, run, cursor, genesis_hash(values, secret))
            self._insert_event(
                genesis, agent_id, 1, "commission", 0, None, payload, secret=secret
            )
            genesis.cursor.close()
        if self.anchor is not None:
            self.anchor.record(self.database, agent_id)
        return agent_id

    def append_observe(self, agent_id: int, seq: int, block: ObserveBlock) -> None:
        """See :meth:`~skrbal.online.AgentStore.append_observe`."""
        counters = {
            "n_steps": block.first_step + block.n_steps,
            "budget_state": json.dumps(block.budget_state),
            "clock": block.clock,
        }
        if block.requests:
            counters["n_requests"] = max(r.request_id for r in block.requests)
        row = make_block(
            agent_id,
            block.first_step,
            seq + 1,
            block.timestamps,
            block.times,
            block.features,
            block.belief,
            block.evpi,
            block.action,
            block.request_ids,
        )
        requests = [
            {
                "agent_id": agent_id,
                "request_id": int(r.request_id),
                "step": int(r.step),
                "status": "open",
                "evpi": float(r.evpi),
                "opened_seq": seq + 1,
                "method": r.method,
            }
            for r in block.requests
        ]
        payload = {
            "n": block.n_steps,
            "budget_state": block.budget_state,
            "block_sha256": block_digest(row),
            # Each request's inspection method (none: the perfect inspection).
            "methods": {
                str(int(r.request_id)): r.method
                for r in block.requests
                if r.method is not None
            },
        }
        if block.skipped:  # rows left out for a missing value, recorded as such
            payload["skipped"] = [row.as_json() for row in block.skipped]
        if block.snapshot is not None:
            payload["snapshot"] = block.snapshot
        with self._transaction(agent_id, seq, **counters) as write:
            write.execute(driver.INSERT_BLOCK, row)
            if requests:
                write.execute(driver.INSERT_REQUESTS, requests, many=True)
            self._insert_event(
                write,
                agent_id,
                seq + 1,
                "observe",
                block.first_step,
                None,
                payload,
                key=block.key,
                secret=self.chain_key,
            )

    def record_result(self, agent_id: int, seq: int, result: ResultRecord) -> None:
        """See :meth:`~skrbal.online.AgentStore.record_result`."""
        label = None if result.label is None else label_to_json(result.label)
        report = None if result.report is None else label_to_json(result.report)
        posterior = None if result.posterior is None else list(result.posterior)
        values = {
            "status": "done",
            "closed_seq": seq + 1,
            "label": label,
            "action": result.action,
            "result_timestamp": result.timestamp,
            "report": report,
            "posterior": None if posterior is None else json.dumps(posterior),
        }
        counters = {}
        if result.origin is not None:  # a request made and done in this event
            counters["n_requests"] = result.request_id
        with self._transaction(agent_id, seq, **counters) as write:
            if result.origin is None:
                write.execute(
                    driver.FINISH_REQUEST,
                    {
                        "w_agent_id": agent_id,
                        "w_request_id": result.request_id,
                        **values,
                    },
                )
            else:
                write.execute(
                    driver.INSERT_DONE_REQUEST,
                    {
                        "agent_id": agent_id,
                        "request_id": result.request_id,
                        "step": result.step,
                        "evpi": float(result.evpi),
                        "opened_seq": seq + 1,
                        "method": result.method,
                        "origin": result.origin,
                        **values,
                    },
                )
            payload = {
                "label": None if label is None else json.loads(label),
                "warnings": list(result.warnings),
                # What a retry with the client key returns.
                "action": int(result.action),
                "timestamp": result.timestamp,
            }
            if result.origin is not None:
                payload["origin"] = result.origin
                payload["method"] = result.method
            if posterior is not None:
                payload["report"] = None if report is None else json.loads(report)
                payload["posterior"] = posterior
            if result.snapshot is not None:
                payload["snapshot"] = result.snapshot
            self._insert_event(
                write,
                agent_id,
                seq + 1,
                "result",
                result.step,
                result.request_id,
                payload,
                key=result.key,
                secret=self.chain_key,
            )

    def record_cancel(
        self, agent_id, seq, request_id, step, reason, key=None, snapshot=None
    ) -> None:
        """See :meth:`~skrbal.online.AgentStore.record_cancel`."""
        with self._transaction(agent_id, seq) as write:
            write.execute(
                driver.CANCEL_REQUEST,
                {
                    "closed_seq": seq + 1,
                    "note": reason,
                    "w_agent_id": agent_id,
                    "w_request_id": request_id,
                },
            )
            self._insert_event(
                write,
                agent_id,
                seq + 1,
                "cancel",
                step,
                request_id,
                _with_snapshot({"reason": reason}, snapshot),
                key=key,
                secret=self.chain_key,
            )

    def record_expire(self, agent_id, seq, request_ids, steps, snapshot=None) -> None:
        """See :meth:`~skrbal.online.AgentStore.record_expire`."""
        ids = [int(i) for i in request_ids]
        params = {f"r{i}": request_id for i, request_id in enumerate(ids)}
        params.update(closed_seq=seq + 1, w_agent_id=agent_id)
        with self._transaction(agent_id, seq) as write:
            write.execute(driver.expire_text(len(ids)), params)
            self._insert_event(
                write,
                agent_id,
                seq + 1,
                "expire",
                int(min(steps)),
                None,
                _with_snapshot(
                    {"request_ids": ids, "steps": [int(s) for s in steps]}, snapshot
                ),
                secret=self.chain_key,
            )

    def record_action(self, agent_id, seq, step, action, key=None) -> None:
        """See :meth:`~skrbal.online.AgentStore.record_action`."""
        row = {"agent_id": agent_id, "step": step, "action": action}
        with self._transaction(agent_id, seq) as write:
            write.execute(driver.DELETE_ACTION, row)
            write.execute(driver.INSERT_ACTION, row)
            self._insert_event(
                write,
                agent_id,
                seq + 1,
                "action",
                step,
                None,
                {"action": action},
                key=key,
                secret=self.chain_key,
            )

    def record_skipped(self, agent_id, seq, skipped, key=None) -> None:
        """See :meth:`~skrbal.online.AgentStore.record_skipped`."""
        payload = {"skipped": [row.as_json() for row in skipped]}
        with self._transaction(agent_id, seq) as conn:
            self._insert_event(
                conn, agent_id, seq + 1, "skip", None, None, payload, key=key,
                secret=self.chain_key,
            )  # fmt: skip

    def lock(self, agent_id: int, name: str, timeout: float) -> AgentLock:
        """See :meth:`~skrbal.online.AgentStore.lock_agent`."""
        if self.database.read_only:
            raise StoreError(
                f"store {self.database.path} is read-only (the file or its folder "
                f"cannot be written): agent {name!r} can be read (status, history, "
                "export) but not opened for writing."
            )
        lock = AgentLock(self.database, agent_id, name, timeout)
        try:
            self.mark_owner(agent_id)
        except BaseException:
            lock.release()
            raise
        self.locks[agent_id] = (lock, name)
        return lock

    def mark_owner(self, agent_id: int) -> None:
        """Write who holds the agent's lock (for the message of a second writer)."""
        owner = f"pid {os.getpid()} on {socket.gethostname()} since {time.ctime()}"
        with self.database.begin() as conn:
            run = self._driver(conn)
            cursor = run.cursor(conn)
            try:
                run.execute(
                    cursor, driver.SET_OWNER, {"owner": owner, "w_agent_id": agent_id}
                )
            finally:
                cursor.close()
