"""An agent's status and configuration: SQL text that any connection runs.

``skrbal agent status`` is called every minute by dashboards and cron jobs,
and importing SQLAlchemy was most of its start-up. So the queries of a
status are plain SQL (portable between SQLite and PostgreSQL, with
``:name`` parameters), run by :class:`AgentSummary` through a ``rows``
function: the store's SQLAlchemy connection (``text()``) for every backend,
and for a SQLite file the standard library's ``sqlite3`` on the command's
fast path (:func:`sqlite_summary`). One set of queries, two drivers.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import struct
from contextlib import closing, contextmanager
from types import SimpleNamespace
from urllib.parse import quote

from skrbal.online._records import SkippedRow
from skrbal.online._spend import inspection_spend, routine_spend
from skrbal.online._sql._version import SCHEMA_VERSION
from skrbal.online._storage import StoreError

__all__ = ["AgentSummary", "cost_and_classes", "sqlite_summary", "stored_inspections"]

# The agent's columns a summary reads (``skrbal_agents``).
_AGENT_COLUMNS = (
    "agent_id",
    "name",
    "created_at",
    "skrbal_version",
    "process",
    "estimator",
    "budget",
    "settings",
    "n_features",
    "feature_names",
    "clock",
    "budget_state",
)
_AGENT = f"SELECT {', '.join(_AGENT_COLUMNS)} FROM skrbal_agents WHERE name = :name"
_COUNT_COMMISSIONING = (
    "SELECT count(*) FROM skrbal_observations WHERE agent_id = :agent"
)
_COUNT_OBSERVED = (
    "SELECT coalesce(sum(n_steps), 0) FROM skrbal_blocks WHERE agent_id = :agent"
)
_REQUESTS_BY_METHOD = (
    "SELECT method, status, origin, count(*) FROM skrbal_requests "
    "WHERE agent_id = :agent GROUP BY method, status, origin"
)
_LABELS = (
    "SELECT label, count(*) FROM skrbal_observations "
    "WHERE agent_id = :agent AND label IS NOT NULL GROUP BY label "
    "UNION ALL "
    "SELECT label, count(*) FROM skrbal_requests "
    "WHERE agent_id = :agent AND label IS NOT NULL GROUP BY label"
)
_SKIPPED = (
    "SELECT payload FROM skrbal_events WHERE agent_id = :agent "
    "AND kind IN ('observe', 'skip') AND payload LIKE :skipped"
)
_REQUESTS_IN = (
    "SELECT request_id, step, method FROM skrbal_requests "
    "WHERE agent_id = :agent AND status = :status ORDER BY request_id"
)
# The per-step columns ``last_of_block`` and ``requests_with`` may cut.
_F8_COLUMNS = ("timestamp", "time", "evpi")


def cost_and_classes(row) -> tuple[float, list]:
    """The inspection cost and the states of an agent's process, as stored.

    Read from the JSON without building the process, which would import
    scikit-learn (a second of ``skrbal agent status``); a description that
    does not read plainly is validated in full, so damage still raises.
    """
    description = json.loads(row.process)
    cost, classes = description.get("inspection_cost"), description.get("classes")
    plain = (
        isinstance(cost, (int, float))
        and not isinstance(cost, bool)
        and math.isfinite(cost)
        and cost >= 0
        and isinstance(classes, list)
        and len(classes) > 0
        and len({type(c) for c in classes}) == 1
        and type(classes[0]) in (int, str)
        and len(set(classes)) == len(classes)
    )
    if not plain:
        from skrbal.online._config import process_from_json

        process = process_from_json(row.process)
        return float(process.inspection_cost), process.classes_.tolist()
    return float(cost), classes


def stored_inspections(row) -> list | None:
    """The agent's inspection methods as stored (plain JSON), or None."""
    return json.loads(row.settings).get("inspections")


def _f8_column(column: str) -> str:
    if column not in _F8_COLUMNS:
        raise ValueError(f"{column!r} is not one of the blocks' {_F8_COLUMNS}")
    return f'b."{column}"'


def last_of_block(rows, agent_id: int, columns) -> tuple | None:
    """The last step's value of some ``<f8`` columns of an agent's blocks.

    Only the last 8 bytes of each are read (None without blocks). ``rows``
    runs a query, as :class:`AgentSummary` takes it.
    """
    cut = ", ".join(f"substr({_f8_column(c)}, b.n_steps * 8 - 7, 8)" for c in columns)
    found = rows(
        f"SELECT {cut} FROM skrbal_blocks b WHERE b.agent_id = :agent "
        "ORDER BY b.first_step DESC LIMIT 1",
        {"agent": agent_id},
    )
    if not found:
        return None
    return tuple(struct.unpack("<d", bytes(v))[0] for v in found[0])


