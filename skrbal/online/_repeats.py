"""The rule that names a batch repeating the agent's last observations.

An agent on a step clock (no times) cannot tell a batch given twice, a file
observed again, from new rows: both are decided as new steps. (With times,
the second pass goes back in time and is refused.) :class:`RecentRows`
keeps the rows of the agent's last ``observe`` call and warns, with
:class:`~skrbal.exceptions.RepeatedBatchWarning`, when a new call's rows
equal the agent's last observations bit for bit; the ``skrbal agent
observe`` command goes through the same rule.
"""

from __future__ import annotations

import warnings

import numpy as np

from skrbal.exceptions import RepeatedBatchWarning, caller_stacklevel

__all__ = ["RecentRows"]


class RecentRows:
    """The agent's last observed rows, to tell a batch observed twice.

    The rows of the last call are kept in memory; the store is read only
    when they are not enough (the first call after a resume, a batch longer
    than the last one), so a long-lived agent pays nothing for the rule.

    Parameters
    ----------
    store : AgentStorage
        The agent's store (its ``load_steps`` gives earlier rows).
    agent_id : int
        The agent's id in ``store``.
    n_commissioning : int
        The commissioning rows (steps ``0 .. n_commissioning - 1``): a batch
        equal to them is no repeat of an observation.

    Examples
    --------
    >>> import warnings
    >>> from skrbal.online import InMemoryAgentStore
    >>> recent = RecentRows(InMemoryAgentStore(), agent_id=1, n_commissioning=4)
    >>> recent.remember([[1.0], [2.0]])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     recent.warn_if_repeated("bridge", [[2.0]], first=6, clock="step")
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    agent 'bridge': rows 0 to 0 of this call repeat the agent's last 1
    observations (steps 5 to 5) exactly; they are decided again as new steps
    (was the same batch observed twice?)
    """

    def __init__(self, store, agent_id: int, n_commissioning: int):
        self._store, self._agent_id = store, agent_id
        self._n_commissioning = n_commissioning
        self._rows = None  # the last call's rows; None: not read in this process

    def remember(self, X) -> None:
        """Keep the rows of the call just decided.

        Parameters
        ----------
        X : array-like of shape (n_observations, n_features)
            The call's rows.
        """
        self._rows = np.asarray(X, dtype=float)

    def _last(self, n: int, first: int) -> np.ndarray:
        """The features of steps ``first - n .. first - 1``."""
        if self._rows is not None and self._rows.shape[0] >= n:
            return self._rows[self._rows.shape[0] - n :]
        steps = np.arange(first - n, first)
        loaded = self._store.load_steps(self._agent_id, steps, ("features",))
        return np.asarray(loaded["features"], dtype=float)

    def warn_if_repeated(self, name: str, X, first: int, clock: str) -> None:
        """Warn when ``X`` equals the agent's last ``len(X)`` observations.

        Parameters
        ----------
        name : str
            The agent's name, which the warning names.
        X : array-like of shape (n_observations, n_features)
            The rows of the new call, not yet decided.
        first : int
            The step the call's first row will get (the agent's steps so far).
        clock : str
            ``"step"`` or ``"timestamp"``: only a step clock is checked.

        Warns
        -----
        RepeatedBatchWarning
            The call's rows repeat the last observations exactly; they are
            still decided, as new steps.
        """
        X = np.asarray(X, dtype=float)
        n = X.shape[0]
        if clock != "step" or n == 0 or first - n < self._n_commissioning:
            return
        if not np.array_equal(self._last(n, first), X):
            return
        warnings.warn(
            f"agent {name!r}: rows 0 to {n - 1} of this call repeat the agent's "
            f"last {n} observations (steps {first - n} to {first - 1}) exactly; "
            "they are decided again as new steps (was the same batch observed "
            "twice?)",
            RepeatedBatchWarning,
            stacklevel=caller_stacklevel(),
        )
