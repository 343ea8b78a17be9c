"""The timeline of a live agent: beliefs, EVPI, inspections, actions, spend."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from skrbal.plotting._base import _pyplot, plain_text
from skrbal.plotting._states import _match_states

__all__ = ["AgentHistoryDisplay"]

# Times at or after this many seconds (1973-03-03) are read as dates by
# time_axis='auto': seconds counted from a start of the record stay below it
# for three years, epoch seconds of any monitoring record exceed it.
_EPOCH_DATES_FROM = 1e8
_TIME_AXES = ("auto", "step", "seconds", "datetime")
# How a request without a known state is drawn (a known one has its state's
# colour): open and expired ones may still report, cancelled ones never.
_WAITING_STYLE = {
    "open": dict(marker="o", facecolors="none", edgecolors="black"),
    "expired": dict(marker="v", facecolors="none", edgecolors="grey"),
    # Large and dark: a cancel is a decision to read, not a speck (28.16).
    "cancelled": dict(marker="x", color="black", s=70, linewidths=2),
    "done": dict(marker="D", facecolors="none", edgecolors="black"),
}
_PERIODIC = ("SpendCap", "PacedBudget")
# Legends beside the panels: inside, they would hide the latest steps.
_LEGEND = dict(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")


def _periodic_budget(budget) -> dict | None:
    """``limit``, ``period``, ``origin`` and ``policy`` of a periodic budget.

    ``budget`` is a budget policy or its stored JSON description; the first
    :class:`~skrbal.budget.SpendCap` or :class:`~skrbal.budget.PacedBudget`
    found (in an ``AllOf`` too) is used, ``None`` without one.
    """
    if budget is None:
        return None
    if isinstance(budget, dict):
        kind = str(budget.get("__estimator__", "")).rsplit(".", 1)[-1]
        params = budget.get("params", {})
        members = params.get("policies", []) if kind == "AllOf" else []
    else:
        kind = type(budget).__name__
        params = budget.get_params(deep=False) if kind in _PERIODIC else {}
        members = getattr(budget, "policies", []) if kind == "AllOf" else []
    if kind in _PERIODIC:
        return {
            "policy": kind,
            "limit": float(params["limit"]),
            "period": float(params["period"]),
            "origin": float(params.get("origin", 0.0)),
        }
    for member in members:
        found = _periodic_budget(member)
        if found is not None:
            return found
    return None


def _method_costs(inspections) -> dict | None:
    """Method name to cost, from inspection methods or their stored JSON."""
    if inspections is None:
        return None
    costs = {}
    for method in inspections:
        if isinstance(method, dict):
            costs[method["name"]] = float(method["cost"])
        else:
            costs[method.name] = float(method.cost)
    return costs


def _as_state(value, states):
    """``value`` as one of ``states`` labels it, ``None`` when missing.

    A frame with missing values holds the integer state 4 as 4.0, and
    without a process the states are the text of the belief columns.
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    texts = {str(value)}
    if isinstance(value, float) and value.is_integer():
        texts.add(str(int(value)))
    for state in states:
        if state == value or str(state) in texts:
            return state
    return value


def _given_time_axis(settings: dict) -> str:
    """The time axis of an agent's times as they were given to it.

    An agent keeps how its commissioning's times were given (its
    ``time_format`` setting): dates are drawn as dates and seconds as seconds
    whatever their size. An agent stored before that setting existed is
    guessed at (``'auto'``).
    """
    return {"iso": "datetime", "seconds": "seconds"}.get(
        settings.get("time_format"), "auto"
    )