def requests_with(rows, agent, status: str, column: str) -> list:
    """An agent's requests of a status, each with a block column at its step.

    ``(request_id, step, evpi, value)`` in the order of the steps, ``value``
    being the ``<f8`` column's value at the request's step, or None where its
    block has no such column (no timestamps). The database cuts the 8 bytes
    out of each block, so no block is read whole and numpy is not needed.
    """
    found = rows(
        "SELECT r.request_id, r.step, r.evpi, b.first_step, "
        f"substr({_f8_column(column)}, (r.step - b.first_step) * 8 + 1, 8) "
        "FROM skrbal_requests r LEFT OUTER JOIN skrbal_blocks b "
        "ON b.agent_id = r.agent_id AND b.first_step <= r.step "
        "AND r.step < b.first_step + b.n_steps "
        "WHERE r.agent_id = :agent AND r.status = :status ORDER BY r.step",
        {"agent": agent.agent_id, "status": status},
    )
    out = []
    for request_id, step, evpi, first_step, value in found:
        if first_step is None:
            raise StoreError(
                f"agent {agent.name!r}: step {step} is in no block of "
                "table skrbal_blocks; the store is damaged."
            )
        value = None if value is None else bytes(value)
        if value is not None and len(value) != 8:
            raise StoreError(
                f"agent {agent.name!r}, table skrbal_blocks: the block of steps "
                f"{first_step}.. holds no {column!r} for step {step}: the "
                "store is damaged."
            )
        stored = None if value is None else struct.unpack("<d", value)[0]
        out.append((request_id, step, evpi, stored))
    return out


def n_skipped(rows, agent_id: int) -> int:
    """The rows an agent's ``observe`` calls skipped for a missing value.

    They are listed in the payload of the call's ``observe`` event, which
    only events of calls that skipped rows name, or of a ``skip`` event for
    rows after the last decided row.
    """
    payloads = rows(_SKIPPED, {"agent": agent_id, "skipped": '%"skipped"%'})
    try:
        return sum(
            len(SkippedRow.from_payload(json.loads(text).get("skipped", [])))
            for (text,) in payloads
        )
    except (ValueError, AttributeError):
        raise StoreError(
            "table skrbal_events: an observe event's list of skipped rows is not "
            "the store's (edited or damaged); run verify to find it"
        ) from None


