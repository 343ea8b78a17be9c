"""Fleets: the agents of one store drawing on one budget, replayed at scale.

An asset owner monitors many similar structures, each with its own
:class:`~skrbal.online.RiskBasedAgent` in one store. :class:`FleetBudget` is
one budget for all of them: an inspection is granted where its value minus
its cost is highest across the fleet, paced over the period, and a period's
money is never overspent, however many processes draw at once.
:class:`Fleet` runs each agent's call as a draw under the fleet lock, in the
transaction that commits the call; :class:`FleetLedger` keeps the draws in a
hash-chained event log that :meth:`FleetLedger.verify` checks.
:class:`FleetKnowledge` reads what the agents of a store learned and gives
a new structure's classifier the fleet's prior (shared strength).
:func:`replay_fleet` replays the streams of many structures into a store,
serially or on Dask.
"""

from skrbal._lazy import lazy_attributes

_LAZY = {
    "Fleet": "skrbal.fleet._fleet",
    "FleetBudget": "skrbal.fleet._policy",
    "FleetDrawError": "skrbal.exceptions",
    "FleetKnowledge": "skrbal.fleet._shared",
    "FleetLedger": "skrbal.fleet._ledger",
    "Structure": "skrbal.fleet._replay",
    "fleet_status": "skrbal.fleet._status",
    "replay_fleet": "skrbal.fleet._replay",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
