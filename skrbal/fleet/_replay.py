"""Replaying a fleet into a store: one task per structure, serially or on Dask."""

from __future__ import annotations

import os
import resource
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from skrbal.fleet._fleet import Fleet
from skrbal.fleet._policy import FleetBudget
from skrbal.online import AgentStore, RiskBasedAgent

__all__ = ["Structure", "replay_fleet"]


@dataclass(frozen=True)
class Structure:
    """One structure of a fleet: its agent's name, commissioning and stream.

    Parameters
    ----------
    name : str
        Its agent's name in the store.
    X_commission, y_commission : ndarray
        The commissioning observations and their labels.
    X : ndarray of shape (n_observations, n_features)
        The stream, in order.
    y : ndarray of shape (n_observations,) or None, default=None
        The stream's true states: each inspection requested is answered with
        its step's state after the block that asked for it; ``None``:
        results never come.
    timestamps_commission, timestamps : ndarray or None, default=None
        Their times (seconds), for budgets counted in time.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.fleet import Structure
    >>> s = Structure("bridge-1", np.zeros((4, 1)), np.array([1, 2, 3, 4]),
    ...               np.zeros((10, 1)))
    >>> s.name, s.X.shape
    ('bridge-1', (10, 1))
    """

    name: str
    X_commission: np.ndarray
    y_commission: np.ndarray
    X: np.ndarray
    y: np.ndarray | None = None
    timestamps_commission: np.ndarray | None = field(default=None)
    timestamps: np.ndarray | None = field(default=None)


def _peak_memory_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _blocks(n: int, block: int):
    return [(start, min(start + block, n)) for start in range(0, n, block)]


class _Replayer:
    """What every task needs: the store's URL and the agents' configuration."""

    def __init__(self, url, estimator, process, budget, block, params):
        self.url, self.estimator, self.process = url, estimator, process
        self.budget, self.block, self.params = budget, block, params

    @property
    def shared(self) -> bool:
        return isinstance(self.budget, FleetBudget)

    def commission(self, fleet_or_store, s: Structure):
        kwargs = dict(estimator=self.estimator, process=self.process, **self.params)
        if self.shared:
            return fleet_or_store.commission(
                s.name,
                s.X_commission,
                s.y_commission,
                timestamps=s.timestamps_commission,
                **kwargs,
            )
        agent = RiskBasedAgent(
            budget=self.budget, store=fleet_or_store, name=s.name, **kwargs
        )
        return agent.commission(s.X_commission, s.y_commission, s.timestamps_commission)

    def observe(self, fleet, agent, s: Structure, start, stop, turn=None) -> int:
        """Observe one block and answer its requests; the inspections asked."""
        stamps = None if s.timestamps is None else s.timestamps[start:stop]
        key = f"block-{start}"
        if self.shared:
            decisions = fleet.observe(
                s.name, s.X[start:stop], stamps, key=key, turn=turn
            )
            agent = fleet.agent(s.name)
        else:
            decisions = agent.observe(s.X[start:stop], stamps, key=key)
        asked = decisions[decisions["inspect"]]
        if s.y is not None:
            offset = len(s.y_commission)
            for request_id, step in zip(asked["request_id"], asked["step"]):
                agent.record_inspection(int(request_id), s.y[int(step) - offset])
        return len(asked)

    def schedule(self, structures, first: int = 1) -> list[tuple[int, int, int]]:
        """The fleet's draws in their fixed order: ``(turn, structure, block)``.

        Block by block, as a fleet observed in time; within a block, the
        structures in their order, starting from a new one each block (a
        fixed first drawer would hand the first ones the period's money).
        ``first`` is the ledger's number of the first draw.
        """
        n_blocks = [len(_blocks(len(s.X), self.block)) for s in structures]
        order = []
        for b in range(max(n_blocks, default=0)):
            k = b % len(structures)
            rotated = list(range(k, len(structures))) + list(range(k))
            order += [(i, b) for i in rotated if b < n_blocks[i]]
        return [(first + j, i, b) for j, (i, b) in enumerate(order)]

    def _turns(self, holder, structures, rows, turns=None) -> None:
        """Commission ``structures``, then draw in the order of the schedule.

        ``turns`` is the whole fleet's schedule with its structures (this
        task's are among them), each draw waiting for its turn; ``None``:
        ``structures`` are the whole fleet, drawn in the order of their own
        schedule by this process alone.
        """
        agents = {s.name: self.commission(holder, s) for s in structures}
        if turns is None:
            fleet = structures
            turns = [(None, i, b) for _, i, b in self.schedule(structures)]
        else:
            turns, fleet = turns
        for turn, i, b in turns:
            s = fleet[i]
            if s.name in agents:
                span = _blocks(len(s.X), self.block)[b]
                rows[s.name]["n_inspections"] += self.observe(
                    holder, agents[s.name], s, *span, turn=turn
                )
        for s in structures:
            self._finish(holder.agent(s.name), s, rows)

    def _one_by_one(self, store, structures, rows) -> None:
        """Each structure's whole stream, its agent closed before the next's.

        Independent budgets: the order changes nothing, and one agent open
        at a time holds one lock (a connection, on PostgreSQL) at a time.
        """
        for s in structures:
            agent = self.commission(store, s)
            for start, stop in _blocks(len(s.X), self.block):
                rows[s.name]["n_inspections"] += self.observe(
                    None, agent, s, start, stop
                )
            self._finish(agent, s, rows)

    @staticmethod
    def _finish(agent, s: Structure, rows) -> None:
        status = agent.status()
        rows[s.name].update(
            n_observations=len(s.X), committed_spend=status["committed_spend"]
        )
        agent.close()

    def run(self, structures, turns=None) -> list[dict]:
        """Replay ``structures``: one summary row each.

        ``turns``: with a fleet budget, the whole fleet's schedule and
        structures, of which this task replays ``structures``.
        """
        began = time.process_time()
        rows = {s.name: {"structure": s.name, "n_inspections": 0} for s in structures}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            if self.shared:
                with Fleet(self.url, budget=self.budget) as fleet:
                    self._turns(fleet, structures, rows, turns)
            else:
                with AgentStore(self.url) as store:
                    self._one_by_one(store, structures, rows)
        cpu = time.process_time() - began
        for row in rows.values():
            row.update(
                cpu_seconds=cpu / len(rows),
                peak_memory_mb=_peak_memory_mb(),
                process=os.getpid(),
            )
        return list(rows.values())


