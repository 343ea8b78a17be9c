"""One agent of an :class:`~skrbal.online.InMemoryAgentStore`: its records
and what they read as (status, history, requests, events, configuration),
as the SQL store gives them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from skrbal.online._records import (
    AgentRecord,
    ClientKey,
    Commissioning,
    EventRecord,
    ObserveBlock,
)
from skrbal.online._spend import inspection_spend, routine_spend
from skrbal.online._storage import StoreError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KeptAgent", "KeptRequest", "plain"]


def plain(value):
    """A value as JSON gives it back (numpy scalars as Python, tuples as lists)."""
    if value is None:
        return None
    return json.loads(json.dumps(value.item() if hasattr(value, "item") else value))


@dataclass
class KeptRequest:
    """One request as kept: what the requests table of the SQL store holds."""

    request_id: int
    step: int
    evpi: float
    method: str | None
    opened_seq: int
    status: str = "open"
    closed_seq: int | None = None
    label: Any = None
    action: int | None = None
    result_timestamp: float | None = None
    note: str | None = None
    report: Any = None
    posterior: list | None = None
    origin: str | None = None


@dataclass
class KeptAgent:
    """Everything kept of one agent, and what it reads as (status, history, ...)."""

    record: AgentRecord
    commissioning: Commissioning
    blocks: list = field(default_factory=list)
    firsts: list = field(default_factory=list)
    requests: dict = field(default_factory=dict)
    actions: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    created: list = field(default_factory=list)
    keys: dict = field(default_factory=dict)

    def block_at(self, step: int) -> tuple[ObserveBlock, int]:
        """The block holding an observed step, and the step's row in it."""
        k = int(np.searchsorted(self.firsts, step, side="right")) - 1
        if k < 0 or step >= self.firsts[k] + self.blocks[k].n_steps:
            raise StoreError(
                f"agent {self.record.name!r}: step {step} is no observed step."
            )
        return self.blocks[k], step - self.firsts[k]

    def log(self, kind, step, request_id, payload, key=None) -> None:
        """Append the next event (the caller has moved ``last_seq``)."""
        if key is not None:
            self.keys[key.key] = len(self.events)
        seq = len(self.events) + 1
        key = None if key is None else ClientKey(key.key, dict(key.digest))
        payload = json.loads(json.dumps(payload))
        self.events.append(EventRecord(seq, kind, step, request_id, payload, key))
        self.created.append(time.time())

    def steps(self, steps, columns) -> dict:
        """Some per-step columns of some observed steps.

        Parameters
        ----------
        steps : sequence of int
            Observed (not commissioning) steps, ascending.
        columns : sequence of str
            Among ``timestamp``, ``time``, ``features``, ``belief``,
            ``evpi``, ``action`` and ``request_id``.

        Returns
        -------
        values : dict
        """
        agent = self
        n_states = len(json.loads(agent.record.process)["classes"])
        rows = [agent.block_at(int(s)) for s in np.asarray(steps, dtype=np.int64)]
        attribute = {
            "time": "times",
            "timestamp": "timestamps",
            "request_id": "request_ids",
        }
        empty = {"features": (0, agent.record.n_features), "belief": (0, n_states)}
        out = {}
        for column in columns:
            name = attribute.get(column, column)
            integer = column in ("action", "request_id")
            values = [
                np.nan if getattr(b, name) is None else getattr(b, name)[i]
                for b, i in rows
            ]
            out[column] = (
                np.array(values, dtype=np.int64 if integer else np.float64)
                if values
                else np.empty(empty.get(column, 0), np.int64 if integer else float)
            )
        return out

    def status(self) -> dict:
        """Counts, spend, open requests and labelled set of an agent.

        Returns
        -------
        status : dict
            As :meth:`AgentStore.status`.
        """
        agent = self
        record, process = agent.record, json.loads(agent.record.process)
        cost, classes = float(process["inspection_cost"]), process["classes"]
        methods = record.settings.get("inspections")
        statuses, counts_by, routine, counts = {}, {}, {}, {}
        for label in agent.commissioning.labels:
            counts[plain(label)] = counts.get(plain(label), 0) + 1
        for r in agent.requests.values():
            if r.label is not None:
                counts[r.label] = counts.get(r.label, 0) + 1
            if r.origin is not None:
                routine[r.method] = routine.get(r.method, 0) + 1
                continue
            statuses[r.status] = statuses.get(r.status, 0) + 1
            counts_by[r.method, r.status] = counts_by.get((r.method, r.status), 0) + 1
        opened = sorted(
            (r for r in agent.requests.values() if r.status == "open"),
            key=lambda r: r.request_id,
        )
        stamps = self.steps([r.step for r in opened], ["timestamp"])
        spend = inspection_spend(counts_by, cost, methods)
        return {
            "name": record.name,
            "n_commissioning": len(agent.commissioning.labels),
            "n_observations": sum(b.n_steps for b in agent.blocks),
            "n_skipped": sum(
                len(e.payload.get("skipped", ()))
                for e in agent.events
                if e.kind in ("observe", "skip")
            ),
            "n_requests": sum(statuses.values()),
            "n_open": statuses.get("open", 0),
            "n_results": statuses.get("done", 0),
            "n_cancelled": statuses.get("cancelled", 0),
            "n_expired": statuses.get("expired", 0),
            "inspection_cost": cost,
            "spend": spend.pop("spend"),
            "committed_spend": spend.pop("committed_spend"),
            "open_requests": [
                {
                    "request_id": r.request_id,
                    "step": r.step,
                    "evpi": r.evpi,
                    "timestamp": None if np.isnan(stamp) else float(stamp),
                }
                for r, stamp in zip(opened, stamps["timestamp"])
            ],
            "labelled": {c: counts.get(c, 0) for c in classes},
            "last_evpi": float(agent.blocks[-1].evpi[-1]) if agent.blocks else None,
            "budget_state": dict(record.budget_state),
            "clock": record.clock,
            **spend,
            "n_routine": sum(routine.values()),
            "routine_spend": routine_spend(routine, cost, methods),
        }

    def history(self) -> pd.DataFrame:
        """Every step of an agent, as :meth:`AgentStore.history` gives it.

        Returns
        -------
        history : DataFrame
        """
        import pandas as pd

        agent = self
        record, com = agent.record, agent.commissioning
        classes = json.loads(record.process)["classes"]
        n0 = len(com.labels)
        blocks = agent.blocks
        steps = np.concatenate(
            [np.arange(n0)] + [b.first_step + np.arange(b.n_steps) for b in blocks]
        )
        stamps = [np.full(n0, np.nan) if com.timestamps is None else com.timestamps]
        stamps += [
            np.full(b.n_steps, np.nan) if b.timestamps is None else b.timestamps
            for b in blocks
        ]
        ids = np.concatenate([np.zeros(n0, np.int64)] + [b.request_ids for b in blocks])
        by_step = {r.step: r for r in agent.requests.values()}
        requests = [by_step.get(s) if s >= n0 else None for s in steps.tolist()]
        out = pd.DataFrame(
            {
                "step": steps.astype(np.int64),
                "kind": ["commissioning"] * n0 + ["observation"] * (steps.size - n0),
                "timestamp": np.concatenate(stamps).astype(np.float64),
                "evpi": np.concatenate([com.evpi] + [b.evpi for b in blocks]),
            }
        )
        first = (
            np.full((n0, len(classes)), np.nan)
            if com.belief is None
            else np.asarray(com.belief, dtype=np.float64)
        )
        beliefs = np.vstack([first] + [b.belief for b in blocks])
        for j, label in enumerate(classes):
            out[f"belief_{label}"] = beliefs[:, j]
        out["request_id"] = pd.array(np.where(ids > 0, ids, 0), dtype="Int64")
        out.loc[ids == 0, "request_id"] = pd.NA
        out["request_status"] = [np.nan if r is None else r.status for r in requests]
        out["label"] = [plain(label) for label in com.labels] + [
            None if r is None else r.label for r in requests[n0:]
        ]
        recommended = np.concatenate([com.actions] + [b.action for b in blocks])
        out["recommended_action"] = recommended.astype(int)
        result = [None if r is None else r.action for r in requests]
        out["action"] = [
            agent.actions.get(s, a if a is not None else int(rec))
            for s, a, rec in zip(steps.tolist(), result, recommended.tolist())
        ]
        out["action"] = out["action"].astype(int)
        if record.settings.get("inspections") is not None:
            out["method"] = [None if r is None else r.method for r in requests]
            out["report"] = [None if r is None else r.report for r in requests]
            posterior = np.full((steps.size, len(classes)), np.nan)
            for i, r in enumerate(requests):
                if r is not None and r.posterior is not None:
                    posterior[i] = r.posterior
            for j, label in enumerate(classes):
                out[f"posterior_{label}"] = posterior[:, j]
        features = np.vstack([com.features] + [b.features for b in blocks])
        names = record.feature_names
        for j in range(record.n_features):
            out[f"feature_{names[j] if names else j}"] = features[:, j]
        return out

    def requests_frame(self) -> pd.DataFrame:
        """Every inspection request of an agent, as :meth:`AgentStore.requests`.

        Returns
        -------
        requests : DataFrame
        """
        import pandas as pd

        agent = self
        kept = sorted(agent.requests.values(), key=lambda r: r.request_id)
        text = [None if r.label is None else json.dumps(r.label) for r in kept]
        # Built from rows as the SQL store's frame is, so that pandas infers
        # the same dtypes; then the same conversions.
        frame = pd.DataFrame(
            [
                (
                    *(r.request_id, r.step, r.status, r.evpi, t, r.action),
                    *(r.result_timestamp, r.note, r.method, r.origin),
                )
                for r, t in zip(kept, text)
            ],
            columns=[
                "request_id",
                "step",
                "status",
                "evpi",
                "label",
                "action",
                "result_timestamp",
                "note",
                "method",
                "origin",
            ],
        )
        for column in ("request_id", "step", "evpi", "action", "result_timestamp"):
            frame[column] = pd.to_numeric(frame[column])
        frame["origin"] = frame["origin"].fillna("agent").astype(object)
        frame["label"] = [None if t is None else json.loads(t) for t in text]
        frame["action"] = frame["action"].astype("Int64")
        if agent.record.settings.get("inspections") is None:
            return frame.drop(columns=["method"])
        frame["method"] = [r.method for r in kept]
        frame["report"] = [r.report for r in kept]
        frame = frame[[c for c in frame.columns if c != "origin"] + ["origin"]]
        classes = json.loads(agent.record.process)["classes"]
        posterior = np.full((len(kept), len(classes)), np.nan)
        for i, r in enumerate(kept):
            if r.posterior is not None:
                posterior[i] = r.posterior
        for j, label in enumerate(classes):
            frame[f"posterior_{label}"] = posterior[:, j]
        return frame

    def events_frame(self) -> pd.DataFrame:
        """The agent's log, as :meth:`AgentStore.events`.

        Returns
        -------
        events : DataFrame
        """
        import pandas as pd

        agent = self
        return pd.DataFrame(
            {
                "seq": [e.seq for e in agent.events],
                "kind": [e.kind for e in agent.events],
                "step": [e.step for e in agent.events],
                "request_id": pd.array(
                    [e.request_id for e in agent.events], dtype="Int64"
                ),
                "payload": [json.loads(json.dumps(e.payload)) for e in agent.events],
                "created_at": agent.created,
                "client_key": pd.Series(
                    [None if e.key is None else e.key.key for e in agent.events],
                    dtype=object,
                ),
            }
        )

    def configuration(self) -> dict:
        """How an agent was set up, as :meth:`AgentStore.configuration`.

        Returns
        -------
        configuration : dict
        """
        record = self.record
        names = record.feature_names
        return {
            "process": json.loads(record.process),
            "estimator": json.loads(record.estimator),
            "budget": json.loads(record.budget),
            "settings": json.loads(json.dumps(dict(record.settings))),
            "n_features": record.n_features,
            "feature_names": None if names is None else list(names),
            "created_at": record.created_at,
            "skrbal_version": record.skrbal_version,
        }
