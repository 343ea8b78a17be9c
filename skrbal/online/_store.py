"""The agent store: a SQLite file or a PostgreSQL database, via SQLAlchemy Core."""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager
from math import fsum

import numpy as np
import pandas as pd
from sqlalchemy import (
    bindparam,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
)
from sqlalchemy.pool import StaticPool

from skrbal.online import _schema as schema
from skrbal.online._blocks import rows_of_block, unpack_blocks
from skrbal.online._config import process_from_json

__all__ = ["AgentStore", "StoreError"]


class StoreError(RuntimeError):
    """The store cannot be used: wrong version, missing agent, lost update.

    Examples
    --------
    >>> from skrbal.online import AgentStore, StoreError
    >>> store = AgentStore(":memory:")
    >>> try:
    ...     store.status("bridge")
    ... except StoreError as exc:
    ...     print(exc)
    store sqlite:// has no agent named 'bridge'; it holds [].
    >>> store.close()
    """


_SYNCHRONOUS = ("full", "normal")


def _sqlite_pragmas(synchronous: str):
    def on_connect(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        # WAL lets readers (status, export) work while an agent writes.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous.upper()}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return on_connect


class _URL(str):
    """A store URL as given, password included, whose repr hides the password.

    An agent resumed from a URL keeps it as its ``store`` parameter, so that
    a clone connects as the original did; its repr (and the agent's) shows
    ``***`` in place of the password.
    """

    def __repr__(self):
        return repr(make_url(str(self)).render_as_string(hide_password=True))


def store_parameter(url):
    """The ``store`` parameter of an agent opened from ``url``, as given.

    A URL with a password becomes a string equal to it whose ``repr`` hides
    the password; anything else is returned unchanged.
    """
    text = os.fspath(url)
    if "://" in text and make_url(text).password is not None:
        return _URL(text)
    return url


def label_to_json(label) -> str:
    """JSON text of one class label (numpy scalars become Python values)."""
    return json.dumps(label.item() if hasattr(label, "item") else label)


class AgentStore:
    """A database holding any number of named agents, isolated from each other.

    Parameters
    ----------
    url : str or os.PathLike
        A file path (a SQLite database, created if missing), ``":memory:"``
        (an in-memory SQLite database that lives as long as this object), or
        a SQLAlchemy URL: ``sqlite:///path.db`` or
        ``postgresql+psycopg://user@host:port/database`` (``postgresql://``
        is read as ``postgresql+psycopg://``).
    synchronous : {'full', 'normal'}, default='full'
        SQLite only: ``'full'`` syncs every commit to disk, so a decision
        returned to the caller survives a power cut; ``'normal'`` (in WAL
        mode) survives a crash or kill of the process but may lose the last
        commits of a power cut or operating-system crash, and saves the
        disk sync (a few milliseconds) per call. PostgreSQL commits as its
        server is configured.

    Attributes
    ----------
    engine : sqlalchemy.engine.Engine
        The connection pool.
    path : str or None
        The absolute path of a SQLite file, ``None`` otherwise.
    display_url : str
        The URL, password hidden (for messages).

    See Also
    --------
    RiskBasedAgent : The agent that writes to the store.

    Notes
    -----
    Opening a store creates the tables of ``skrbal.online._schema`` if the
    database has none, upgrades an older schema by its migrations, and refuses
    a newer one. The store only reads and writes data: configurations are JSON,
    never pickles, so opening a store cannot execute code. Reading methods
    (:meth:`agent_names`, :meth:`status`, :meth:`history`, :meth:`requests`)
    take no lock and work while an agent is writing.

    Examples
    --------
    >>> from skrbal.online import AgentStore
    >>> store = AgentStore(":memory:")
    >>> store.agent_names()
    []
    >>> store.close()
    """

    def __init__(self, url, *, synchronous: str = "full"):
        if synchronous not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}."
            )
        url = os.fspath(url)
        if url == ":memory:":
            url = "sqlite://"
        elif "://" not in url:
            url = "sqlite:///" + os.path.abspath(url)
        parsed = make_url(url)
        backend = parsed.get_backend_name()
        self.path = None
        if backend == "sqlite":
            memory = parsed.database in (None, "", ":memory:")
            if memory:
                self.engine = create_engine(
                    parsed,
                    poolclass=StaticPool,
                    connect_args={"check_same_thread": False},
                )
                self._identity = ("memory", id(self))
            else:
                self.path = os.path.abspath(parsed.database)
                if not os.path.isdir(os.path.dirname(self.path)):
                    raise ValueError(
                        f"url: the folder of the SQLite file {self.path!r} does "
                        "not exist."
                    )
                self.engine = create_engine(parsed, connect_args={"timeout": 60})
                self._identity = ("sqlite", os.path.realpath(self.path))
            event.listen(self.engine, "connect", _sqlite_pragmas(synchronous))
        elif backend == "postgresql":
            if parsed.drivername == "postgresql":
                parsed = parsed.set(drivername="postgresql+psycopg")
            self.engine = create_engine(parsed, pool_pre_ping=True)
            self._identity = ("postgresql", parsed.render_as_string(hide_password=True))
        else:
            raise ValueError(
                f"url: the store supports SQLite and PostgreSQL, got the "
                f"{backend!r} database of {url!r}."
            )
        self.display_url = parsed.render_as_string(hide_password=True)
        try:
            self._prepare_schema()
        except DatabaseError as exc:
            self.engine.dispose()
            raise StoreError(
                f"cannot open the store {self.display_url}: {exc.orig}"
            ) from exc

    # ------------------------------------------------------------------ #
    # schema
    # ------------------------------------------------------------------ #
    def _prepare_schema(self):
        for attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    self._create_or_upgrade(conn)
                return
            except (IntegrityError, ProgrammingError, OperationalError):
                # Another process created the tables at the same moment.
                if attempt == 2:
                    raise
                time.sleep(0.1 * (attempt + 1))

    def _create_or_upgrade(self, conn):
        if not inspect(conn).has_table(schema.schema_version.name):
            schema.metadata.create_all(conn)
            conn.execute(
                schema.schema_version.insert().values(
                    version=schema.SCHEMA_VERSION, applied_at=time.time()
                )
            )
            return
        version = conn.execute(select(func.max(schema.schema_version.c.version)))
        version = version.scalar()
        if version is None:
            raise StoreError(
                f"store {self.display_url}: skrbal_schema_version is empty; the "
                "store is damaged or not a skrbal store."
            )
        if version > schema.SCHEMA_VERSION:
            raise StoreError(
                f"store {self.display_url} has schema version {version}, newer "
                f"than this skrbal's {schema.SCHEMA_VERSION}: upgrade skrbal to "
                "use it."
            )
        if version < schema.SCHEMA_VERSION and conn.dialect.name == "sqlite":
            # The sqlite3 module opens a transaction only before a DML
            # statement, so a migration's first CREATE or ALTER would commit
            # on its own; an explicit one keeps the migration all or nothing
            # (and IMMEDIATE keeps a second process from migrating too).
            if not conn.connection.dbapi_connection.in_transaction:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
        while version < schema.SCHEMA_VERSION:
            schema.MIGRATIONS[version](conn)
            version += 1
            conn.execute(
                schema.schema_version.insert().values(
                    version=version, applied_at=time.time()
                )
            )

    @property
    def schema_version(self) -> int:
        """Schema version of the store (equal to the code's once opened)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.max(schema.schema_version.c.version))
            ).scalar()

    # ------------------------------------------------------------------ #
    # reading (no lock)
    # ------------------------------------------------------------------ #
    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted.

        Returns
        -------
        names : list of str
        """
        with self.engine.connect() as conn:
            rows = conn.execute(select(schema.agents.c.name).order_by("name"))
            return [row.name for row in rows]

    def _agent_row(self, conn, name):
        row = conn.execute(
            select(schema.agents).where(schema.agents.c.name == name)
        ).first()
        if row is None:
            known = self.agent_names()
            raise StoreError(
                f"store {self.display_url} has no agent named {name!r}; it "
                f"holds {known}."
            )
        return row

    def _owner_of(self, agent_id):
        with self.engine.connect() as conn:
            return conn.execute(
                select(schema.agents.c.owner).where(
                    schema.agents.c.agent_id == agent_id
                )
            ).scalar()

    def history(self, name: str) -> pd.DataFrame:
        """Every step of an agent: observation, belief, EVPI, request, action.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        history : DataFrame
            One row per step (commissioning samples first): ``step``,
            ``kind``, ``timestamp``, ``evpi``, ``belief_<label>`` per state,
            ``request_id`` and ``request_status`` (``open``, ``done``,
            ``cancelled``, missing without a request), ``label`` (once known),
            ``recommended_action`` (under the belief, or the optimal action
            for a commissioning label), ``action`` (the action taken: the one
            the user recorded, else the optimal one for the inspected state,
            else the recommended one), for an agent with inspection methods
            ``method``, ``report`` and ``posterior_<label>`` of each request
            with a result (``label`` stays missing after a report that leaves
            the state uncertain), and ``feature_<j>``.
        """
        req_, act = schema.requests, schema.actions
        with self.engine.connect() as conn:
            agent = self._agent_row(conn, name)
            classes = _process_classes(agent)
            frame, beliefs, features = self._steps(conn, agent, classes.size)
            req = _frame(
                conn,
                select(
                    req_.c.step,
                    req_.c.status.label("request_status"),
                    req_.c.action.label("result_action"),
                    req_.c.label.label("result_label"),
                    req_.c.method,
                    req_.c.report,
                    req_.c.posterior,
                ).where(req_.c.agent_id == agent.agent_id),
            )
            taken = _frame(
                conn,
                select(act.c.step, act.c.action.label("taken_action")).where(
                    act.c.agent_id == agent.agent_id
                ),
            )
        # Steps are unique in both: left merges keep the order and length.
        frame = frame.merge(req, on="step", how="left")
        frame = frame.merge(taken, on="step", how="left")
        out = pd.DataFrame(
            {
                "step": frame["step"],
                "kind": frame["kind"],
                "timestamp": frame["timestamp"],
                "evpi": frame["evpi"],
            }
        )
        for j, label in enumerate(classes.tolist()):
            out[f"belief_{label}"] = beliefs[:, j]
        out["request_id"] = frame["request_id"].astype("Int64")
        out["request_status"] = frame["request_status"]
        observed = (frame["kind"] == "observation").to_numpy()
        labels = frame["label"].where(~observed, frame["result_label"])
        out["label"] = _json_column(labels)
        out["recommended_action"] = frame["action"].astype(int)
        taken = frame["taken_action"].astype("Int64")
        result = frame["result_action"].astype("Int64")
        out["action"] = taken.fillna(result).fillna(out["recommended_action"])
        out["action"] = out["action"].astype(int)
        if _inspections(agent) is not None:
            _report_columns(out, frame, classes)
        names = json.loads(agent.feature_names) if agent.feature_names else None
        for j in range(agent.n_features):
            out[f"feature_{names[j] if names else j}"] = (
                features[:, j] if len(frame) else []
            )
        return out

    def _steps(self, conn, agent, n_states: int):
        """Every step of an agent: a frame of scalars, beliefs and features.

        The frame has ``step``, ``kind``, ``timestamp``, ``evpi``, ``action``
        (recommended), ``request_id`` (NaN without) and ``label`` (JSON text
        of a commissioning label, None for an observation).
        """
        obs = schema.observations
        com = conn.execute(
            select(
                obs.c.step,
                obs.c.timestamp,
                obs.c.evpi,
                obs.c.action,
                obs.c.label,
                obs.c.features,
            )
            .where(obs.c.agent_id == agent.agent_id)
            .order_by(obs.c.step)
        ).all()
        blocks = unpack_blocks(
            self._block_rows(conn, agent.agent_id), agent.n_features, n_states
        )
        n0, n1 = len(com), blocks["step"].size
        c_step, c_features, c_action = _commissioning(com, agent.n_features)
        c_stamp = [np.nan if r.timestamp is None else r.timestamp for r in com]
        c_evpi = np.array([r.evpi for r in com], dtype=np.float64)
        ids = blocks["request_id"]
        frame = pd.DataFrame(
            {
                "step": np.concatenate([c_step, blocks["step"]]),
                "kind": ["commissioning"] * n0 + ["observation"] * n1,
                "timestamp": np.concatenate(
                    [np.array(c_stamp, dtype=np.float64), blocks["timestamp"]]
                ),
                "evpi": np.concatenate([c_evpi, blocks["evpi"]]),
                "action": np.concatenate([c_action, blocks["action"]]),
                "request_id": np.concatenate(
                    [np.full(n0, np.nan), np.where(ids > 0, ids, np.nan)]
                ),
                "label": [r.label for r in com] + [None] * n1,
            }
        )
        beliefs = np.vstack([np.full((n0, n_states), np.nan), blocks["belief"]])
        features = np.vstack([c_features, blocks["features"]])
        return frame, beliefs, features

    @staticmethod
    def _block_rows(conn, agent_id: int):
        """The block rows of an agent in step order."""
        b = schema.blocks
        query = select(b).where(b.c.agent_id == agent_id)
        return conn.execute(query.order_by(b.c.first_step)).all()

    def requests(self, name: str) -> pd.DataFrame:
        """Every inspection request of an agent, in the order they were made.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        requests : DataFrame
            ``request_id``, ``step``, ``status`` (``open``, ``done``,
            ``cancelled``), ``evpi``, ``label`` and ``action`` (the optimal
            action for the inspected state) once done, ``result_timestamp``
            and ``note`` (the reason given for a cancellation); for an agent
            with inspection methods also ``method``, ``report`` and
            ``posterior_<label>``.
        """
        with self.engine.connect() as conn:
            agent = self._agent_row(conn, name)
            frame = _frame(
                conn,
                select(
                    schema.requests.c.request_id,
                    schema.requests.c.step,
                    schema.requests.c.status,
                    schema.requests.c.evpi,
                    schema.requests.c.label,
                    schema.requests.c.action,
                    schema.requests.c.result_timestamp,
                    schema.requests.c.note,
                    schema.requests.c.method,
                    schema.requests.c.report,
                    schema.requests.c.posterior,
                )
                .where(schema.requests.c.agent_id == agent.agent_id)
                .order_by(schema.requests.c.request_id),
            )
        frame["label"] = _json_column(frame["label"])
        frame["action"] = frame["action"].astype("Int64")
        if _inspections(agent) is None:
            return frame.drop(columns=["method", "report", "posterior"])
        _report_columns(frame, frame, _process_classes(agent))
        return frame.drop(columns=["posterior"])

    def configuration(self, name: str) -> dict:
        """How an agent was set up, as stored (JSON values).

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        configuration : dict
            ``process`` (:meth:`skrbal.DecisionProcess.to_dict`), ``estimator`` and
            ``budget`` (their JSON descriptions: class and parameters),
            ``settings`` (``semi_supervised``, ``update``, ``em_start``,
            ``initial_state``, ``max_open_requests``), ``n_features``,
            ``feature_names``, ``created_at`` and ``skrbal_version``.
        """
        with self.engine.connect() as conn:
            agent = self._agent_row(conn, name)
        return {
            "process": json.loads(agent.process),
            "estimator": json.loads(agent.estimator),
            "budget": json.loads(agent.budget),
            "settings": json.loads(agent.settings),
            "n_features": agent.n_features,
            "feature_names": (
                json.loads(agent.feature_names) if agent.feature_names else None
            ),
            "created_at": agent.created_at,
            "skrbal_version": agent.skrbal_version,
        }

    def events(self, name: str) -> pd.DataFrame:
        """The agent's log: every call that changed it, in order.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        events : DataFrame
            ``seq`` (1, 2, ...), ``kind`` (``commission``, ``observe``,
            ``result``, ``cancel``, ``action``), ``step`` (the first step of
            an ``observe``), ``request_id``, ``payload`` (dict: the budget
            state after an ``observe``, the label of a ``result``, the
            warnings its fit issued, ...) and ``created_at`` (wall-clock
            seconds).
        """
        ev = schema.events
        with self.engine.connect() as conn:
            agent = self._agent_row(conn, name)
            frame = _frame(
                conn,
                select(
                    ev.c.seq,
                    ev.c.kind,
                    ev.c.step,
                    ev.c.request_id,
                    ev.c.payload,
                    ev.c.created_at,
                )
                .where(ev.c.agent_id == agent.agent_id)
                .order_by(ev.c.seq),
            )
        frame["payload"] = _json_column(frame["payload"])
        frame["request_id"] = frame["request_id"].astype("Int64")
        return frame

    def status(self, name: str) -> dict:
        """Counts, spend, open requests and labelled set of an agent.

        Parameters
        ----------
        name : str
            The agent.

        Returns
        -------
        status : dict
            ``name``, ``n_commissioning``, ``n_observations``, ``n_requests``,
            ``n_open``, ``n_results``, ``n_cancelled``, ``inspection_cost``,
            ``spend`` (cost of the inspections with a result),
            ``committed_spend`` (including the open requests),
            ``open_requests`` (list of dicts: ``request_id``, ``step``,
            ``evpi``, ``timestamp``), ``labelled`` (dict label -> number of
            known labels, commissioning included), ``last_evpi`` (of the last
            observation, ``None`` before any), ``budget_state`` and
            ``clock`` (``'step'`` or ``'timestamp'``: the budget's time, set
            at commissioning). For an agent with inspection methods,
            ``spend`` and ``committed_spend`` price each request at its
            method's cost, and ``n_inspections_by_method`` and
            ``spend_by_method`` split the results by method, as
            :func:`~skrbal.metrics.campaign_summary` does with ``methods``.
        """
        obs, req, b = schema.observations, schema.requests, schema.blocks
        with self.engine.connect() as conn:
            agent = self._agent_row(conn, name)
            aid = agent.agent_id
            n_commissioning = conn.execute(
                select(func.count()).select_from(obs).where(obs.c.agent_id == aid)
            ).scalar()
            n_observations = conn.execute(
                select(func.coalesce(func.sum(b.c.n_steps), 0)).where(
                    b.c.agent_id == aid
                )
            ).scalar()
            by_method = conn.execute(
                select(req.c.method, req.c.status, func.count())
                .where(req.c.agent_id == aid)
                .group_by(req.c.method, req.c.status)
            ).all()
            open_rows = conn.execute(
                select(req.c.request_id, req.c.step, req.c.evpi)
                .where((req.c.agent_id == aid) & (req.c.status == "open"))
                .order_by(req.c.step)
            ).all()
            stamps = read_steps(
                conn,
                agent,
                [r.step for r in open_rows],
                ("timestamp",),
                _process_classes(agent).size,
            )["timestamp"]
            labels = (
                conn.execute(
                    select(obs.c.label, func.count())
                    .where((obs.c.agent_id == aid) & obs.c.label.is_not(None))
                    .group_by(obs.c.label)
                ).all()
                + conn.execute(
                    select(req.c.label, func.count())
                    .where((req.c.agent_id == aid) & req.c.label.is_not(None))
                    .group_by(req.c.label)
                ).all()
            )
            last_evpi = _last_of_block(conn, aid, ("evpi",))
            last_evpi = None if last_evpi is None else last_evpi[0]
        cost = float(_process(agent).inspection_cost)
        statuses = {}
        for _, status, n in by_method:
            statuses[status] = statuses.get(status, 0) + n
        n_open, n_done = statuses.get("open", 0), statuses.get("done", 0)
        classes = _process_classes(agent).tolist()
        counts = {}  # commissioning labels and inspection results
        for text_, n in labels:
            label = json.loads(text_)
            counts[label] = counts.get(label, 0) + n
        methods = _inspections(agent)
        by_method_status = {}
        if methods is not None:
            costs = {m["name"]: float(m["cost"]) for m in methods}
            done = {name: 0 for name in costs}
            opened = dict(done)
            for name, status, n in by_method:
                if status == "done":
                    done[name] += n
                elif status == "open":
                    opened[name] += n
            spends = {name: done[name] * costs[name] for name in costs}
            spend = fsum(spends.values())
            committed = fsum((done[n] + opened[n]) * costs[n] for n in costs)
            by_method_status = {
                "n_inspections_by_method": done,
                "spend_by_method": spends,
            }
        else:
            spend, committed = cost * n_done, cost * (n_done + n_open)
        return {
            "name": agent.name,
            "n_commissioning": n_commissioning,
            "n_observations": int(n_observations),
            "n_requests": sum(statuses.values()),
            "n_open": n_open,
            "n_results": n_done,
            "n_cancelled": statuses.get("cancelled", 0),
            "inspection_cost": cost,
            "spend": spend,
            "committed_spend": committed,
            "open_requests": sorted(
                (
                    {
                        "request_id": r.request_id,
                        "step": r.step,
                        "evpi": r.evpi,
                        "timestamp": None if np.isnan(stamp) else float(stamp),
                    }
                    for r, stamp in zip(open_rows, stamps)
                ),
                key=lambda r: r["request_id"],
            ),
            "labelled": {c: counts.get(c, 0) for c in classes},
            "last_evpi": last_evpi,
            "budget_state": json.loads(agent.budget_state),
            "clock": agent.clock,
            **by_method_status,
        }

    # ------------------------------------------------------------------ #
    # writing (by a RiskBasedAgent holding the agent's lock)
    # ------------------------------------------------------------------ #
    @contextmanager
    def _transaction(self, agent_id: int, seq: int, **values):
        """One transaction moving the agent from event ``seq`` to ``seq + 1``.

        The agent's ``last_seq`` must still be ``seq`` (a lost update is
        refused); ``values`` update the agent's row in the same statement.
        """
        agents = schema.agents
        with self.engine.begin() as conn:
            # Values as execution parameters, not in the statement: its
            # compiled form is cached, which matters at one call per step.
            moved = conn.execute(
                update(agents).where(
                    (agents.c.agent_id == bindparam("w_agent_id"))
                    & (agents.c.last_seq == bindparam("w_seq"))
                ),
                {"w_agent_id": agent_id, "w_seq": seq, "last_seq": seq + 1, **values},
            )
            if moved.rowcount != 1:
                raise StoreError(
                    f"store {self.display_url}: agent {agent_id} was changed by "
                    "another writer since it was loaded; reopen it."
                )
            yield conn

    def _create_agent(
        self, agent_row: dict, commission_rows: list, warnings: list
    ) -> int:
        """Insert a new agent and its commissioning steps; return its id."""
        with self.engine.begin() as conn:
            exists = conn.execute(
                select(schema.agents.c.agent_id).where(
                    schema.agents.c.name == agent_row["name"]
                )
            ).first()
            if exists is not None:
                raise StoreError(
                    f"store {self.display_url} already has an agent named "
                    f"{agent_row['name']!r}: resume it with "
                    "RiskBasedAgent.from_store(), or choose another name."
                )
            agent_id = conn.execute(
                insert(schema.agents).values(**agent_row)
            ).inserted_primary_key[0]
            conn.execute(
                insert(schema.observations),
                [{**row, "agent_id": agent_id} for row in commission_rows],
            )
            self._insert_event(
                conn,
                agent_id,
                1,
                "commission",
                0,
                None,
                {"n": len(commission_rows), "warnings": warnings},
            )
        return agent_id

    def _load(self, conn, agent, every_step: bool = True):
        """Steps (commissioning first) and the result and action events.

        Without ``every_step``, only the commissioning steps and the steps
        with a request that was not cancelled. The steps are a dict of
        ``step``, ``n_commissioning``, ``features``, ``labels`` (JSON text
        of the commissioning labels) and ``action`` (recommended). The
        observed steps are read a block at a time, only their features and
        actions; of the events only those that change the model.
        """
        obs, req, b = schema.observations, schema.requests, schema.blocks
        aid = agent.agent_id
        com = conn.execute(
            select(obs.c.step, obs.c.features, obs.c.label, obs.c.action)
            .where(obs.c.agent_id == aid)
            .order_by(obs.c.step)
        ).all()
        if every_step:
            firsts, sizes = _int_columns(
                conn,
                select(b.c.first_step, b.c.n_steps)
                .where(b.c.agent_id == aid)
                .order_by(b.c.first_step),
                2,
            )
            steps = (
                np.concatenate([np.arange(f, f + n) for f, n in zip(firsts, sizes)])
                if firsts.size
                else np.empty(0, np.int64)
            )
        else:
            live = (req.c.agent_id == aid) & (req.c.status != "cancelled")
            steps = np.sort(_int_columns(conn, select(req.c.step).where(live), 1)[0])
        n_states = _process_classes(agent).size
        seen = read_steps(conn, agent, steps, ("features", "action"), n_states)
        c_step, c_features, c_action = _commissioning(com, agent.n_features)
        steps = {
            "step": np.concatenate([c_step, steps]),
            "n_commissioning": len(com),
            "features": np.vstack([c_features, seen["features"]]),
            "labels": [r.label for r in com],
            "action": np.concatenate([c_action, seen["action"]]),
        }
        events = conn.execute(
            select(schema.events)
            .where(
                (schema.events.c.agent_id == aid)
                & schema.events.c.kind.in_(("result", "action"))
            )
            .order_by(schema.events.c.seq)
        ).all()
        return steps, events

    def _last_observation(self, conn, agent_id: int):
        """The time of the last step and the EVPI of the last observation."""
        last = _last_of_block(conn, agent_id, ("time", "evpi"))
        if last is not None:
            return last
        obs = schema.observations
        time_ = conn.execute(
            select(obs.c.time)
            .where(obs.c.agent_id == agent_id)
            .order_by(obs.c.step.desc())
            .limit(1)
        ).scalar()
        return time_, None

    def _requests_of(self, agent):
        """Each request's id, step, status, method and belief (open ones).

        A list of tuples ``(request_id, step, status, method, belief)``,
        ``belief`` an array for an open request, None otherwise; the beliefs
        are read a block at a time.
        """
        req = schema.requests
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(req.c.request_id, req.c.step, req.c.status, req.c.method)
                .where(req.c.agent_id == agent.agent_id)
                .order_by(req.c.step)
            ).all()
            opened = [r for r in rows if r.status == "open"]
            beliefs = read_steps(
                conn,
                agent,
                [r.step for r in opened],
                ("belief",),
                _process_classes(agent).size,
            )["belief"]
        belief_of = {r.request_id: b for r, b in zip(opened, beliefs)}
        return [
            (r.request_id, r.step, r.status, r.method, belief_of.get(r.request_id))
            for r in rows
        ]

    @staticmethod
    def _insert_event(conn, agent_id, seq, kind, step, request_id, payload):
        conn.execute(
            insert(schema.events),
            {
                "agent_id": agent_id,
                "seq": seq,
                "kind": kind,
                "step": step,
                "request_id": request_id,
                "payload": json.dumps(payload),
                "created_at": time.time(),
            },
        )

    def _write_observe(self, agent_id, seq, block, request_rows, agent_values, payload):
        """Commit a block of observations, its requests and the counters."""
        with self._transaction(agent_id, seq, **agent_values) as conn:
            conn.execute(insert(schema.blocks), block)
            if request_rows:
                conn.execute(insert(schema.requests), request_rows)
            self._insert_event(
                conn, agent_id, seq + 1, "observe", block["first_step"], None, payload
            )

    def _write_result(
        self,
        agent_id,
        seq,
        request_id,
        step,
        label,
        action,
        stamp,
        warnings,
        *,
        report=None,
        posterior=None,
    ):
        """Commit an inspection result (``label``, ``report`` as JSON text).

        ``label`` is None for a report that leaves the state uncertain;
        ``posterior`` (a list of floats) is given with inspection methods.
        """
        req = schema.requests
        with self._transaction(agent_id, seq) as conn:
            conn.execute(
                update(req)
                .where((req.c.agent_id == agent_id) & (req.c.request_id == request_id))
                .values(
                    status="done",
                    closed_seq=seq + 1,
                    label=label,
                    action=action,
                    result_timestamp=stamp,
                    report=report,
                    posterior=None if posterior is None else json.dumps(posterior),
                )
            )
            payload = {
                "label": None if label is None else json.loads(label),
                "warnings": warnings,
            }
            if posterior is not None:
                payload["report"] = None if report is None else json.loads(report)
                payload["posterior"] = posterior
            self._insert_event(
                conn, agent_id, seq + 1, "result", step, request_id, payload
            )

    def _write_cancel(self, agent_id, seq, request_id, step, reason):
        """Commit the cancellation of a request."""
        req = schema.requests
        with self._transaction(agent_id, seq) as conn:
            conn.execute(
                update(req)
                .where((req.c.agent_id == agent_id) & (req.c.request_id == request_id))
                .values(status="cancelled", closed_seq=seq + 1, note=reason)
            )
            self._insert_event(
                conn, agent_id, seq + 1, "cancel", step, request_id, {"reason": reason}
            )

    def _write_action(self, agent_id, seq, step, action):
        """Commit the action the user took at a step."""
        act = schema.actions
        with self._transaction(agent_id, seq) as conn:
            conn.execute(
                delete(act).where((act.c.agent_id == agent_id) & (act.c.step == step))
            )
            conn.execute(
                insert(act).values(agent_id=agent_id, step=step, action=action)
            )
            self._insert_event(
                conn, agent_id, seq + 1, "action", step, None, {"action": action}
            )

    def _mark_owner(self, agent_id: int) -> None:
        owner = f"pid {os.getpid()} on {socket.gethostname()} since {time.ctime()}"
        with self.engine.begin() as conn:
            conn.execute(
                update(schema.agents)
                .where(schema.agents.c.agent_id == agent_id)
                .values(owner=owner)
            )

    def close(self) -> None:
        """Close the store's connections."""
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __deepcopy__(self, memo):
        # A store is a handle on a database, like a path: copies (sklearn's
        # clone of an agent, say) share it rather than open a second pool.
        return self

    def __repr__(self):
        return f"AgentStore({self.display_url!r})"