def _replay_task(replayer: _Replayer, structures, turns=None) -> list[dict]:
    return replayer.run(structures, turns)


def _on_dask(client, replayer: _Replayer, structures) -> list[dict]:
    """One task per structure, or per worker with a fleet budget."""
    # The store's tables first, by one process: workers only add agents.
    AgentStore(replayer.url).close()
    if replayer.shared:
        with Fleet(replayer.url, budget=replayer.budget) as fleet:
            first = fleet.ledger_.status()["n_draws"] + 1
        return _fleet_on_dask(client, replayer, list(structures), first)
    futures = client.map(
        _replay_task,
        [replayer] * len(structures),
        [[s] for s in structures],
        pure=False,
    )
    return [row for part in client.gather(futures) for row in part]


def _fleet_on_dask(client, replayer: _Replayer, structures, first) -> list[dict]:
    """One task per worker, each drawing for its structures in the fleet's order.

    Every draw waits for its turn in the schedule, so the draws come in the
    serial replay's order. The tasks wait for each other: each runs on its
    own worker, all at once.
    """
    workers = sorted(client.scheduler_info()["workers"])
    n_tasks = min(len(workers), len(structures))
    schedule = replayer.schedule(structures, first)
    futures = [
        client.submit(
            _replay_task,
            replayer,
            structures[g::n_tasks],
            (schedule, structures),
            workers=[workers[g]],
            allow_other_workers=False,
            pure=False,
        )
        for g in range(n_tasks)
    ]
    rows = {r["structure"]: r for part in client.gather(futures) for r in part}
    return [rows[s.name] for s in structures]


def replay_fleet(
    store,
    structures,
    *,
    estimator,
    process,
    budget=None,
    block=24,
    client=None,
    agent_params=None,
) -> pd.DataFrame:
    """Replay the streams of a fleet's structures through their agents into a store.

    Each structure is commissioned and then observes its stream in blocks of
    ``block`` observations; each inspection its agent requests is answered
    with the step's true state after the block. Serially, the structures take
    turns block by block, as a fleet observed in time. On Dask, with
    per-structure budgets (any :class:`~skrbal.budget.BudgetPolicy`), each
    structure is one task on a worker, the only writer of its agent; with a
    :class:`FleetBudget`, each worker takes a share of the structures in one
    task (all running at once) and each block is a draw on the fleet's budget
    that waits for its turn, in the serial replay's order. Either way, serial
    and Dask replays give identical stores.

    Parameters
    ----------
    store : str or path-like
        The store's URL or SQLite path (workers open it themselves).
    structures : list of Structure
        The fleet.
    estimator, process
        Every agent's model and decision process (as for
        :class:`~skrbal.online.RiskBasedAgent`).
    budget : BudgetPolicy or FleetBudget, default=None
        Each agent's own budget, or the fleet's. ``None``: each agent's
        :class:`~skrbal.budget.CostThreshold`.
    block : int, default=24
        Observations per ``observe`` call.
    client : distributed.Client or str, default=None
        A Dask client, or a scheduler's address; ``None`` replays serially
        in this process.
    agent_params : dict, default=None
        Other parameters of every agent.

    Returns
    -------
    summary : DataFrame
        One row per structure: ``structure``, ``n_inspections``,
        ``n_observations``, ``committed_spend``, ``cpu_seconds`` (of the
        task, per structure), ``peak_memory_mb`` and ``process`` (the peak
        resident memory and id of the process that ran it).

    Notes
    -----
    Dask's statistical profiler keeps a call tree in every worker, which
    grew by about 2.7 MB per replay task (0.5 MB without it): start the
    workers with ``distributed.worker.profile.enabled: False`` for long
    replays.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.fleet import Structure, replay_fleet
    >>> rng = np.random.default_rng(0)
    >>> y0 = np.tile([1, 2, 3, 4], 3)
    >>> fleet = [Structure(f"s{i}", rng.normal(3 * y0, 2.0)[:, None], y0,
    ...                    rng.normal(3.0, 2.0, (48, 1)), np.full(48, 2))
    ...          for i in range(2)]
    >>> path = os.path.join(tempfile.mkdtemp(), "fleet.db")
    >>> summary = replay_fleet(path, fleet, estimator=GaussianNB(),
    ...                        process=synthetic_decision_process())
    >>> summary["n_observations"].tolist()
    [48, 48]
    """
    url = str(store)
    if block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}.")
    replayer = _Replayer(
        url, estimator, process, budget, int(block), dict(agent_params or {})
    )
    if client is None:
        rows = replayer.run(list(structures))
    elif isinstance(client, str):
        from distributed import Client

        with Client(client) as own:
            rows = _on_dask(own, replayer, structures)
    else:
        rows = _on_dask(client, replayer, structures)
    return pd.DataFrame(rows)
