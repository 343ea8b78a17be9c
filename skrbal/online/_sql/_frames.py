"""An agent store's tables as DataFrames: history, requests, events, setup."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import select

from skrbal._lazy import numpy as np  # imported when first used
from skrbal.exceptions import StoreError
from skrbal.online._sql import _schema as schema
from skrbal.online._sql._blocks import commissioning_arrays, unpack_blocks
from skrbal.online._sql._reading import StoreReader, process_classes, sql_rows
from skrbal.online._sql._summary import AgentSummary, stored_inspections

# pandas is imported where a frame is made: a store's status makes none and
# does not pay for it (``skrbal agent status`` starts in a fraction of a second).
if TYPE_CHECKING:
    import pandas as pd


def _steps(conn, agent, n_states: int):
    """Every step of an agent: a frame of scalars, beliefs and features.

    The frame has ``step``, ``kind``, ``timestamp``, ``evpi``, ``action``
    (recommended), ``request_id`` (NaN without) and ``label`` (JSON text
    of a commissioning label, None for an observation).
    """
    import pandas as pd

    obs = schema.observations
    com = conn.execute(
        select(
            obs.c.step,
            obs.c.timestamp,
            obs.c.evpi,
            obs.c.action,
            obs.c.label,
            obs.c.features,
            obs.c.belief,
        )
        .where(obs.c.agent_id == agent.agent_id)
        .order_by(obs.c.step)
    ).all()
    blocks = unpack_blocks(
        _block_rows(conn, agent.agent_id), agent.n_features, n_states
    )
    n0, n1 = len(com), blocks["step"].size
    c_step, c_features, c_action = commissioning_arrays(com, agent.n_features)
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
    beliefs = np.vstack(
        [_commissioning_beliefs(agent, com, n_states), blocks["belief"]]
    )
    features = np.vstack([c_features, blocks["features"]])
    return frame, beliefs, features


def _commissioning_beliefs(agent, rows, n_states: int) -> np.ndarray:
    """The initial model's beliefs at the commissioning steps (NaN if not kept)."""
    beliefs = np.full((len(rows), n_states), np.nan)
    for i, row in enumerate(rows):
        if row.belief is None:
            continue
        try:
            beliefs[i] = np.asarray(json.loads(row.belief), dtype=np.float64)
        except (TypeError, ValueError, RecursionError):
            raise StoreError(
                f"agent {agent.name!r}: table {schema.observations.name}, "
                f"commissioning step {row.step}: belief is not {n_states} "
                "numbers; the store is damaged or was edited: restore it from "
                "a backup."
            ) from None
    return beliefs


def _block_rows(conn, agent_id: int):
    """The block rows of an agent in step order."""
    b = schema.blocks
    query = select(b).where(b.c.agent_id == agent_id)
    return conn.execute(query.order_by(b.c.first_step)).all()


def _frame(conn, query) -> pd.DataFrame:
    """The rows of a query as a DataFrame; numeric columns with NULLs as NaN."""
    import pandas as pd

    result = conn.execute(query)
    columns = list(result.keys())
    frame = pd.DataFrame(result.all(), columns=columns)
    for column in query.selected_columns:
        kind = column.type.python_type if hasattr(column.type, "python_type") else None
        if kind in (int, float):
            frame[column.name] = pd.to_numeric(frame[column.name])
    return frame


def _json_column(column) -> list:
    """JSON text per row, missing values (None or NaN) as None."""
    # Most history rows (observations without a result) are missing: decode
    # only the known ones rather than looping over every step.
    out = [None] * len(column)
    values = column.to_numpy()
    for i in np.flatnonzero(column.notna().to_numpy()):
        out[i] = json.loads(values[i])
    return out


def _report_columns(out, frame, classes) -> None:
    """``method``, ``report`` and ``posterior_<label>`` from request rows."""
    import pandas as pd

    out["method"] = [None if pd.isna(m) else m for m in frame["method"]]
    out["report"] = _json_column(frame["report"])
    posterior = np.full((len(frame), classes.size), np.nan)
    known = frame["posterior"].notna().to_numpy()
    if known.any():
        posterior[known] = [json.loads(p) for p in frame["posterior"][known]]
    for j, label in enumerate(classes.tolist()):
        out[f"posterior_{label}"] = posterior[:, j]


class StoreFrames(StoreReader):
    """A store's reader that also gives its tables as DataFrames."""

    def history(self, name: str) -> pd.DataFrame:
        """See :meth:`~skrbal.online.AgentStore.history`."""
        import pandas as pd

        req_, act = schema.requests, schema.actions
        with self.database.engine.connect() as conn:
            agent = self.agent_row(conn, name)
            classes = process_classes(agent)
            frame, beliefs, features = _steps(conn, agent, classes.size)
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
        if stored_inspections(agent) is not None:
            _report_columns(out, frame, classes)
        names = json.loads(agent.feature_names) if agent.feature_names else None
        for j in range(agent.n_features):
            out[f"feature_{names[j] if names else j}"] = (
                features[:, j] if len(frame) else []
            )
        return out

    def requests(self, name: str) -> pd.DataFrame:
        """See :meth:`~skrbal.online.AgentStore.requests`."""
        with self.database.engine.connect() as conn:
            agent = self.agent_row(conn, name)
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
                    schema.requests.c.origin,
                )
                .where(schema.requests.c.agent_id == agent.agent_id)
                .order_by(schema.requests.c.request_id),
            )
        # Who asked for the inspection: the agent, or a routine one it learnt.
        frame["origin"] = frame["origin"].fillna("agent").astype(object)
        frame["label"] = _json_column(frame["label"])
        frame["action"] = frame["action"].astype("Int64")
        if stored_inspections(agent) is None:
            return frame.drop(columns=["method", "report", "posterior"])
        _report_columns(frame, frame, process_classes(agent))
        return frame.drop(columns=["posterior"])

    def configuration(self, name: str) -> dict:
        """See :meth:`~skrbal.online.AgentStore.configuration`."""
        with self.database.engine.connect() as conn:
            summary = AgentSummary(sql_rows(conn), self.database.display_url)
            return summary.configuration(name)

    def events(self, name: str) -> pd.DataFrame:
        """See :meth:`~skrbal.online.AgentStore.events`."""
        import pandas as pd

        ev = schema.events
        with self.database.engine.connect() as conn:
            agent = self.agent_row(conn, name)
            frame = _frame(
                conn,
                select(
                    ev.c.seq,
                    ev.c.kind,
                    ev.c.step,
                    ev.c.request_id,
                    ev.c.payload,
                    ev.c.created_at,
                    ev.c.client_key,
                )
                .where(ev.c.agent_id == agent.agent_id)
                .order_by(ev.c.seq),
            )
        # Object, None without a key (pandas 3 would infer strings, NaN for None).
        keys = [None if pd.isna(k) else k for k in frame["client_key"]]
        frame["client_key"] = pd.Series(keys, index=frame.index, dtype=object)
        frame["payload"] = _json_column(frame["payload"])
        frame["request_id"] = frame["request_id"].astype("Int64")
        return frame
