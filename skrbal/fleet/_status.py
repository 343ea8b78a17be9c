"""A fleet at a glance: one row per structure, read without any lock."""

from __future__ import annotations

import numpy as np
import pandas as pd

from skrbal import DecisionProcess
from skrbal.fleet._ledger import FleetLedger

__all__ = ["fleet_status"]


def _structure_row(store, name: str) -> dict:
    status = store.status(name)
    process = DecisionProcess.from_dict(store.configuration(name)["process"])
    history = store.history(name)
    states = [c for c in history.columns if c.startswith("belief_")]
    last = history.iloc[-1]
    belief = last[states].to_numpy(dtype=float)
    best = int(np.argmax(belief))
    names = process.state_names or [str(c) for c in process.classes_]
    actions = process.action_names or [str(a) for a in range(process.n_actions)]
    action = int(last["recommended_action"])
    return {
        "structure": name,
        "n_observations": status["n_observations"],
        "state_now": names[best],
        "belief_now": float(belief[best]),
        "recommended_action": actions[action],
        "n_open": status["n_open"],
        "n_overdue": status.get("n_expired", 0),
        "n_inspected": status["n_results"],
        "spend": status["spend"],
        "committed_spend": status["committed_spend"],
        "last_evpi": status["last_evpi"],
    }


def fleet_status(store, name: str = "fleet") -> tuple[dict, pd.DataFrame]:
    """The fleet budget's state and one row per structure of a store.

    Reads the store only, with no lock: an agent writing meanwhile is seen
    as of its last commit.

    Parameters
    ----------
    store : AgentStore
        The fleet's store.
    name : str, default="fleet"
        The fleet budget's name.

    Returns
    -------
    budget : dict
        :meth:`FleetLedger.status`.
    structures : DataFrame
        One row per agent: ``structure``, ``n_observations``, ``state_now``
        (the most probable state at the last step) and ``belief_now`` (its
        probability), ``recommended_action`` (by name), ``n_open`` (requests
        awaiting a result), ``n_overdue`` (expired past the agent's
        ``request_timeout``), ``n_inspected`` (results), ``spend`` and
        ``committed_spend`` (open requests included), ``last_evpi``.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.fleet import Fleet, FleetBudget, fleet_status
    >>> path = os.path.join(tempfile.mkdtemp(), "fleet.db")
    >>> with Fleet(path, budget=FleetBudget(limit=14.0, period=24.0)) as fleet:
    ...     _ = fleet.commission("bridge-1", [[-5.0], [0.0], [6.0], [19.0]],
    ...                          [1, 2, 3, 4], estimator=GaussianNB(),
    ...                          process=synthetic_decision_process())
    ...     _ = fleet.observe("bridge-1", [[-4.0], [-5.5]])
    ...     budget, table = fleet_status(fleet.store_)
    >>> budget["limit"], table.loc[0, "state_now"], int(table.loc[0, "n_observations"])
    (14.0, 'undamaged', 2)
    """
    budget = FleetLedger(store, name, create=False).status()
    rows = [_structure_row(store, agent) for agent in store.agent_names()]
    columns = [
        "structure",
        "n_observations",
        "state_now",
        "belief_now",
        "recommended_action",
        "n_open",
        "n_overdue",
        "n_inspected",
        "spend",
        "committed_spend",
        "last_evpi",
    ]
    return budget, pd.DataFrame(rows, columns=columns)
