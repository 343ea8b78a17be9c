"""The fleet's window of competing values, as units of demand for inspections."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

__all__ = ["UNIT", "DemandWindow", "agent_key", "served_key"]

# The key of a value that counts on its own: one of an unnamed drawer, or of
# a window written before values had structures (or before a granted value
# kept its structure, see served_key).
UNIT = -1.0


def agent_key(name) -> float:
    """The key of agent ``name`` in the fleet's window (:data:`UNIT` for None).

    48 bits of the name's SHA-256: an integer a float holds exactly, the
    same in every process (unlike the store's agent ids, numbered in the
    order agents are commissioned).
    """
    if name is None:
        return UNIT
    return float(int(hashlib.sha256(str(name).encode()).hexdigest()[:12], 16))


def served_key(key: float) -> float:
    """The key of a granted value of the structure of key ``key`` (>= 0).

    Below :data:`UNIT`, so it counts on its own as a unit, yet names the
    structure it served: ``-2 - key``.

    Examples
    --------
    >>> from skrbal.fleet._window import served_key
    >>> served_key(5.0)
    -7.0
    """
    return -2.0 - key


class DemandWindow:
    """The competitors of the last period, as units of demand for inspections.

    The window holds net values (``EVPI - cost > 0``) with their times and
    the key of the structure (agent) that saw them. A structure's values not
    yet served by an inspection are *one* unit of demand, worth its best
    live value: a structure that stays worth inspecting for a hundred steps
    (damage) needs one inspection, whose answer its model learns, not a
    hundred. A granted inspection is a unit of its own (the demand it met,
    keyed by :func:`served_key` of its structure), and so is each value of
    key :data:`UNIT` (an unnamed drawer, or a window written before values
    had structures): every negative key is a unit on its own.

    Parameters
    ----------
    times, values, agents : array-like of float
        The window's entries, one each per value.

    Examples
    --------
    >>> from skrbal.fleet._window import DemandWindow
    >>> w = DemandWindow([0.0, 1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 2.0],
    ...                  [1.0, 1.0, 1.0, -1.0])
    >>> w.units(horizon=-1.0).tolist()  # structure 1 once, at its best
    [2.0, 7.0]
    >>> w.above([1.0], horizon=[-1.0], own=2.0).tolist()
    [2]
    >>> w.above([1.0], horizon=[-1.0], own=1.0).tolist()  # not itself
    [1]
    """

    def __init__(self, times, values, agents):
        self.times = np.asarray(times, dtype=float)
        self.values = np.asarray(values, dtype=float)
        self.agents = np.asarray(agents, dtype=float)

    def units(self, horizon: float) -> np.ndarray:
        """The values of the units of demand later than ``horizon``."""
        live = self.times > horizon
        values, agents = self.values[live], self.agents[live]
        single = agents < 0
        keys, where = np.unique(agents[~single], return_inverse=True)
        best = np.full(keys.shape[0], -np.inf)
        np.maximum.at(best, where.reshape(-1), values[~single])
        return np.concatenate([values[single], best])

    def above(self, values, horizon, own: float) -> np.ndarray:
        """Per step: the units worth more than its value, live at its time.

        Parameters
        ----------
        values : ndarray of shape (n_steps,)
            The steps' net values.
        horizon : ndarray of shape (n_steps,)
            Per step, the time after which the window's values are live.
        own : float
            The key of the structure the steps are of: its own pending
            values are its demand, of which the step is the latest view,
            and do not compete with it. :data:`UNIT`: they do.

        Returns
        -------
        count : ndarray of int of shape (n_steps,)
        """
        values = np.asarray(values, dtype=float)
        higher = (self.values[None, :] > values[:, None]) & (
            self.times[None, :] > np.asarray(horizon, dtype=float)[:, None]
        )
        single = self.agents < 0
        count = np.count_nonzero(higher[:, single], axis=1)
        pending = ~single & (self.agents != own)
        if not pending.any():
            return count
        _, where = np.unique(self.agents[pending], return_inverse=True)
        by_agent = np.zeros((values.shape[0], int(where.max()) + 1), dtype=bool)
        rows, cols = np.nonzero(higher[:, pending])
        by_agent[rows, where.reshape(-1)[cols]] = True
        return count + np.count_nonzero(by_agent, axis=1)

    def best_before(self, cutoff, horizon, own: float) -> np.ndarray:
        """Per step: the best value live at its horizon and seen by its cutoff.

        The values of other structures and the units (granted values, those
        of unnamed drawers) with ``horizon < time <= cutoff``; not the
        structure's own pending values (its demand, of which the step is
        the latest view). ``-inf`` where there are none.

        Parameters
        ----------
        cutoff, horizon : ndarray of shape (n_steps,)
        own : float
            The key of the steps' structure.

        Returns
        -------
        best : ndarray of shape (n_steps,)
        """
        cutoff = np.asarray(cutoff, dtype=float)
        horizon = np.asarray(horizon, dtype=float)
        keep = self.agents != own if own != UNIT else np.ones(self.agents.shape, bool)
        times, values = self.times[keep], self.values[keep]
        seen = (times[None, :] > horizon[:, None]) & (times[None, :] <= cutoff[:, None])
        if values.size == 0:
            return np.full(cutoff.shape, -np.inf)
        return np.where(seen, values[None, :], -np.inf).max(axis=1)

    def served_since(self, horizon, own: float) -> np.ndarray:
        """Per step: whether structure ``own`` was granted after its horizon."""
        horizon = np.asarray(horizon, dtype=float)
        if own == UNIT:
            return np.ones(horizon.shape, dtype=bool)
        times = self.times[self.agents == served_key(own)]
        return (times[None, :] > horizon[:, None]).any(axis=1)

    def add(self, times, values, own: float, *, served: bool) -> DemandWindow:
        """The window with a structure's new competing values.

        ``served``: the last of them was granted an inspection. The
        structure's pending values (those before included) leave the
        window, and the granted value stays as a unit of its own: the
        demand the inspection met. Pending values that a later value of
        the same structure matches or passes leave too: they expire before
        it and never count beyond it (the structure's best is unchanged at
        every later time).
        """
        new = np.asarray(times, dtype=float)
        times = np.concatenate([self.times, new])
        values = np.concatenate([self.values, np.asarray(values, dtype=float)])
        agents = np.concatenate([self.agents, np.full(new.shape[0], own)])
        if served and own != UNIT and new.size:
            keep = agents != own
            keep[-1] = True
            agents[-1] = served_key(own)
            times, values, agents = times[keep], values[keep], agents[keep]
        return DemandWindow(times, values, agents)._compact()

    def _compact(self) -> DemandWindow:
        """Without the pending values a later one of their structure covers."""
        index = np.flatnonzero(self.agents >= 0)
        if index.size < 2:
            return self
        # Newest first, by structure: a value is covered when a newer value
        # of its structure is at least as high.
        order = index[np.lexsort((-self.times[index], self.agents[index]))]
        newest_first = pd.DataFrame(
            {"agent": self.agents[order], "value": self.values[order]}
        )
        best = newest_first.groupby("agent", sort=False)["value"].cummax()
        newer_best = best.groupby(newest_first["agent"]).shift(1)
        covered = (newest_first["value"] <= newer_best).to_numpy()
        keep = np.ones(self.times.size, dtype=bool)
        keep[order[covered]] = False
        return DemandWindow(self.times[keep], self.values[keep], self.agents[keep])