def _time_axis(history: pd.DataFrame, time_axis: str) -> tuple[str, np.ndarray]:
    """The kind of time to draw and the budget's time of each row."""
    if time_axis not in _TIME_AXES:
        raise ValueError(f"time_axis must be one of {_TIME_AXES}, got {time_axis!r}.")
    stamps = history["timestamp"].to_numpy(dtype=np.float64)
    has_times = stamps.size > 0 and not np.isnan(stamps).all()
    if time_axis == "auto":
        if not has_times:
            time_axis = "step"
        elif np.nanmin(stamps) >= _EPOCH_DATES_FROM:
            time_axis = "datetime"
        else:
            time_axis = "seconds"
    elif time_axis != "step" and stamps.size > 0 and not has_times:
        # (No observation yet, as after commissioning: nothing to draw.)
        raise ValueError(
            f"time_axis={time_axis!r} needs timestamps; the agent has none "
            "(its clock counts steps): use time_axis='step'."
        )
    clock = history["step"].to_numpy(dtype=np.float64)
    return time_axis, (clock if time_axis == "step" else stamps)


def _shown_times(clock: np.ndarray, time_axis: str):
    """Times as drawn: datetimes (naive UTC) for ``'datetime'``, else numbers."""
    if time_axis == "datetime":
        # Nanoseconds whatever the pandas version (pandas 3 keeps seconds).
        return pd.to_datetime(clock, unit="s").to_numpy(dtype="datetime64[ns]")
    return clock


