"""An agent store in the process's memory: the storage contract without SQL.

:class:`InMemoryAgentStore` keeps each agent as Python objects (its record,
commissioning steps, observe blocks, requests, actions and events) and
implements :class:`~skrbal.online.AgentStorage` as the SQL store does:
writes move an agent from event ``seq`` to ``seq + 1`` or raise
:class:`~skrbal.exceptions.StoreError`, one writer per agent, client keys
unique per agent, and the same status, history, requests and events. Nothing
is durable and there is no event chain to verify: it is the store of an
agent that lives as long as the process (``RiskBasedAgent(store=None)``) and
the test double that proves the contract (``tests/test_online_contract.py``
runs the same calls on it, SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from skrbal.exceptions import AgentLockedError
from skrbal.online._memory_agent import KeptAgent, KeptRequest, plain
from skrbal.online._records import (
    AgentRecord,
    Commissioning,
    EventRecord,
    ObserveBlock,
    Replay,
    RequestRecord,
    ResultRecord,
)
from skrbal.online._storage import AgentStorage, StoreError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["InMemoryAgentStore"]


class _MemoryLock:
    """Exclusive write access to one agent of an :class:`InMemoryAgentStore`."""

    def __init__(self, holders: set, agent_id: int):
        self._holders, self.agent_id = holders, agent_id
        holders.add(agent_id)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self.agent_id in self._holders

    def release(self) -> None:
        """Give the agent back (a second release does nothing)."""
        self._holders.discard(self.agent_id)


class InMemoryAgentStore(AgentStorage):
    """Agents kept in memory, for as long as this object lives.

    The same contract as :class:`AgentStore` (see
    :class:`~skrbal.online.AgentStorage`) and the same readers
    (:meth:`status`, :meth:`history`, :meth:`requests`, :meth:`events`,
    :meth:`configuration`), without a database: nothing survives the
    process, and there is no event chain (no ``verify``). The agent's
    default store (``store=None``), and a fast store for tests.

    Attributes
    ----------
    display_url : str
        A name for messages, unique per store.
    keeps_snapshots : bool
        False: no driver reads this store without the model.

    See Also
    --------
    AgentStore : The durable store (SQLite or PostgreSQL).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import InMemoryAgentStore, RiskBasedAgent
    >>> store = InMemoryAgentStore()
    >>> agent = RiskBasedAgent(estimator=GaussianNB(), store=store,
    ...                        process=synthetic_decision_process()).fit(
    ...     [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4])
    >>> agent.observe([[12.5], [-5.0]])["step"].tolist()
    [4, 5]
    >>> agent.close()
    >>> store.agent_names(), store.status("agent")["n_observations"]
    (['agent'], 2)
    >>> RiskBasedAgent.from_store(store).n_steps_
    6
    """

    keeps_snapshots = False

    def __init__(self):
        self._agents: dict[int, KeptAgent] = {}
        self._ids: dict[str, int] = {}
        self._held: set = set()
        self.display_url = f"memory://{uuid.uuid4().hex[:8]}"

    # ------------------------------------------------------------------ #
    # finding an agent
    # ------------------------------------------------------------------ #
    def agent_names(self) -> list[str]:
        """Names of the agents in the store, sorted.

        Returns
        -------
        names : list of str
        """
        return sorted(self._ids)

    def _named(self, name) -> KeptAgent:
        if not isinstance(name, str) or name not in self._ids:
            raise StoreError(
                f"store {self.display_url} has no agent named {name!r}; it holds "
                f"{self.agent_names()}."
            )
        return self._agents[self._ids[name]]

    def _by_id(self, agent_id: int) -> KeptAgent:
        if agent_id not in self._agents:
            raise StoreError(f"store {self.display_url} has no agent {agent_id}.")
        return self._agents[agent_id]

    def _moving(self, agent_id: int, seq: int, **counters) -> KeptAgent:
        """The agent, moved from event ``seq`` to ``seq + 1`` (or refused)."""
        agent = self._by_id(agent_id)
        if agent.record.last_seq != seq:
            raise StoreError(
                f"store {self.display_url}: agent {agent_id} was changed by "
                "another writer since it was loaded; reopen it."
            )
        agent.record = replace(agent.record, last_seq=seq + 1, **counters)
        return agent

    @staticmethod
    def _check_key(agent: KeptAgent, key) -> None:
        if key is not None and key.key in agent.keys:
            raise StoreError(
                f"agent {agent.record.agent_id}: a call with client key "
                f"{key.key!r} is stored already; nothing was written."
            )

    # ------------------------------------------------------------------ #
    # the storage contract: documented by AgentStorage, whose docstrings
    # these methods inherit
    # ------------------------------------------------------------------ #
    def create_agent(self, record: AgentRecord, commissioning: Commissioning) -> int:
        if record.name in self._ids:
            raise StoreError(
                f"store {self.display_url} already has an agent named "
                f"{record.name!r}: resume it with RiskBasedAgent.from_store(), or "
                "choose another name."
            )
        agent_id = len(self._agents) + 1
        record = replace(
            record,
            agent_id=agent_id,
            last_seq=1,
            settings=json.loads(json.dumps(dict(record.settings))),
            budget_state=json.loads(json.dumps(record.budget_state)),
        )
        agent = KeptAgent(record, commissioning)
        agent.log(
            "commission",
            0,
            None,
            {"n": len(commissioning.labels), "warnings": list(commissioning.warnings)},
        )
        self._agents[agent_id], self._ids[record.name] = agent, agent_id
        return agent_id

    def lock_agent(self, agent_id: int, name: str, timeout: float = 0.0):
        """Exclusive write access to an agent, until ``release()``.

        Parameters
        ----------
        agent_id : int
            The agent's key.
        name : str
            Its name (for messages).
        timeout : float, default=0.0
            Ignored: in one process nobody else can release it meanwhile.

        Returns
        -------
        lock : object with ``held`` and ``release()``
        """
        self._by_id(agent_id)
        if agent_id in self._held:
            raise AgentLockedError(
                f"agent {name!r} in store {self.display_url} is already open for "
                "writing by another agent object of this process; a store "
                "accepts one writer per agent. Close the other first."
            )
        return _MemoryLock(self._held, agent_id)

    def load_agent(self, name: str) -> AgentRecord:
        return self._named(name).record

    def load_replay(self, name: str, *, every_step: bool) -> Replay:
        agent = self._named(name)
        com = agent.commissioning
        n0 = len(com.labels)
        if every_step:
            observed = [b.first_step + np.arange(b.n_steps) for b in agent.blocks]
            steps = np.concatenate(observed) if observed else np.empty(0, np.int64)
        else:
            steps = np.sort(
                [r.step for r in agent.requests.values() if r.status != "cancelled"]
            ).astype(np.int64)
        seen = agent.steps(steps, ("features", "action"))
        requests = []
        for r in sorted(agent.requests.values(), key=lambda r: r.request_id):
            belief = time_ = None
            if r.status in ("open", "expired"):
                block, i = agent.block_at(r.step)
                belief, time_ = block.belief[i].copy(), float(block.times[i])
            requests.append(
                RequestRecord(
                    r.request_id, r.step, r.evpi, r.method, r.status, belief, time_
                )
            )
        if agent.blocks:
            last = agent.blocks[-1]
            last_time, last_evpi = float(last.times[-1]), float(last.evpi[-1])
        else:
            last_time, last_evpi = float(com.times[-1]), None
        return Replay(
            agent=agent.record,
            steps=np.concatenate([np.arange(n0), steps]).astype(np.int64),
            n_commissioning=n0,
            features=np.vstack([com.features, seen["features"]]),
            actions=np.concatenate([com.actions, seen["action"]]).astype(np.int64),
            labels=[plain(label) for label in com.labels],
            events=tuple(
                replace(e, key=None)
                for e in agent.events
                if e.kind in ("result", "action")
            ),
            requests=tuple(requests),
            last_time=last_time,
            last_evpi=last_evpi,
        )

    def append_observe(self, agent_id: int, seq: int, block: ObserveBlock) -> None:
        self._check_key(self._by_id(agent_id), block.key)
        counters = {
            "n_steps": block.first_step + block.n_steps,
            "budget_state": json.loads(json.dumps(block.budget_state)),
            "clock": block.clock,
        }
        if block.requests:
            counters["n_requests"] = max(r.request_id for r in block.requests)
        agent = self._moving(agent_id, seq, **counters)
        kept = replace(
            block,
            requests=(),
            key=None,
            skipped=(),  # in the event, as the SQL store keeps them
            **{
                name: None if value is None else np.array(value)
                for name, value in (
                    ("times", block.times),
                    ("timestamps", block.timestamps),
                    ("features", block.features),
                    ("belief", block.belief),
                    ("evpi", block.evpi),
                    ("action", block.action),
                    ("request_ids", block.request_ids),
                )
            },
        )
        agent.blocks.append(kept)
        agent.firsts.append(block.first_step)
        for r in block.requests:
            agent.requests[int(r.request_id)] = KeptRequest(
                int(r.request_id), int(r.step), float(r.evpi), r.method, seq + 1
            )
        methods = {
            str(int(r.request_id)): r.method
            for r in block.requests
            if r.method is not None
        }
        payload = {
            "n": block.n_steps,
            "budget_state": block.budget_state,
            "methods": methods,
        }
        if block.skipped:
            payload["skipped"] = [row.as_json() for row in block.skipped]
        agent.log("observe", block.first_step, None, payload, block.key)

    def record_result(self, agent_id: int, seq: int, result: ResultRecord) -> None:
        self._check_key(self._by_id(agent_id), result.key)
        routine = result.origin is not None
        counters = {"n_requests": result.request_id} if routine else {}
        agent = self._moving(agent_id, seq, **counters)
        if routine:  # a request made and done in this event
            agent.requests[result.request_id] = KeptRequest(
                result.request_id,
                result.step,
                float(result.evpi),
                result.method,
                seq + 1,
                origin=result.origin,
            )
        request = agent.requests[result.request_id]
        request.status, request.closed_seq = "done", seq + 1
        request.label, request.action = plain(result.label), result.action
        request.result_timestamp = result.timestamp
        posterior = None if result.posterior is None else list(result.posterior)
        request.report, request.posterior = plain(result.report), posterior
        payload = {
            "label": request.label,
            "warnings": list(result.warnings),
            "action": int(result.action),
            "timestamp": result.timestamp,
        }
        if routine:
            payload["origin"], payload["method"] = result.origin, result.method
        if posterior is not None:
            payload["report"], payload["posterior"] = request.report, posterior
        agent.log("result", result.step, result.request_id, payload, result.key)

    def record_cancel(
        self,
        agent_id: int,
        seq: int,
        request_id: int,
        step: int,
        reason,
        key=None,
        snapshot=None,
    ) -> None:
        self._check_key(self._by_id(agent_id), key)
        agent = self._moving(agent_id, seq)
        request = agent.requests[request_id]
        request.status, request.closed_seq, request.note = "cancelled", seq + 1, reason
        agent.log("cancel", step, request_id, {"reason": reason}, key)

    def record_expire(
        self, agent_id: int, seq: int, request_ids, steps, snapshot=None
    ) -> None:
        agent = self._moving(agent_id, seq)
        ids = [int(i) for i in request_ids]
        for i in ids:
            if agent.requests[i].status == "open":
                agent.requests[i].status = "expired"
                agent.requests[i].closed_seq = seq + 1
        payload = {"request_ids": ids, "steps": [int(s) for s in steps]}
        agent.log("expire", int(min(steps)), None, payload)

    def record_action(
        self, agent_id: int, seq: int, step: int, action: int, key=None
    ) -> None:
        self._check_key(self._by_id(agent_id), key)
        agent = self._moving(agent_id, seq)
        agent.actions[int(step)] = int(action)
        agent.log("action", step, None, {"action": action}, key)

    def record_skipped(self, agent_id: int, seq: int, skipped, key=None) -> None:
        self._check_key(self._by_id(agent_id), key)
        agent = self._moving(agent_id, seq)
        agent.log("skip", None, None, {"skipped": [r.as_json() for r in skipped]}, key)

    def find_key(self, agent_id: int, key: str) -> EventRecord | None:
        agent = self._by_id(agent_id)
        at = agent.keys.get(key)
        return None if at is None else agent.events[at]

    def load_block(self, agent_id: int, first_step: int) -> ObserveBlock:
        agent = self._by_id(agent_id)
        block, _ = agent.block_at(first_step)
        event = next(
            e for e in agent.events if e.kind == "observe" and e.step == first_step
        )
        requests = tuple(
            RequestRecord(
                int(i),
                block.first_step + int(k),
                float(block.evpi[k]),
                agent.requests[int(i)].method,
            )
            for k, i in enumerate(block.request_ids)
            if i > 0
        )
        return replace(
            block,
            requests=requests,
            budget_state=event.payload["budget_state"],
            clock=agent.record.clock,
        )

    def load_steps(self, agent_id: int, steps, columns) -> dict:
        return self._by_id(agent_id).steps(steps, columns)

    # ------------------------------------------------------------------ #
    # reading: what the kept agent says of itself
    # ------------------------------------------------------------------ #
    def status(self, name: str) -> dict:
        """Counts, spend, open requests and labelled set, as :meth:`AgentStore.status`.

        Parameters
        ----------
        name : str

        Returns
        -------
        status : dict
        """
        return self._named(name).status()

    def history(self, name: str) -> pd.DataFrame:
        """Every step of an agent, as :meth:`AgentStore.history`.

        Parameters
        ----------
        name : str

        Returns
        -------
        history : DataFrame
        """
        return self._named(name).history()

    def requests(self, name: str) -> pd.DataFrame:
        """Every request of an agent, as :meth:`AgentStore.requests`.

        Parameters
        ----------
        name : str

        Returns
        -------
        requests : DataFrame
        """
        return self._named(name).requests_frame()

    def events(self, name: str) -> pd.DataFrame:
        """The agent's log, as :meth:`AgentStore.events`.

        Parameters
        ----------
        name : str

        Returns
        -------
        events : DataFrame
        """
        return self._named(name).events_frame()

    def configuration(self, name: str) -> dict:
        """How an agent was set up, as :meth:`AgentStore.configuration`.

        Parameters
        ----------
        name : str

        Returns
        -------
        configuration : dict
        """
        return self._named(name).configuration()

    def close(self) -> None:
        """Nothing to release: the agents stay readable while the object lives."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __deepcopy__(self, memo):
        # A handle on agents, as a path is: sklearn's clone of an agent
        # shares it.
        return self

    def __repr__(self):
        return f"InMemoryAgentStore({self.display_url!r})"