def _frame(conn, query) -> pd.DataFrame:
    """The rows of a query as a DataFrame; numeric columns with NULLs as NaN."""
    result = conn.execute(query)
    columns = list(result.keys())
    frame = pd.DataFrame(result.all(), columns=columns)
    for column in query.selected_columns:
        kind = column.type.python_type if hasattr(column.type, "python_type") else None
        if kind in (int, float):
            frame[column.name] = pd.to_numeric(frame[column.name])
    return frame


def _commissioning(rows, n_features: int):
    """Step, features and recommended action arrays of commissioning rows."""
    step = np.array([r.step for r in rows], dtype=np.int64)
    features = np.array([json.loads(r.features) for r in rows], dtype=np.float64)
    action = np.array([r.action for r in rows], dtype=np.int64)
    return step, features.reshape(len(rows), n_features), action


def _last_of_block(conn, agent_id: int, columns) -> tuple | None:
    """The last step's value of some ``<f8`` columns of an agent's blocks.

    Only the last 8 bytes of each are read (None without blocks).
    """
    b = schema.blocks
    row = conn.execute(
        select(*(func.substr(b.c[c], b.c.n_steps * 8 - 7, 8) for c in columns))
        .where(b.c.agent_id == agent_id)
        .order_by(b.c.first_step.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return tuple(float(np.frombuffer(bytes(v), dtype="<f8")[0]) for v in row)


# Steps of small blocks read in one query; a larger block is read alone.
_CHUNK_STEPS = 65_536
_CHUNK_BLOCKS = 500


def _int_columns(conn, query, n_columns: int) -> list:
    """The integer columns of a query as arrays, read in bounded chunks."""
    parts = [[] for _ in range(n_columns)]
    result = conn.execution_options(yield_per=10_000).execute(query)
    for chunk in result.partitions():
        for j, values in enumerate(zip(*chunk)):
            parts[j].append(np.asarray(values, dtype=np.int64))
    return [np.concatenate(p) if p else np.empty(0, np.int64) for p in parts]


def read_steps(conn, agent, steps, columns, n_states: int) -> dict:
    """Per-step columns of some observed steps, reading one block at a time.

    ``steps`` (ascending) must be observed steps (not commissioning ones);
    the result maps each of ``columns`` to the values of those steps, in
    that order. Only the asked columns of the blocks holding those steps are
    read, a block (or a chunk of small blocks) at a time, so the memory it
    takes is that of the result and one block, however many steps a block
    holds.
    """
    b = schema.blocks
    steps = np.asarray(steps, dtype=np.int64)
    out = {column: [] for column in columns}
    firsts, sizes = _int_columns(
        conn,
        select(b.c.first_step, b.c.n_steps)
        .where(b.c.agent_id == agent.agent_id)
        .order_by(b.c.first_step),
        2,
    )
    at = np.searchsorted(firsts, steps, side="right") - 1
    lost = (at < 0) | (steps >= firsts[at] + sizes[at]) if firsts.size else steps >= 0
    if lost.any():
        raise StoreError(
            f"agent {agent.name!r}: step {int(steps[lost][0])} is in no block of "
            f"table {b.name}; the store is damaged."
        )
    wanted = np.unique(at)
    start = 0
    while start < wanted.size:
        stop = start + 1
        total = sizes[wanted[start]]
        while (
            stop < wanted.size
            and stop - start < _CHUNK_BLOCKS
            and total + sizes[wanted[stop]] <= _CHUNK_STEPS
        ):
            total += sizes[wanted[stop]]
            stop += 1
        rows = conn.execute(
            select(b.c.first_step, b.c.n_steps, *(b.c[c] for c in columns))
            .where(
                (b.c.agent_id == agent.agent_id)
                & b.c.first_step.in_(firsts[wanted[start:stop]].tolist())
            )
            .order_by(b.c.first_step)
        )
        for row in rows:
            k = np.searchsorted(firsts, row.first_step)
            lo, hi = np.searchsorted(at, [k, k + 1])
            offsets = steps[lo:hi] - row.first_step
            for column in columns:
                if getattr(row, column) is None:  # a block without timestamps
                    out[column].append(np.full(offsets.size, np.nan))
                    continue
                try:
                    values = rows_of_block(
                        row, column, offsets, agent.n_features, n_states
                    )
                except ValueError as exc:
                    raise StoreError(
                        f"agent {agent.name!r}, table {b.name}: {exc}"
                    ) from None
                out[column].append(values)
        start = stop
    empty = {"features": (0, agent.n_features), "belief": (0, n_states)}
    return {
        column: (
            np.concatenate(parts)
            if parts
            else np.empty(
                empty.get(column, 0),
                dtype=np.int64 if column in ("action", "request_id") else np.float64,
            )
        )
        for column, parts in out.items()
    }


def _json_column(column) -> list:
    """JSON text per row, missing values (None or NaN) as None."""
    # Most history rows (observations without a result) are missing: decode
    # only the known ones rather than looping over every step.
    out = [None] * len(column)
    values = column.to_numpy()
    for i in np.flatnonzero(column.notna().to_numpy()):
        out[i] = json.loads(values[i])
    return out


def _process(agent_row):
    return process_from_json(agent_row.process)


def _process_classes(agent_row) -> np.ndarray:
    return _process(agent_row).classes_


def _inspections(agent_row) -> list | None:
    """The agent's inspection methods as stored (plain JSON), or None."""
    return json.loads(agent_row.settings).get("inspections")


def _report_columns(out, frame, classes) -> None:
    """``method``, ``report`` and ``posterior_<label>`` from request rows."""
    out["method"] = [None if pd.isna(m) else m for m in frame["method"]]
    out["report"] = _json_column(frame["report"])
    posterior = np.full((len(frame), classes.size), np.nan)
    known = frame["posterior"].notna().to_numpy()
    if known.any():
        posterior[known] = [json.loads(p) for p in frame["posterior"][known]]
    for j, label in enumerate(classes.tolist()):
        out[f"posterior_{label}"] = posterior[:, j]
