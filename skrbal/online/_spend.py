"""What an agent's inspections cost: spend from counts of requests."""

from __future__ import annotations

from math import fsum

__all__ = ["inspection_spend", "routine_spend"]

# Requests whose inspection may still report: their cost is committed.
_WAITING = ("open", "expired")


def inspection_spend(counts, inspection_cost: float, methods=None) -> dict:
    """Spend of the requests with a result, and committed with the open ones.

    Parameters
    ----------
    counts : dict
        ``(method, status) -> number of requests``; ``method`` is the
        inspection method's name (``None`` for the process's perfect
        inspection) and ``status`` one of ``open``, ``done``, ``cancelled``,
        ``expired``.
    inspection_cost : float
        The process's inspection cost (used without ``methods``).
    methods : list of dict, default=None
        The agent's inspection methods as stored (``name`` and ``cost``).

    Returns
    -------
    spend : dict
        ``spend`` (requests with a result), ``committed_spend`` (open ones
        too) and, with ``methods``, ``n_inspections_by_method`` and
        ``spend_by_method``. Cancelled requests cost nothing; expired ones
        stay committed (their result may still come).

    Examples
    --------
    >>> from skrbal.online._spend import inspection_spend
    >>> inspection_spend({(None, "done"): 2, (None, "open"): 1}, 7.0)
    {'spend': 14.0, 'committed_spend': 21.0}
    """
    if methods is None:
        done = sum(n for (_, status), n in counts.items() if status == "done")
        opened = sum(n for (_, status), n in counts.items() if status in _WAITING)
        cost = float(inspection_cost)
        return {"spend": cost * done, "committed_spend": cost * (done + opened)}
    costs = {m["name"]: float(m["cost"]) for m in methods}
    done = dict.fromkeys(costs, 0)
    opened = dict.fromkeys(costs, 0)
    for (name, status), n in counts.items():
        if status == "done":
            done[name] += n
        elif status in _WAITING:
            opened[name] += n
    spends = {name: done[name] * costs[name] for name in costs}
    return {
        "spend": fsum(spends.values()),
        "committed_spend": fsum((done[n] + opened[n]) * costs[n] for n in costs),
        "n_inspections_by_method": done,
        "spend_by_method": spends,
    }


def routine_spend(counts, inspection_cost: float, methods=None) -> float:
    """Spend of the routine inspections (labels the agent did not request).

    Parameters
    ----------
    counts : dict
        ``method -> number of routine inspections``; ``None`` is the
        process's perfect inspection, at ``inspection_cost``.
    inspection_cost : float
        The process's inspection cost.
    methods : list of dict, default=None
        The agent's inspection methods as stored (``name`` and ``cost``).

    Returns
    -------
    spend : float

    Examples
    --------
    >>> from skrbal.online._spend import routine_spend
    >>> routine_spend({None: 2}, 7.0)
    14.0
    """
    costs = {m["name"]: float(m["cost"]) for m in methods or ()}
    costs[None] = float(inspection_cost)
    return fsum(n * costs[name] for name, n in counts.items())
