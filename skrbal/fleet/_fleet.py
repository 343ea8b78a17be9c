"""A fleet: the agents of one store, drawing on one budget."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from skrbal.fleet._ledger import FleetLedger
from skrbal.fleet._policy import FleetBudget
from skrbal.online import AgentStore, RiskBasedAgent

__all__ = ["Fleet"]

# The snapshot seen at commissioning: no step of it can be inspected, and
# the next draw of the agent starts from the fleet's state, whatever it is.
_NO_DRAW = -2


class Fleet:
    """The agents of one store, each call a draw on the store's fleet budget.

    Each :meth:`observe` runs one agent's call in one transaction that holds
    the fleet lock (``SELECT ... FOR UPDATE`` of the budget's row on
    PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite): the fleet's window of values
    and its spend are read, the agent decides with them (:class:`FleetBudget`), and its
    block, its requests and the fleet's draw event are committed together, or
    nothing is. So the money of a period is never overspent, whatever the
    number of processes drawing at once (each opens its own agents: one
    writer per agent).

    Parameters
    ----------
    store : AgentStore, str or path-like
        The store (SQLite file or PostgreSQL URL).
    budget : FleetBudget, default=None
        The fleet budget, created in the store if new and checked against the
        stored one otherwise; ``None`` reads the stored one.
    name : str, default="fleet"
        The budget's name in the store.

    Attributes
    ----------
    store_ : AgentStore
        The open store.
    ledger_ : FleetLedger
        The budget's ledger.
    budget_ : FleetBudget
        The budget, as stored.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.fleet import Fleet, FleetBudget
    >>> path = os.path.join(tempfile.mkdtemp(), "fleet.db")
    >>> fleet = Fleet(path, budget=FleetBudget(limit=2.0, period=24.0))
    >>> process = synthetic_decision_process().set_params(inspection_cost=1.0)
    >>> for name in ["bridge-1", "bridge-2"]:
    ...     _ = fleet.commission(name, [[-5.0], [0.0], [6.0], [19.0]], [1, 2, 3, 4],
    ...                          estimator=GaussianNB(), process=process)
    >>> X = np.linspace(-5, 19, 24)[:, None]
    >>> n = sum(fleet.observe(name, X)["inspect"].sum()
    ...         for name in ["bridge-1", "bridge-2"])
    >>> int(n) <= 2, fleet.ledger_.verify()["n_draws"]
    (True, 2)
    >>> fleet.close()
    """

    def __init__(self, store, *, budget: FleetBudget | None = None, name="fleet"):
        self._owns_store = not isinstance(store, AgentStore)
        self.store_ = AgentStore(store) if self._owns_store else store
        try:
            self.ledger_ = FleetLedger(self.store_, name)
            if budget is not None:
                if not isinstance(budget, FleetBudget):
                    raise TypeError(
                        f"budget must be a skrbal.fleet.FleetBudget, got {budget!r}."
                    )
                self.ledger_.create(budget)
            self.budget_ = self.ledger_.budget()
        except BaseException:
            if self._owns_store:
                self.store_.close()
            raise
        self._agents: dict[str, RiskBasedAgent] = {}

    def commission(
        self, name: str, X, y, *, estimator, process, timestamps=None, **params
    ) -> RiskBasedAgent:
        """Create agent ``name`` of the fleet, commissioned on ``X, y``.

        Parameters
        ----------
        name : str
            The structure's agent.
        X, y, timestamps
            As for :meth:`~skrbal.online.RiskBasedAgent.commission`.
        estimator, process
            As for :class:`~skrbal.online.RiskBasedAgent`.
        **params
            Other parameters of :class:`~skrbal.online.RiskBasedAgent` (not ``budget``,
            ``store`` or ``name``).

        Returns
        -------
        agent : skrbal.online.RiskBasedAgent
            The agent, open for writing by this fleet.
        """
        policy = clone(self.budget_)
        agent = RiskBasedAgent(
            estimator=estimator,
            process=process,
            budget=policy,
            store=self.store_,
            name=name,
            **params,
        )
        # Its own fresh state, not the fleet's of the moment: the record of
        # a commissioning does not depend on when the others drew.
        fresh = policy.fleet_state(policy.initial_state())
        policy.draw_snapshot({**fresh, "seq": _NO_DRAW})
        try:
            agent.commission(X, y, timestamps)
        finally:
            policy.draw_snapshot(None)
        self._agents[name] = agent
        return agent

    def agent(self, name: str, **params) -> RiskBasedAgent:
        """Agent ``name``, opened for writing by this fleet (once).

        Parameters
        ----------
        name : str
            The agent.
        **params
            Passed to :meth:`~skrbal.online.RiskBasedAgent.from_store` (``estimator``,
            ``lock_timeout``, ...).

        Returns
        -------
        agent : skrbal.online.RiskBasedAgent
        """
        if name not in self._agents:
            self._agents[name] = RiskBasedAgent.from_store(
                self.store_, name, budget=clone(self.budget_), **params
            )
        return self._agents[name]

    def observe(self, name: str, X, timestamps=None, *, key=None, turn=None):
        """Agent ``name`` observes ``X``, drawing on the fleet budget.

        Parameters
        ----------
        name : str
            The agent (opened by :meth:`agent` if not yet).
        X, timestamps, key
            As for :meth:`~skrbal.online.RiskBasedAgent.observe`.
        turn : int, default=None
            The number this draw must have in the fleet's ledger: the call
            waits until the draws before it are in (as
            :meth:`FleetLedger.draw`). ``None`` draws as soon as the lock is
            free. Processes that agree on the turns draw in one fixed order.

        Returns
        -------
        decisions : DataFrame
            As from :meth:`~skrbal.online.RiskBasedAgent.observe`.
        """
        agent = self.agent(name)
        policy = agent.budget_
        first = agent.n_steps_
        try:
            with (
                self.ledger_.draw(turn=turn) as draw,
                self.store_.joined(draw.connection),
            ):
                policy.draw_snapshot(draw.snapshot, agent=name)
                decisions = agent.observe(X, timestamps, key=key)
                state = agent.budget_state_
                granted = []
                if state.get("draw") == draw.snapshot["seq"]:
                    granted = decisions["step"][decisions["inspect"]].tolist()
                draw.record(name, first, np.asarray(granted, dtype=np.int64), state)
        except BaseException:
            # The agent's memory may have moved past what was rolled back:
            # it reopens from the store at its next call.
            self._agents.pop(name).close()
            raise
        finally:
            policy.draw_snapshot(None)
        if self.store_.anchor is not None:
            # The agent's writes joined the draw: its head is committed only
            # now (the store's own record, made inside the draw, saw the one
            # before).
            self.store_.anchor.record(self.store_, agent.agent_id_)
        return decisions

    def close(self) -> None:
        """Close every agent this fleet opened (and the store, if it opened it)."""
        for agent in self._agents.values():
            agent.close()
        self._agents.clear()
        if self._owns_store:
            self.store_.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
