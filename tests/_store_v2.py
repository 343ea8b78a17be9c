"""Turn a store of the current schema back into the tables of version 2.

Version 2 kept one ``skrbal_observations`` row per step, features and belief
as JSON text (``json.dumps`` of the lists, as its ``observe`` wrote them),
the label of an inspected step and the action recorded as taken in that row.
The tests migrate such a store forward and compare it with the original.
"""

import json

import numpy as np
from sqlalchemy import select, text

from skrbal.online import _schema as schema


def downgrade_to_version_2(store) -> int:
    """Rewrite ``store`` (an AgentStore) as version 2; return its rows moved."""
    b, req, act, obs = (
        schema.blocks,
        schema.requests,
        schema.actions,
        schema.observations,
    )
    moved = 0
    with store.engine.begin() as conn:
        labels = {
            (r.agent_id, r.step): r.label
            for r in conn.execute(select(req.c.agent_id, req.c.step, req.c.label))
        }
        taken = {
            (r.agent_id, r.step): r.action
            for r in conn.execute(select(act.c.agent_id, act.c.step, act.c.action))
        }
        rows = []
        for blk in conn.execute(select(b).order_by(b.c.agent_id, b.c.first_step)):
            n = blk.n_steps
            f8 = lambda blob: np.frombuffer(blob, dtype="<f8")  # noqa: E731
            i8 = lambda blob: np.frombuffer(blob, dtype="<i8")  # noqa: E731
            features = f8(blk.features).reshape(n, -1)
            belief = f8(blk.belief).reshape(n, -1)
            stamps = None if blk.timestamp is None else f8(blk.timestamp)
            for i in range(n):
                step = blk.first_step + i
                key = (blk.agent_id, step)
                rows.append(
                    {
                        "agent_id": blk.agent_id,
                        "step": step,
                        "seq": blk.seq,
                        "kind": "observation",
                        "timestamp": None if stamps is None else float(stamps[i]),
                        "time": float(f8(blk.time)[i]),
                        "features": json.dumps(features[i].tolist()),
                        "belief": json.dumps(belief[i].tolist()),
                        "evpi": float(f8(blk.evpi)[i]),
                        "action": int(i8(blk.action)[i]),
                        "label": labels.get(key),
                        "taken_action": taken.get(key),
                        "request_id": int(i8(blk.request_id)[i]) or None,
                    }
                )
        if rows:
            conn.execute(obs.insert(), rows)
        for (agent_id, step), action in taken.items():
            conn.execute(
                obs.update()
                .where(
                    (obs.c.agent_id == agent_id)
                    & (obs.c.step == step)
                    & (obs.c.kind == "commissioning")
                )
                .values(taken_action=action)
            )
        moved = len(rows)
        downgrade_version_5_columns(conn)
        conn.execute(text("ALTER TABLE skrbal_events DROP COLUMN hash"))
        conn.execute(text("DROP TABLE skrbal_blocks"))
        conn.execute(text("DROP TABLE skrbal_actions"))
        versions = schema.schema_version
        conn.execute(versions.delete())
        conn.execute(versions.insert().values(version=2, applied_at=0.0))
    return moved


def downgrade_version_5_columns(conn) -> None:
    """Drop what version 5 added (client keys, request origins)."""
    conn.execute(text("DROP INDEX uq_skrbal_events_client_key"))
    conn.execute(text("ALTER TABLE skrbal_events DROP COLUMN client_key"))
    conn.execute(text("ALTER TABLE skrbal_events DROP COLUMN key_digest"))
    conn.execute(text("ALTER TABLE skrbal_requests DROP COLUMN origin"))


def downgrade_to_version_4(store) -> None:
    """Rewrite ``store`` (an AgentStore, no keyed call) as version 4."""
    with store.engine.begin() as conn:
        downgrade_version_5_columns(conn)
        versions = schema.schema_version
        conn.execute(versions.delete())
        conn.execute(versions.insert().values(version=4, applied_at=0.0))