class AgentSummary:
    """The status and configuration of the agents of one store, read by SQL.

    Parameters
    ----------
    rows : callable
        ``rows(sql, parameters)``: the rows (sequences) a query gives, its
        parameters named ``:name``.
    display_url : str
        The store's URL, password hidden (for messages).

    Examples
    --------
    >>> from sqlalchemy import text
    >>> from skrbal.online import AgentStore
    >>> from skrbal.online._sql._summary import AgentSummary
    >>> with AgentStore(":memory:") as store, store.engine.connect() as conn:
    ...     run = lambda sql, parameters: conn.execute(text(sql), parameters).all()
    ...     AgentSummary(run, store.display_url).agent_names()
    []
    """

    def __init__(self, rows, display_url: str):
        self.rows, self.display_url = rows, display_url

    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted."""
        return [name for (name,) in self.rows(
            "SELECT name FROM skrbal_agents ORDER BY name", {}
        )]  # fmt: skip

    def agent(self, name: str) -> SimpleNamespace:
        """The columns of ``_AGENT_COLUMNS`` of an agent, by name."""
        # A name no agent can have (see check_params) is not sent to the
        # database: PostgreSQL would refuse a NUL in text with its own error.
        usable = isinstance(name, str) and "\x00" not in name
        found = self.rows(_AGENT, {"name": name}) if usable else []
        if not found:
            raise StoreError(
                f"store {self.display_url} has no agent named {name!r}; "
                f"it holds {self.agent_names()}."
            )
        return SimpleNamespace(**dict(zip(_AGENT_COLUMNS, found[0])))

    def configuration(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.configuration`."""
        agent = self.agent(name)
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

    def requests_in(self, name: str, status: str) -> list[tuple]:
        """``(request_id, step, method)`` of an agent's requests of a status.

        In the order they were made; ``method`` is None for the process's
        perfect inspection (and for every request of an agent without
        inspection methods).
        """
        agent = self.agent(name)
        return [
            tuple(row)
            for row in self.rows(
                _REQUESTS_IN, {"agent": agent.agent_id, "status": status}
            )
        ]

    def status(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.status`."""
        agent = self.agent(name)
        cost, classes = cost_and_classes(agent)
        aid = {"agent": agent.agent_id}
        ((n_commissioning,),) = self.rows(_COUNT_COMMISSIONING, aid)
        ((n_observations,),) = self.rows(_COUNT_OBSERVED, aid)
        by_method = self.rows(_REQUESTS_BY_METHOD, aid)
        open_rows = requests_with(self.rows, agent, "open", "timestamp")
        labels = self.rows(_LABELS, aid)
        last_evpi = last_of_block(self.rows, agent.agent_id, ("evpi",))
        statuses, counts_by, routine = {}, {}, {}
        for method, status_, origin, n in by_method:
            if origin is not None:  # a label the agent did not request
                routine[method] = routine.get(method, 0) + n
                continue
            statuses[status_] = statuses.get(status_, 0) + n
            counts_by[method, status_] = n
        counts = {}  # commissioning labels and inspection results
        for text_, n in labels:
            label = json.loads(text_)
            counts[label] = counts.get(label, 0) + n
        inspections = stored_inspections(agent)
        spend = inspection_spend(counts_by, cost, inspections)
        return {
            "name": agent.name,
            "n_commissioning": n_commissioning,
            "n_observations": int(n_observations),
            "n_skipped": n_skipped(self.rows, agent.agent_id),
            "n_requests": sum(statuses.values()),
            "n_open": statuses.get("open", 0),
            "n_results": statuses.get("done", 0),
            "n_cancelled": statuses.get("cancelled", 0),
            "n_expired": statuses.get("expired", 0),
            "inspection_cost": cost,
            "spend": spend.pop("spend"),
            "committed_spend": spend.pop("committed_spend"),
            "open_requests": sorted(
                (
                    {
                        "request_id": request_id,
                        "step": step,
                        "evpi": evpi,
                        "timestamp": None
                        if stamp is None or math.isnan(stamp)
                        else stamp,
                    }
                    for request_id, step, evpi, stamp in open_rows
                ),
                key=lambda r: r["request_id"],
            ),
            "labelled": {c: counts.get(c, 0) for c in classes},
            "last_evpi": None if last_evpi is None else last_evpi[0],
            "budget_state": json.loads(agent.budget_state),
            "clock": agent.clock,
            **spend,
            "n_routine": sum(routine.values()),
            "routine_spend": routine_spend(routine, cost, inspections),
        }


@contextmanager
def sqlite_summary(path):
    """The agents of a SQLite store, read with the standard library alone.

    A fast reader for what ``skrbal agent status`` shows: its
    ``status(name)``, ``configuration(name)`` and ``agent_names()`` are
    those of :class:`~skrbal.online.AgentStore` (the same queries), without
    importing SQLAlchemy or numpy.

    None (use the :class:`~skrbal.online.AgentStore`, which names what is
    wrong) unless the file is a store of this code's schema version that
    ``sqlite3`` opens for reading (``mode=ro``, so nothing is created or
    written, and an agent may be writing meanwhile) and that has one name
    (the store refuses a hard-linked file).

    Parameters
    ----------
    path : str
        The store's file.

    Yields
    ------
    summary : AgentSummary or None
        The reader, valid inside the ``with`` block.

    See Also
    --------
    AgentStore.status : The same status, through SQLAlchemy, for any store.

    Examples
    --------
    >>> import os, tempfile
    >>> from skrbal.online import AgentStore, sqlite_summary
    >>> path = os.path.join(tempfile.mkdtemp(), "agents.db")
    >>> AgentStore(path).close()
    >>> with sqlite_summary(path) as summary:
    ...     summary.agent_names()
    []
    >>> with sqlite_summary(path + ".absent") as summary:
    ...     summary is None
    True
    """
    path = os.path.abspath(path)
    try:
        if os.stat(path).st_nlink != 1:
            raise OSError
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=60)
    except (OSError, sqlite3.Error):
        yield None
        return
    with closing(conn):
        try:
            ((version,),) = conn.execute(
                "SELECT max(version) FROM skrbal_schema_version"
            ).fetchall()
        except sqlite3.Error:
            version = None
        if version != SCHEMA_VERSION:
            yield None
            return

        def rows(sql, parameters):
            return conn.execute(sql, parameters).fetchall()

        yield AgentSummary(rows, "sqlite:///" + path)
