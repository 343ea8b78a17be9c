"""The fleet budget as each agent's budget policy: one clearing rule, one purse."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval

from skrbal.budget import BudgetPolicy
from skrbal.exceptions import BudgetStarvedError, FleetDrawError
from skrbal.fleet._window import UNIT, DemandWindow, agent_key

__all__ = ["FleetBudget"]

_EPS = 1e-9
# The largest window of competing values: each draw writes the window to the
# budget's row, so it bounds the row (about 60 bytes per value).
MAX_WINDOW = 20_000


class FleetBudget(BudgetPolicy):
    """One budget for every structure of a fleet, cleared over its period.

    The agents of one store share ``limit`` per ``period``. A step is a
    *competitor* when an inspection is worth its cost on its own (net value
    ``EVPI - cost > 0``). The fleet keeps the net values of its competitors
    of the last period, from every structure, as units of demand: a
    structure's values not yet served by an inspection are one unit, worth
    its best (a structure that stays worth inspecting for a hundred steps
    needs one inspection, whose answer its model learns, not a hundred),
    and each granted inspection is a unit (the demand it met; the
    structure's values before it leave the window). A step is granted when
    the money its period may spend now can buy the units expected, over the
    rest of the period, to be worth more than it:

    .. math::

        r \\, s \\, (1 - f) < \\min(L - S_q, \\; L f + c - S_q) / c

    where ``r`` is the number of units of the last ``period`` (in the
    window) worth strictly more, other than the step's own structure's,
    ``s >= 1`` scales them to a whole period while the fleet has seen less
    than one, ``f`` is the elapsed fraction of the step's period, ``L - S_q``
    the money left in it and ``c`` the cost. The period's money is paced: by
    the fraction ``f`` it spends at most that share, one inspection ahead
    (``L f + c``), so wherever a record ends, a period has spent no more
    than its share, and money is left for damage later in the period. A
    step may *borrow* beyond the pace, up to the period's money, when its
    structure was not granted an inspection within the last ``memory``,
    its net value is above every value of the other structures over the
    last period but the latest ``h = period c / L`` (what the held-back
    money was expected to buy), and the ranking above holds with all the
    money left in the period: damage seen on several structures at once
    is inspected on each, not one per ``h``. The
    rule is a clearing price that moves with each draw: high values from
    any structure are granted, low ones only while money is left over for
    the rest of the period, so a high-value request of one structure is not
    crowded out by the earlier low-value requests of others, nor by the
    many steps of one structure that stays worth inspecting. A period's
    money is a hard cap that no draw of any agent can pass.

    The policy decides only within a draw of its fleet: the window and the
    money spent are the fleet's, read under the fleet's lock in the
    transaction that commits the agent's call (:class:`~skrbal.fleet.Fleet`
    runs each call so). The agent's own state is its copy of them.

    Parameters
    ----------
    limit : float
        Money per period for the whole fleet, > 0.
    period : float
        Length of a period, > 0, in the agents' time (seconds of their
        timestamps; steps without). Periods are
        ``[origin + j * period, origin + (j + 1) * period)``.
    origin : float, default=0.0
        Start of the period numbered 0.
    n_recent : int, default=2000
        Most competing values kept (the window of recent values), in
        [1, 20000]: the newest, those of the last ``period`` at most. When
        more arrive in a period, the window covers less than a period and
        ``s`` scales its counts up. (Not the commissioning ``window`` of
        :class:`~skrbal.fleet.FleetKnowledge`.)
    n_periods : int, default=64
        Periods whose spend the fleet keeps, in [1, 100000]: the period of
        the fleet's clock (the latest time drawn) and the ``n_periods - 1``
        before it. An agent may draw up to that far behind the fleet's
        latest time; a step worth inspecting in an older period is refused,
        since its period's spend is no longer kept. It bounds what each draw writes
        (the spend of at most ``n_periods`` periods, whatever the history).

    Raises
    ------
    FleetDrawError
        From :meth:`scan`, outside a draw of the fleet, or for a step worth
        inspecting in a period older than the ``n_periods`` kept.
    BudgetStarvedError
        From :meth:`scan`, when ``limit`` is below the cost of one inspection.

    See Also
    --------
    skrbal.budget.QuantileThreshold : A rank rule for one structure.
    skrbal.fleet.Fleet : Runs each agent's call as a draw on this budget.

    Notes
    -----
    ``s = period / max(span, period * c / L)``, where ``span`` is the time
    the window covers, at most one period (from the fleet's first step or
    the oldest value the window had to drop, to the latest time seen). In
    the fleet's first period, ``f`` counts from the fleet's first step in
    it (``L (t - t_0) / period + c``). Near the end of a period every
    competitor is granted, while money is left. Each agent drawing through
    :class:`~skrbal.fleet.Fleet` is named (:meth:`draw_snapshot`); values
    of an unnamed drawer, and those of a window written by an earlier
    version, count one each, as steps. A structure's step is not ranked
    against its own pending values, so deciding a block or its pieces in
    turn gives the same grants (while the window is not full).

    Examples
    --------
    >>> from skrbal.fleet import FleetBudget
    >>> budget = FleetBudget(limit=10.0, period=30.0)
    >>> budget.draw_snapshot({"seq": 3, **budget.fleet_state(budget.initial_state())})
    >>> step, state = budget.scan([0.5, 2.0, 3.0], [0.0, 1.0, 2.0],
    ...                           [True, True, True], 1.0, budget.initial_state())
    >>> step, state["spent"]
    (1, {'0': 1.0})
    """

    _parameter_constraints: ClassVar[dict] = {
        "limit": [Interval(Real, 0, None, closed="neither")],
        "period": [Interval(Real, 0, None, closed="neither")],
        "origin": [Interval(Real, None, None, closed="neither")],
        "memory": [Interval(Real, 0, None, closed="neither"), None],
        "n_recent": [Interval(Integral, 1, MAX_WINDOW, closed="both")],
        "n_periods": [Interval(Integral, 1, 100_000, closed="both")],
    }

    _state_schema: ClassVar[dict] = {
        "draw": ("int", False),
        "first_time": ("float", True),
        "clock": ("float", True),
        "cost": ("amount", True),
        "recent_times": ("floats", False),
        "recent_values": ("floats", False),
        "recent_agents": ("floats", False),
    }

    def __init__(
        self, *, limit, period, origin=0.0, memory=None, n_recent=2000, n_periods=64
    ):
        self.limit = limit
        self.period = period
        self.origin = origin
        self.memory = memory
        self.n_recent = n_recent
        self.n_periods = n_periods

    @property
    def _memory(self) -> float:
        return self.period if self.memory is None else min(self.memory, self.period)

    @property
    def _chunk_size(self):
        # A step is ranked against the window and the chunk's earlier steps.
        return 256

    # -------------------------------------------------------------- #
    # the draw this policy decides in
    # -------------------------------------------------------------- #
    def draw_snapshot(self, snapshot, agent=None) -> None:
        """Decide within a fleet draw whose state is ``snapshot`` (None: none).

        Parameters
        ----------
        snapshot : dict or None
            The fleet's state read under its lock: ``seq`` (its last event,
            unique to the draw) and the entries of :meth:`fleet_state`.
        agent : str, default=None
            The name of the agent that draws. Its competing values carry a
            key of it, so the fleet counts each structure's pending demand
            once; ``None``: an unnamed drawer, each of whose values counts
            on its own.
        """
        self._snapshot = None if snapshot is None else dict(snapshot)
        self._agent_key = agent_key(agent)

    def fleet_state(self, state) -> dict:
        """The fleet's part of a state of this policy (all but the draw).

        Parameters
        ----------
        state : dict
            A state of this policy.

        Returns
        -------
        fleet_state : dict
            ``first_time``, ``clock`` (the latest time seen), ``cost`` (of
            an inspection, at the last draw), the window
            ``recent_times`` and ``recent_values`` and ``spent`` (money per
            period number, keys as strings, of the ``n_periods`` periods
            up to the clock's).
        """
        fleet = {k: v for k, v in state.items() if k != "draw"}
        if state["clock"] is not None:
            # The fleet keeps the open periods only (a draw records what it
            # took before they close: the agent's state holds it).
            first_open = self.first_open_period(state["clock"])
            fleet["spent"] = {
                k: v for k, v in state["spent"].items() if int(k) >= first_open
            }
        return fleet

    def state_of(self, snapshot) -> dict:
        """The fleet's state as this policy's state, at the start of a draw.

        Parameters
        ----------
        snapshot : dict
            As for :meth:`draw_snapshot`.

        Returns
        -------
        state : dict
        """
        return {
            "draw": int(snapshot["seq"]),
            "first_time": snapshot["first_time"],
            "clock": snapshot["clock"],
            "cost": snapshot["cost"],
            "recent_times": [float(t) for t in snapshot["recent_times"]],
            "recent_values": [float(v) for v in snapshot["recent_values"]],
            # A window of an earlier version: each of its values a unit.
            "recent_agents": [
                float(a)
                for a in snapshot.get(
                    "recent_agents", [UNIT] * len(snapshot["recent_values"])
                )
            ],
            "spent": {str(k): float(v) for k, v in snapshot["spent"].items()},
        }

    def clearing_price(self, state, time=None) -> float:
        """The net value a step needs now to be granted (0: any competitor).

        Parameters
        ----------
        state : dict
            A state of this policy (or :meth:`fleet_state`).
        time : float, default=None
            The time of the step; ``None`` is the fleet's clock.

        Returns
        -------
        price : float
            The smallest ``EVPI - cost`` granted at ``time`` within the
            pace (0 before any draw), ``inf`` if the pace has no money now.
            A step below it may still borrow beyond the pace (see above).
        """
        time = state["clock"] if time is None else time
        cost = state["cost"]
        if time is None or cost is None:
            return 0.0
        times = np.array([float(time)])
        k_left, per_rank = self._money_left(times, cost, state)
        if k_left[0] <= 0:
            return float("inf")
        allowed = int(np.ceil(k_left[0] / per_rank[0]) - 1.0)
        ranked = np.sort(self._window(state).units(time - self._memory))[::-1]
        return float(ranked[allowed]) if allowed < ranked.size else 0.0

    def _money_left(self, times, cost, state, clock=None, *, paced=True):
        """Inspections the money left buys (0: none), and competitors per rank.

        Per step: the money its period may spend now, in inspections (paced,
        or all that is left in it), and ``s (1 - f)``, the competitors
        expected over the rest of the period per unit of the window above it.
        """
        spent = self._spent_at(times, state)
        left = self.limit - spent
        first = state["first_time"] if state["first_time"] is not None else times[0]
        if clock is None:
            latest = times.max()
            if state["clock"] is not None:
                latest = max(latest, state["clock"])
            clock = np.full(times.shape, latest)
        span = np.minimum(clock - first, self._memory)
        # Paced: by a fraction f of its period (from the fleet's first step,
        # in its first period), a period spends at most f of its money, one
        # inspection ahead. Wherever a record ends, it has spent its share of
        # the period's money, no more; the ranking decides what it buys.
        start = np.maximum(
            first,
            self.origin + np.floor((times - self.origin) / self.period) * self.period,
        )
        if paced:
            left = np.minimum(
                left, self.limit * (times - start) / self.period + cost - spent
            )
        k_left = np.where(left + _EPS * self.limit >= cost, left / cost, 0.0)
        shortest = min(self._memory, self.period * cost / self.limit)
        scale = self.period / np.maximum(span, shortest)
        elapsed = (times - self.origin) / self.period
        remaining = 1.0 - (elapsed - np.floor(elapsed))
        return k_left, scale * remaining

    def _current(self, state) -> dict:
        snapshot = getattr(self, "_snapshot", None)
        if snapshot is None:
            raise FleetDrawError(
                "a FleetBudget decides only within a draw of its fleet: observe "
                "through skrbal.fleet.Fleet.observe, which reads the fleet's "
                "window and spend under its lock."
            )
        if state["draw"] != snapshot["seq"]:
            return self.state_of(snapshot)  # the first scan of this draw
        return state

    # -------------------------------------------------------------- #
    # BudgetPolicy
    # -------------------------------------------------------------- #
    def _initial_state(self) -> dict:
        return {
            "draw": -1,
            "first_time": None,
            "clock": None,
            "cost": None,
            "recent_times": [],
            "recent_values": [],
            "recent_agents": [],
            "spent": {},
        }

    def _check_state(self, state) -> None:
        if isinstance(state, dict) and "recent_agents" not in state:
            # An agent's state of an earlier version (a draw starts from the
            # fleet's state anyway): each of its window's values a unit.
            state = {**state, "recent_agents": [UNIT] * len(state["recent_values"])}
        super()._check_state(state)
        lengths = {len(state[k]) for k in ("recent_times", "recent_values")}
        if len(lengths | {len(state["recent_agents"])}) != 1:
            raise ValueError(
                "state['recent_times'], state['recent_values'] and "
                "state['recent_agents'] of FleetBudget must have one entry each "
                "per competitor."
            )

    @staticmethod
    def _window(state) -> DemandWindow:
        agents = state.get("recent_agents")
        if agents is None:
            agents = [UNIT] * len(state["recent_values"])
        return DemandWindow(state["recent_times"], state["recent_values"], agents)

    @property
    def _own(self) -> float:
        return getattr(self, "_agent_key", UNIT)

    def first_open_period(self, clock) -> int:
        """The oldest period whose spend the fleet keeps at ``clock``.

        Parameters
        ----------
        clock : float
            The fleet's latest time drawn.

        Returns
        -------
        period : int
            ``n_periods - 1`` periods before the period of ``clock``.

        Examples
        --------
        >>> from skrbal.fleet import FleetBudget
        >>> FleetBudget(limit=1.0, period=10.0, n_periods=3).first_open_period(55.0)
        3
        """
        return int(self._period_of(np.array([clock]))[0]) - self.n_periods + 1

    def _check_open(self, times, state) -> None:
        if state["clock"] is None or times.size == 0:
            return
        first_open = self.first_open_period(state["clock"])
        period = int(self._period_of(times[:1])[0])
        if period < first_open:
            raise FleetDrawError(
                f"FleetBudget: a step at time {float(times[0])!r} is in period "
                f"{period}, which the fleet has closed: its clock is at "
                f"{float(state['clock'])!r} (period {first_open + self.n_periods - 1})"
                f" and it keeps the spend of the last n_periods={self.n_periods} "
                "periods only. Feed the fleet's agents closer together in time, "
                "or create the budget with a larger n_periods."
            )

    def _period_of(self, times) -> np.ndarray:
        return np.floor((np.asarray(times) - self.origin) / self.period)

    def _spent_at(self, times, state) -> np.ndarray:
        periods = self._period_of(times)
        unique, where = np.unique(periods, return_inverse=True)
        spent = np.array([state["spent"].get(str(int(q)), 0.0) for q in unique])
        return spent[where.reshape(-1)]

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        if self.limit < cost:
            raise BudgetStarvedError(
                f"FleetBudget: the money of a period, {self.limit:g}, is below the "
                f"cost of one inspection, {cost:g}, so the fleet can never inspect."
                " Raise the limit or lengthen the period."
            )
        state = self._current(state)
        value = evpi - cost
        worth = value > 0
        self._check_open(times[worth], state)
        horizon = times - self._memory
        clock = np.maximum.accumulate(times)
        if state["clock"] is not None:
            clock = np.maximum(clock, state["clock"])
        k_left, per_rank = self._money_left(times, cost, state, clock=clock)
        # Units of demand above each step: in the window and, for an unnamed
        # drawer, its steps earlier in the call (a named structure's own
        # pending values are its demand, of which the step is the latest
        # view).
        above = self._window(state).above(value, horizon, self._own)
        if self._own == UNIT:
            earlier = np.tri(times.shape[0], k=-1, dtype=bool)
            above += np.count_nonzero(
                earlier
                & worth[None, :]
                & (value[None, :] > value[:, None])
                & (times[None, :] > horizon[:, None]),
                axis=1,
            )
        # Granted when the money left buys every competitor expected above.
        allowed = np.ceil(k_left / per_rank) - 1.0
        paced = (k_left > 0) & (above <= allowed)
        borrows = self._borrows(value, times, cost, state, above, clock)
        return worth & (paced | borrows)

    def _borrows(self, value, times, cost, state, above, clock) -> np.ndarray:
        """Per step: whether it may spend beyond the pace, from the period's rest.

        The pace holds money back for what the rest of the period may offer.
        A step worth more than anything the fleet's other structures offered
        over the last period, before the latest ``h = period c / L`` (the
        time the pace takes to free one inspection), is worth more than what
        that money is held back for, so it may borrow it: damage seen on
        several structures at once is inspected on each, not one per ``h``.
        The burst of the last ``h`` does not raise the bar for its own
        members. A structure borrows at most once per ``memory`` (its
        granted value is in the window): after the answer, its model knows
        what it saw, and its next steps wait for the pace. Only a named
        drawer, with a whole period seen, borrows; the period's money is
        still the cap, and the ranking is on all of it.
        """
        own = self._own
        if own == UNIT or state["first_time"] is None:
            return np.zeros(times.shape, dtype=bool)
        horizon = times - self._memory
        k_full, per_rank = self._money_left(
            times, cost, state, clock=clock, paced=False
        )
        window = self._window(state)
        bar = window.best_before(times - self.period * cost / self.limit, horizon, own)
        return (
            (times - state["first_time"] >= self._memory)
            & (value > np.maximum(bar, 0.0))
            & ~window.served_since(horizon, own)
            & (k_full > 0)
            & (above <= np.ceil(k_full / per_rank) - 1.0)
        )

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        state = self._current(state)
        worth = evpi - cost > 0
        first = state["first_time"]
        if first is None:
            first = float(times[0])
        clock = float(times.max())
        if state["clock"] is not None:
            clock = max(clock, float(state["clock"]))
        window = self._window(state).add(
            times[worth], (evpi - cost)[worth], self._own, served=inspected
        )
        live = window.times > clock - self._memory
        recent_t, recent_v = window.times[live], window.values[live]
        recent_a = window.agents[live]
        if recent_t.size > self.n_recent:
            # The newest values stay: the window covers less than a period.
            order = np.argsort(recent_t, kind="stable")
            dropped = order[: recent_t.size - self.n_recent]
            first = max(first, float(recent_t[dropped].max()))
            kept = np.sort(order[recent_t.size - self.n_recent :])
            recent_t, recent_v = recent_t[kept], recent_v[kept]
            recent_a = recent_a[kept]
        spent = dict(state["spent"])
        if inspected:
            key = str(int(self._period_of(times[-1:])[0]))
            spent[key] = spent.get(key, 0.0) + cost
        return {
            "draw": state["draw"],
            "first_time": first,
            "clock": clock,
            "cost": float(cost),
            "recent_times": recent_t.tolist(),
            "recent_values": recent_v.tolist(),
            "recent_agents": recent_a.tolist(),
            "spent": spent,
        }