class AgentHistoryDisplay:
    """Timeline of a live agent: beliefs, EVPI, inspections, actions, spend.

    Four panels share the time axis: the belief in each health state (in its
    colour, see :func:`state_styles`); the EVPI of each observation against
    the inspection cost, with a marker per inspection request (filled in the
    colour of the state found, hollow while it waits, a cross if
    cancelled); the action of each step; and the inspection spend, within
    each budget period against the period's limit when the agent has a
    periodic budget (:class:`~skrbal.budget.SpendCap`,
    :class:`~skrbal.budget.PacedBudget`), else cumulative. Commissioning
    samples have no belief and are not drawn. Create it with
    :meth:`from_agent`, :meth:`from_store` or :meth:`from_history`; all
    parameters are stored as attributes.

    Parameters
    ----------
    time : ndarray of shape (n_steps,)
        Time of each observation as drawn: steps, seconds or datetimes.
    beliefs : DataFrame of shape (n_steps, n_states)
        Belief in each state (columns: the state labels).
    evpi : ndarray of shape (n_steps,)
        EVPI of each observation.
    actions : ndarray of shape (n_steps,)
        Action of each step (taken, else optimal for the state found, else
        recommended), as :meth:`skrbal.online.AgentStore.history` gives it.
    requests : DataFrame
        One row per inspection request: ``time`` (as drawn), ``clock`` (the
        budget's time: step or seconds), ``request_id``, ``status``,
        ``label`` (the state found, missing while unknown), ``evpi`` and
        ``cost``.
    inspection_cost : float
        The process's inspection cost.
    styles : dict
        State label to :class:`StateStyle`.
    budget : dict, default=None
        ``policy``, ``limit``, ``period`` and ``origin`` of the periodic
        budget, in the budget's time; ``None`` without one. The limit drawn
        is the budget's ``limit`` per period (a
        :class:`~skrbal.budget.PacedBudget` with ``carry_over`` may spend
        more in a period, from what earlier ones left).
    action_names : list of str, default=None
        Names of the actions, by index.
    time_axis : {'step', 'seconds', 'datetime'}, default='step'
        What ``time`` holds.

    Attributes
    ----------
    belief_lines_ : dict of matplotlib Line2D
        State label to its belief line.
    evpi_line_ : matplotlib Line2D
        The EVPI.
    cost_line_ : matplotlib Line2D
        The inspection cost.
    request_markers_ : dict of matplotlib PathCollection
        A state label (requests with that result) or a status (``open``,
        ``expired``, ``cancelled``, ``done`` without a known state) to its
        markers.
    action_line_ : matplotlib Line2D
        The action of each step.
    spend_lines_ : dict of matplotlib Line2D
        ``'spend'`` (results) and ``'committed'`` (results and waiting
        requests), per period with a periodic budget.
    limit_line_ : matplotlib Line2D or None
        The limit of a period, with a periodic budget.
    axes_ : ndarray of matplotlib Axes
        The four panels: beliefs, EVPI, actions, spend.
    ax_ : matplotlib Axes
        The last panel (spend), which carries the time axis.
    figure_ : matplotlib Figure
        Figure holding the panels.

    See Also
    --------
    skrbal.online.RiskBasedAgent : The live agent.
    skrbal.online.AgentStore.history : The history drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.online import RiskBasedAgent
    >>> from skrbal.plotting import AgentHistoryDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([1, 2, 3, 4], 20)
    >>> X = rng.normal(np.array([-5.0, -0.7, 5.8, 9.0])[y - 1], 2.0)[:, None]
    >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
    >>> agent = RiskBasedAgent(estimator=GaussianNB(), process=process)
    >>> agent = agent.fit(X[:8], y[:8])
    >>> decisions = agent.observe(X[8:])
    >>> agent.record_inspection(1, 4)
    1
    >>> display = AgentHistoryDisplay.from_agent(agent)
    >>> len(display.axes_), display.evpi_line_.get_xdata().size
    (4, 72)
    >>> list(display.request_markers_)  # a result (state 4), open requests
    [4, 'open']
    >>> display.belief_lines_[4].get_label()
    'failure'
    """

    def __init__(
        self,
        *,
        time,
        beliefs: pd.DataFrame,
        evpi,
        actions,
        requests: pd.DataFrame,
        inspection_cost: float,
        styles: dict,
        budget: dict | None = None,
        action_names=None,
        time_axis: str = "step",
    ):
        self.time = time
        self.beliefs = beliefs
        self.evpi = evpi
        self.actions = actions
        self.requests = requests
        self.inspection_cost = inspection_cost
        self.styles = styles
        self.budget = budget
        self.action_names = action_names
        self.time_axis = time_axis

    # ------------------------------------------------------------------ #
    # constructors
    # ------------------------------------------------------------------ #
    @classmethod
    def from_history(
        cls,
        history: pd.DataFrame,
        *,
        process=None,
        budget=None,
        inspections=None,
        time_axis: str = "auto",
        ax=None,
        axes="deprecated",
        draw: bool = True,
    ) -> AgentHistoryDisplay:
        """Draw the timeline of an agent's history.

        Parameters
        ----------
        history : Bunch or DataFrame
            An agent's ``history_`` (of :class:`skrbal.online.RiskBasedAgent`,
            as a learner's ``history_`` is given to the other Displays'
            ``from_history``), or its ``steps`` as
            :meth:`skrbal.online.AgentStore.history` returns them.
        process : DecisionProcess, default=None
            The agent's process: the names of its states and actions and its
            inspection cost. Without it the states are named by their labels
            and the cost line is not drawn.
        budget : BudgetPolicy or dict, default=None
            The agent's budget policy, or its stored JSON description; a
            periodic one sets the periods and the limit of the spend panel.
        inspections : list of InspectionMethod or dict, default=None
            The agent's inspection methods (or their stored JSON): a request
            costs its method's cost; without them, the inspection cost.
        time_axis : {'auto', 'step', 'seconds', 'datetime'}, default='auto'
            The time drawn. ``'auto'``: steps for an agent without
            timestamps, dates (UTC) when the timestamps are seconds since
            1970 of a date after 1973-03-03 (times given as dates are stored
            so), else seconds.
        ax : array-like of 4 matplotlib Axes, default=None
            Where to draw the beliefs, EVPI, actions and spend; a new figure
            when ``None``.
        axes : array-like of 4 matplotlib Axes
            Deprecated: ``ax``, as in the other Displays (read, with a
            :class:`FutureWarning`).
        draw : bool, default=True
            Whether to draw. ``False`` only reads the history into the
            display's attributes (no matplotlib needed): call :meth:`plot`
            to draw it later.

        Returns
        -------
        display : AgentHistoryDisplay

        Raises
        ------
        ValueError
            If a column of the history is missing, ``time_axis`` is unknown
            or needs timestamps the agent has not, or ``process`` lacks a
            state of the history.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> from skrbal.plotting import AgentHistoryDisplay
        >>> history = pd.DataFrame({
        ...     "step": [0, 1, 2], "kind": "observation",
        ...     "timestamp": [1.7e9, 1.7e9 + 3600, 1.7e9 + 7200],
        ...     "evpi": [9.0, 2.0, 1.0], "belief_1": [0.5, 0.9, 0.95],
        ...     "belief_2": [0.5, 0.1, 0.05], "request_id": [1, None, None],
        ...     "request_status": ["done", None, None], "label": [1, None, None],
        ...     "action": [0, 0, 0]})
        >>> display = AgentHistoryDisplay.from_history(history)
        >>> display.time_axis, str(display.time[0])
        ('datetime', '2023-11-14T22:13:20.000000000')
        >>> display.requests[["request_id", "status", "label", "cost"]]
           request_id status label  cost
        0           1   done     1   NaN
        """
        if isinstance(history, dict):  # a history_ Bunch: its steps
            history = history["steps"]
        needed = ("step", "kind", "timestamp", "evpi", "request_id", "action")
        for column in needed:
            if column not in history.columns:
                raise ValueError(f"history has no column {column!r}.")
        observed = history[history["kind"] != "commissioning"].reset_index(drop=True)
        time_axis, clock = _time_axis(observed, time_axis)
        shown = _shown_times(clock, time_axis)
        belief_columns = [c for c in observed.columns if c.startswith("belief_")]
        labels = [c[len("belief_") :] for c in belief_columns]
        matched = _match_states(labels, process)
        styles = {state: style for _, state, style in matched}
        beliefs = pd.DataFrame(
            {state: observed[f"belief_{lab}"].to_numpy() for lab, state, _ in matched}
        )
        requests = cls._request_frame(
            observed, shown, clock, process, _method_costs(inspections), styles
        )
        display = cls(
            time=shown,
            beliefs=beliefs,
            evpi=observed["evpi"].to_numpy(dtype=np.float64),
            actions=observed["action"].to_numpy(),
            requests=requests,
            inspection_cost=(
                np.nan if process is None else float(process.inspection_cost)
            ),
            styles=styles,
            budget=_periodic_budget(budget),
            action_names=(
                None
                if process is None or process.action_names is None
                else list(process.action_names)
            ),
            time_axis=time_axis,
        )
        ax = _renamed_axes(ax, axes)
        return display.plot(ax=ax) if draw else display

    @staticmethod
    def _request_frame(observed, shown, clock, process, costs, styles):
        """One row per request of the observed steps."""
        asked = observed["request_id"].notna().to_numpy()
        rows = observed[asked]
        labels = rows["label"] if "label" in rows.columns else pd.Series(None)
        state = [_as_state(v, styles) for v in labels.reindex(rows.index)]
        if costs is not None and "method" in rows.columns:
            cost = [costs.get(m, np.nan) for m in rows["method"]]
        elif process is not None:
            cost = [float(process.inspection_cost)] * len(rows)
        else:
            cost = [np.nan] * len(rows)
        status = (
            rows["request_status"]
            if "request_status" in rows.columns
            else pd.Series("open", index=rows.index)
        )
        return pd.DataFrame(
            {
                "time": shown[asked],
                "clock": clock[asked],
                "request_id": rows["request_id"].astype("int64").to_numpy(),
                "status": status.to_numpy(dtype=object),
                "label": pd.Series(state, dtype=object),
                "evpi": rows["evpi"].to_numpy(dtype=np.float64),
                "cost": np.asarray(cost, dtype=np.float64),
            }
        )

    @classmethod
    def from_store(cls, store, name: str, **kwargs) -> AgentHistoryDisplay:
        """Draw the timeline of an agent of a store, without opening the agent.

        Reads the agent's history (one row per step, as
        :meth:`~skrbal.online.AgentStore.history` streams it block by block)
        and its configuration; takes no lock, so a running agent goes on, and
        a read-only store is enough.

        Parameters
        ----------
        store : AgentStore
            The store (it stays open).
        name : str
            The agent.
        **kwargs : dict
            ``time_axis``, ``ax`` and ``draw``, as in :meth:`from_history`.

        Returns
        -------
        display : AgentHistoryDisplay

        Raises
        ------
        StoreError
            If the store has no such agent.
        TypeError
            If ``store`` is not a store.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pathlib, tempfile
        >>> import numpy as np
        >>> import pandas as pd
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.online import RiskBasedAgent
        >>> from skrbal.plotting import AgentHistoryDisplay
        >>> rng = np.random.default_rng(0)
        >>> y = np.tile([1, 2, 3, 4], 20)
        >>> X = rng.normal(np.array([-5.0, -0.7, 5.8, 9.0])[y - 1], 2.0)[:, None]
        >>> days = pd.date_range("2025-01-01", periods=80, freq="D")
        >>> path = str(pathlib.Path(tempfile.mkdtemp()) / "fleet.db")
        >>> with RiskBasedAgent(estimator=GaussianNB(), name="bridge",
        ...                     process=synthetic_decision_process(),
        ...                     store=path) as agent:
        ...     decisions = agent.fit(X[:8], y[:8], timestamps=days[:8]).observe(
        ...         X[8:], timestamps=days[8:])
        >>> from skrbal.online import AgentStore
        >>> with AgentStore(path) as store:
        ...     display = AgentHistoryDisplay.from_store(store, "bridge")
        >>> display.time_axis, display.ax_.get_xlabel()
        ('datetime', 'time (UTC)')
        """
        from skrbal._decision import DecisionProcess

        # Duck-typed: plotting sits below skrbal.online and never imports it.
        if not (hasattr(store, "history") and hasattr(store, "configuration")):
            raise TypeError(
                "store must be an AgentStore (skrbal.online.AgentStore(url)), "
                f"got {type(store).__name__}."
            )
        history = store.history(name)
        config = store.configuration(name)
        # The budget is drawn from its JSON, never rebuilt.
        process = DecisionProcess.from_dict(config["process"])
        kwargs.setdefault("time_axis", _given_time_axis(config["settings"]))
        return cls.from_history(
            history,
            process=process,
            budget=config["budget"],
            inspections=config["settings"].get("inspections"),
            **kwargs,
        )

    @classmethod
    def from_agent(cls, agent, **kwargs) -> AgentHistoryDisplay:
        """Draw the timeline of a live agent.

        Parameters
        ----------
        agent : RiskBasedAgent
            A commissioned agent.
        **kwargs : dict
            ``time_axis``, ``ax`` and ``draw``, as in :meth:`from_history`.

        Returns
        -------
        display : AgentHistoryDisplay

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from sklearn.naive_bayes import GaussianNB
        >>> from skrbal import synthetic_decision_process
        >>> from skrbal.budget import CostThreshold, SpendCap
        >>> from skrbal.online import RiskBasedAgent
        >>> from skrbal.plotting import AgentHistoryDisplay
        >>> rng = np.random.default_rng(0)
        >>> y = np.tile([1, 2, 3, 4], 20)
        >>> X = rng.normal(np.array([-5.0, -0.7, 5.8, 9.0])[y - 1], 2.0)[:, None]
        >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
        >>> budget = CostThreshold() & SpendCap(limit=3.0, period=20)
        >>> agent = RiskBasedAgent(estimator=GaussianNB(), process=process,
        ...                        budget=budget).fit(X[:8], y[:8])
        >>> decisions = agent.observe(X[8:])
        >>> display = AgentHistoryDisplay.from_agent(agent)
        >>> display.limit_line_.get_ydata()[0]
        3.0
        >>> display.spend_by_period()[["period", "n_requests", "committed"]]
           period  n_requests  committed
        0       0           1        1.0
        1       1           1        1.0
        2       2           2        2.0
        3       3           3        3.0
        """
        settings = agent.store_.configuration(agent.name)["settings"]
        kwargs.setdefault("time_axis", _given_time_axis(settings))
        return cls.from_history(
            agent.history_.steps,
            process=agent.process,
            budget=agent.budget,
            inspections=agent.inspections,
            **kwargs,
        )

    # ------------------------------------------------------------------ #
    # spend
    # ------------------------------------------------------------------ #
    def _clock_range(self) -> tuple[float, float]:
        """First and last time of the history, in the budget's time."""
        if self.time_axis == "datetime":
            since = pd.to_datetime(self.time) - pd.Timestamp(0)
            clock = np.asarray(since / pd.Timedelta(seconds=1), dtype=np.float64)
        else:
            clock = np.asarray(self.time, dtype=np.float64)
        if clock.size == 0:
            return np.nan, np.nan
        return float(clock.min()), float(clock.max())

    def spend_by_period(self) -> pd.DataFrame:
        """Inspection spend of each budget period, against its limit.

        Requests count in the period of the step that made them. A budget
        charges a request when it is made, and a cancelled one keeps its cost
        there (the agent could not know whether the inspection was booked):
        ``charged`` is the budget's own count, the one that decides.

        Returns
        -------
        spend : DataFrame
            One row per period from the first observation's to the last's
            (empty periods included): ``period`` (its number, 0 at the
            budget's origin), ``start`` and ``end`` (as drawn: steps,
            seconds or datetimes), ``n_requests``, ``spend`` (requests with
            a result), ``committed`` (with the open and expired ones too),
            ``charged`` (with the cancelled ones too: what the budget counted)
            and ``limit``. Without a periodic budget, one row covering the
            whole history, with ``period`` 0 and ``limit`` missing.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> from skrbal.plotting import AgentHistoryDisplay
        >>> from skrbal.budget import CostThreshold, SpendCap
        >>> history = pd.DataFrame({
        ...     "step": [0, 1, 2, 3], "kind": "observation", "timestamp": None,
        ...     "evpi": [9.0, 8.0, 1.0, 9.0], "belief_1": 0.5, "belief_2": 0.5,
        ...     "request_id": [1, 2, None, 3],
        ...     "request_status": ["done", "open", None, "cancelled"],
        ...     "label": [1, None, None, None], "action": 0})
        >>> display = AgentHistoryDisplay.from_history(
        ...     history, budget=CostThreshold() & SpendCap(limit=20.0, period=2))
        >>> display.requests["cost"] = 7.0
        >>> display.spend_by_period()
           period  start  end  n_requests  spend  committed  charged  limit
        0       0    0.0  2.0           2    7.0       14.0     14.0   20.0
        1       1    2.0  4.0           0    0.0        0.0      7.0   20.0
        """
        first, last = self._clock_range()
        requests = self.requests
        cancelled = (requests["status"] == "cancelled").to_numpy()
        done = (requests["status"] == "done").to_numpy()
        cost = requests["cost"].to_numpy(dtype=np.float64)
        clock = requests["clock"].to_numpy(dtype=np.float64)
        if self.budget is None:
            periods = np.zeros(1, dtype=np.int64)
            starts, ends = np.array([first]), np.array([last])
            of_request = np.zeros(clock.size, dtype=np.int64)
            limit = np.nan
        else:
            origin, length = self.budget["origin"], self.budget["period"]
            q0 = int(np.floor((first - origin) / length)) if np.isfinite(first) else 0
            q1 = int(np.floor((last - origin) / length)) if np.isfinite(last) else -1
            periods = np.arange(q0, q1 + 1, dtype=np.int64)
            starts = origin + periods * length
            ends = starts + length
            of_request = np.floor((clock - origin) / length).astype(np.int64) - q0
            limit = self.budget["limit"]
        n = periods.size
        of_request = np.clip(of_request, 0, max(n - 1, 0))
        return pd.DataFrame(
            {
                "period": periods,
                "start": _shown_times(starts, self.time_axis),
                "end": _shown_times(ends, self.time_axis),
                "n_requests": np.bincount(of_request, ~cancelled, minlength=n)[
                    :n
                ].astype(np.int64),
                "spend": np.bincount(of_request, cost * done, minlength=n)[:n].astype(
                    np.float64
                ),
                "committed": np.bincount(
                    of_request, np.where(cancelled, 0.0, cost), minlength=n
                )[:n].astype(np.float64),
                "charged": np.bincount(of_request, cost, minlength=n)[:n].astype(
                    np.float64
                ),
                "limit": np.full(n, limit),
            }
        )

    def _spend_curves(self) -> tuple[np.ndarray, dict]:
        """Times and the spend and committed curves (per period if budgeted)."""
        first, last = self._clock_range()
        requests = self.requests[self.requests["status"] != "cancelled"]
        clock = requests["clock"].to_numpy(dtype=np.float64)
        cost = requests["cost"].to_numpy(dtype=np.float64)
        done = (requests["status"] == "done").to_numpy()
        resets = np.array([], dtype=np.float64)
        if self.budget is not None and np.isfinite(first):
            table = self.spend_by_period()
            origin, length = self.budget["origin"], self.budget["period"]
            resets = origin + table["period"].to_numpy()[1:] * length
        # Events in time order: a reset before a request at the same time.
        times = np.concatenate([[first], resets, clock, [last]])
        kind = np.concatenate(
            [[0], np.zeros(resets.size), np.ones(clock.size), [2]]
        ).astype(int)
        amount = np.concatenate([[0.0], np.zeros(resets.size), cost, [0.0]])
        paid = np.concatenate([[False], np.zeros(resets.size, bool), done, [False]])
        order = np.lexsort((kind, times))
        times, kind = times[order], kind[order]
        amount, paid = amount[order], paid[order]
        curves = {}
        for name, counted in (("spend", amount * paid), ("committed", amount)):
            total = np.cumsum(counted)
            # Spend since the last reset: subtract the total at that reset.
            at_reset = np.where(kind == 0, total, np.nan)
            base = pd.Series(at_reset).ffill().fillna(0.0).to_numpy()
            curves[name] = total - base
        return _shown_times(times, self.time_axis), curves

    # ------------------------------------------------------------------ #
    # drawing
    # ------------------------------------------------------------------ #
    def plot(
        self, ax=None, *, legend: bool = True, axes="deprecated"
    ) -> AgentHistoryDisplay:
        """Draw the four panels.

        Parameters
        ----------
        ax : array-like of 4 matplotlib Axes, default=None
            Where to draw the beliefs, EVPI, actions and spend (sharing
            their time axis is up to the caller); a new figure when ``None``.
        legend : bool, default=True
            Add a legend to the belief, EVPI and spend panels.
        axes : array-like of 4 matplotlib Axes
            Deprecated: ``ax``, as in the other Displays (read, with a
            :class:`FutureWarning`).

        Returns
        -------
        display : AgentHistoryDisplay
        """
        axes = _renamed_axes(ax, axes)
        if axes is None:
            _, axes = _pyplot().subplots(
                4,
                1,
                sharex=True,
                figsize=(11, 9),
                height_ratios=(3, 3, 1.2, 2),
                layout="constrained",
            )
        axes = np.asarray(axes, dtype=object).ravel()
        if axes.size != 4:
            raise ValueError(f"ax must hold 4 Axes, got {axes.size}.")
        self._plot_beliefs(axes[0], legend)
        self._plot_evpi(axes[1], legend)
        self._plot_actions(axes[2])
        self._plot_spend(axes[3], legend)
        if self.time_axis == "datetime":
            from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

            locator = AutoDateLocator()
            axes[3].xaxis.set_major_locator(locator)
            axes[3].xaxis.set_major_formatter(ConciseDateFormatter(locator))
        axes[3].set_xlabel(
            {"step": "step", "seconds": "time (s)", "datetime": "time (UTC)"}[
                self.time_axis
            ]
        )
        self.axes_, self.ax_, self.figure_ = axes, axes[3], axes[3].figure
        return self

    def _plot_beliefs(self, ax, legend: bool) -> None:
        self.belief_lines_ = {}
        for state, style in self.styles.items():
            (line,) = ax.plot(
                self.time,
                self.beliefs[state].to_numpy(),
                color=style.color,
                label=plain_text(style.name),
                linewidth=1,
            )
            self.belief_lines_[state] = line
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("belief")
        ax.grid(True, alpha=0.3)
        if legend and self.styles:
            ax.legend(**_LEGEND)

    def _plot_evpi(self, ax, legend: bool) -> None:
        (self.evpi_line_,) = ax.plot(
            self.time, self.evpi, color="0.35", linewidth=0.8, label="EVPI"
        )
        self.cost_line_ = None
        if np.isfinite(self.inspection_cost):
            self.cost_line_ = ax.axhline(
                self.inspection_cost,
                color="black",
                linestyle="--",
                linewidth=1,
                label=f"inspection cost ({self.inspection_cost:g})",
            )
        self.request_markers_ = {}
        requests = self.requests
        known = requests["label"].notna().to_numpy()
        for state, style in self.styles.items():
            mine = known & np.array([v == state for v in requests["label"]], bool)
            if mine.any():
                self.request_markers_[state] = ax.scatter(
                    requests["time"][mine],
                    requests["evpi"][mine],
                    color=style.color,
                    edgecolors="black",
                    linewidths=0.5,
                    zorder=3,
                    label=f"inspected: {plain_text(style.name)}",
                )
        for status, kwargs in _WAITING_STYLE.items():
            mine = ~known & (requests["status"] == status).to_numpy()
            if mine.any():
                self.request_markers_[status] = ax.scatter(
                    requests["time"][mine],
                    requests["evpi"][mine],
                    zorder=3,
                    label=status if status != "done" else "inspected: uncertain",
                    **kwargs,
                )
        ax.set_ylabel("EVPI")
        ax.grid(True, alpha=0.3)
        if legend:
            ax.legend(**_LEGEND)

    def _plot_actions(self, ax) -> None:
        (self.action_line_,) = ax.plot(
            self.time, self.actions, drawstyle="steps-post", color="black", lw=1
        )
        present = sorted({int(a) for a in np.asarray(self.actions)} | {0})
        ax.set_yticks(present)
        if self.action_names is not None:
            ax.set_yticklabels([plain_text(self.action_names[a]) for a in present])
        ax.set_ylim(min(present) - 0.5, max(present) + 0.5)
        ax.set_ylabel("action")
        ax.grid(True, alpha=0.3)

    def _plot_spend(self, ax, legend: bool) -> None:
        times, curves = self._spend_curves()
        per = "" if self.budget is None else " in its period"
        self.spend_lines_ = {
            "committed": ax.plot(
                times,
                curves["committed"],
                drawstyle="steps-post",
                color="tab:orange",
                label=f"committed{per} (results and waiting)",
            )[0],
            "spend": ax.plot(
                times,
                curves["spend"],
                drawstyle="steps-post",
                color="black",
                label=f"spend{per} (results)",
            )[0],
        }
        self.limit_line_ = None
        if self.budget is not None:
            self.limit_line_ = ax.axhline(
                self.budget["limit"],
                color="tab:red",
                linestyle="--",
                label=f"limit per period ({plain_text(self.budget['policy'])})",
            )
        ax.set_ylabel("spend" if self.budget is None else "spend per period")
        ax.grid(True, alpha=0.3)
        if legend:
            ax.legend(**_LEGEND)


def _renamed_axes(ax, axes):
    """``ax``, or the deprecated ``axes`` when given (with a FutureWarning)."""
    if isinstance(axes, str) and axes == "deprecated":
        return ax
    warnings.warn(
        "AgentHistoryDisplay's axes is deprecated: pass ax=..., as to the "
        "other Displays.",
        FutureWarning,
        stacklevel=3,
    )
    return axes
