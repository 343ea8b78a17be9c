"""The scan of a budget policy, without scikit-learn.

:class:`ScanRule` is the budget-policy protocol (:meth:`ScanRule.scan` over a
policy's ``_candidates`` and ``_advance``, its running state and the state's
checks); :class:`~skrbal.budget.BudgetPolicy` is this class with
scikit-learn's estimator API and parameter validation on top. Each built-in
policy's rule lives in a rule class (here, :mod:`skrbal.budget._rules` and
:mod:`skrbal.budget._paced_rule`) that its public class extends, so that the
command line's decision step (issue 28.25) scans with the very same code
without importing scikit-learn.
"""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from skrbal.exceptions import (
    BudgetStarvedError,
    BudgetStarvedWarning,
    caller_stacklevel,
)

__all__ = ["AllOfRule", "ScanRule", "check_not_starved", "check_scan_input"]


def check_scan_input(evpi, times, available, cost):
    """Validate the arrays of one ``scan`` call; return them as numpy arrays."""
    evpi = np.asarray(evpi, dtype=float)
    if evpi.ndim != 1:
        raise ValueError(f"evpi must be a 1-d array, got shape {evpi.shape}.")
    if not np.all(np.isfinite(evpi)):
        raise ValueError("evpi must be finite (no NaN or infinity).")
    times = np.asarray(times, dtype=float)
    if times.shape != evpi.shape:
        raise ValueError(
            f"times must have the shape of evpi {evpi.shape}, got {times.shape}."
        )
    if not np.all(np.isfinite(times)):
        raise ValueError("times must be finite (no NaN or infinity).")
    if times.size > 1 and np.any(np.diff(times) < 0):
        raise ValueError("times must be non-decreasing.")
    available = np.asarray(available)
    if available.dtype != bool or available.shape != evpi.shape:
        raise ValueError(
            f"available must be a boolean array of shape {evpi.shape}, got "
            f"dtype {available.dtype} and shape {available.shape}."
        )
    if (
        isinstance(cost, bool)
        or not isinstance(cost, Real)
        or not np.isfinite(cost)
        or cost < 0
    ):
        raise ValueError(f"cost must be a finite number >= 0, got {cost!r}.")
    return evpi, times, available, float(cost)


def check_not_starved(policy, money, cost, hint: str) -> bool:
    """Refuse (or, if allowed, warn once about) ``money`` below one ``cost``.

    Returns whether the policy is starved, i.e. can never inspect.
    """
    if not money < cost:
        return False
    message = (
        f"{type(policy).__name__}: the money of a period, {money:g}, is below the "
        f"cost of one inspection, {cost:g}, so it can never inspect. {hint}"
    )
    if not policy.allow_starved:
        raise BudgetStarvedError(
            f"{message} Pass allow_starved=True to accept a budget that inspects "
            "nothing."
        )
    if not getattr(policy, "_starved_warned", False):
        policy._starved_warned = True
        warnings.warn(message, BudgetStarvedWarning, stacklevel=caller_stacklevel())
    return True


class ScanRule:
    """The budget-policy protocol: which of consecutive decisions to inspect.

    See :class:`BudgetPolicy` (this class with scikit-learn's estimator API)
    for the protocol. Each built-in policy is a rule class extending this one
    (its state, candidates and how the state advances, numpy only) with
    scikit-learn's API on top, so a rule rebuilt from a policy's stored
    parameters scans exactly as the policy does without importing
    scikit-learn; its parameters are not checked here (``_check_params``
    does nothing: :class:`BudgetPolicy` validates them).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget._rules import CostThresholdRule
    >>> rule = CostThresholdRule()
    >>> rule.scan(np.array([1.0, 9.0]), np.arange(2.0), np.ones(2, bool), 5.0,
    ...           rule.initial_state())
    (1, {})
    """

    # Type of each state entry, {key: (kind, optional)}, kind one of "int",
    # "count" (int >= 0), "float" (finite), "amount" (finite >= 0: money,
    # prices) and "floats" (list of finite).
    _state_schema: ClassVar[dict] = {}
    # Steps handed to ``_candidates`` at once: bounds the memory of policies
    # whose candidates cost more than O(1) per step.
    _chunk_size = 4096
    #: Whether :meth:`scan` reads the beliefs of the steps it scans. The
    #: decision kernel passes ``beliefs=`` to a policy that sets it True (a
    #: wrapped uncertainty strategy ranks steps by their beliefs, not their
    #: value); the built-in policies read the value alone.
    needs_beliefs: ClassVar[bool] = False

    def initial_state(self) -> dict:
        """The running state before any step.

        Returns
        -------
        state : dict
            JSON-serialisable (string keys; ints, floats, bools, strings,
            ``None``, lists and dicts of those).
        """
        self._check_params()
        return self._initial_state()

    def scan(
        self,
        evpi,
        times,
        available,
        cost,
        state,
        *,
        check_params: bool = True,
        check_input: bool = True,
        beliefs=None,
    ) -> tuple[int, dict]:
        """Find the first step to inspect among consecutive decisions.

        Parameters
        ----------
        evpi : array-like of float of shape (n_steps,)
            EVPI of each decision, in order.
        times : array-like of float of shape (n_steps,)
            Non-decreasing time of each decision: the stream step index
            offline, the observation timestamp online. Periods and gaps of
            the policies are in the same unit.
        available : array-like of bool of shape (n_steps,)
            False where an inspection is impossible (label already known,
            request already open, ...).
        cost : float
            The inspection cost.
        state : dict
            From :meth:`initial_state` or a previous ``scan``. Not modified.
        check_params : bool, default=True
            Check the policy's parameters first. A caller that scans one
            stream in many short pieces (the learners' decision kernel)
            checks them once, by :meth:`initial_state`, and passes False.
        check_input : bool, default=True
            Check the arrays, the cost and the state. The decision kernel,
            which builds them itself (finite values, ordered times, a
            boolean mask, a state from this policy) and scans a stream in
            hundreds of short pieces, passes False; anything else should not.
        beliefs : ndarray of shape (n_steps, n_states), default=None
            The model's beliefs at each step, columns in the process's
            states: passed by the decision kernel (of
            :class:`~skrbal.active.RiskBasedLearner` and
            :class:`~skrbal.online.RiskBasedAgent`) to a policy whose
            :attr:`needs_beliefs` is True, ``None`` otherwise. The built-in
            policies ignore them.

        Returns
        -------
        step : int
            Index of the first step to inspect, or ``-1`` if none.
        state : dict
            The state after steps ``0..step`` (all steps when ``step`` is
            ``-1``), including the inspection at ``step``.
        """
        if check_params:
            self._check_params()
        if check_input:
            evpi, times, available, cost = check_scan_input(
                evpi, times, available, cost
            )
            self._check_state(state)
        n_steps = evpi.shape[0]
        start = 0
        while start < n_steps:
            stop = min(n_steps, start + self._chunk_size)
            wanted = self._candidates(evpi[start:stop], times[start:stop], cost, state)
            hits = np.flatnonzero(wanted & available[start:stop])
            if hits.size:
                end = start + int(hits[0]) + 1
                state = self._advance(
                    evpi[start:end], times[start:end], cost, state, inspected=True
                )
                return end - 1, state
            state = self._advance(
                evpi[start:stop], times[start:stop], cost, state, inspected=False
            )
            start = stop
        return -1, copy.deepcopy(state)

    def count_wanted(self, evpi, times, available, cost, state) -> int:
        """How many available steps the policy would inspect if none could be.

        The state moves as if no step were inspected (as while every allowed
        request waits for a result), and every available step the policy
        would inspect meanwhile is counted: what one :meth:`scan` after
        another, each from the step after the last one found, with the state
        advanced over the steps in between with nothing inspected, counts.
        Vectorised by chunks: by the protocol, a step is a candidate when
        the policy would inspect it if no step before it were inspected.
        The arrays are not checked (as ``scan`` with ``check_input=False``).

        Parameters
        ----------
        evpi, times, available, cost, state
            As for :meth:`scan`.

        Returns
        -------
        count : int
            The steps the policy would inspect, one after another.

        Examples
        --------
        >>> import numpy as np
        >>> from skrbal.budget import MinimumGap
        >>> policy = MinimumGap(gap=2)
        >>> evpi = np.array([9.0, 9.0, 9.0, 9.0])
        >>> policy.count_wanted(evpi, np.arange(4.0), np.ones(4, bool), 5.0,
        ...                     policy.initial_state())
        4
        """
        count, start, n_steps = 0, 0, evpi.shape[0]
        while start < n_steps:
            stop = min(n_steps, start + self._chunk_size)
            piece = slice(start, stop)
            wanted = self._candidates(evpi[piece], times[piece], cost, state)
            count += int(np.count_nonzero(wanted & available[piece]))
            state = self._advance(
                evpi[piece], times[piece], cost, state, inspected=False
            )
            start = stop
        return count

    def check_state(self, state) -> None:
        """Raise an error naming what is wrong unless ``scan`` accepts ``state``.

        Parameters
        ----------
        state : dict
            A state from :meth:`initial_state` or a previous :meth:`scan`,
            e.g. one read back from a store.

        Raises
        ------
        TypeError
            If ``state`` is not a dict.
        ValueError
            If its keys are not this policy's, or its values contradict
            each other.

        Examples
        --------
        >>> from skrbal.budget import SpendCap
        >>> policy = SpendCap(limit=10.0, period=100)
        >>> policy.check_state(policy.initial_state())
        >>> policy.check_state({"spent": 0.0})
        Traceback (most recent call last):
        ...
        ValueError: state of SpendCap must have the keys ...
        """
        self._check_state(state)

    # -------------------------------------------------------------- #
    def _check_params(self) -> None:
        """Raise an error naming any invalid parameter (none here)."""

    def _check_state(self, state) -> None:
        if not isinstance(state, dict):
            raise TypeError(
                f"state must be a dict from initial_state() or a previous scan, "
                f"got {type(state).__name__}."
            )
        expected = set(self._initial_state())
        if set(state) != expected:
            raise ValueError(
                f"state of {type(self).__name__} must have the keys "
                f"{sorted(expected)}, got {sorted(state)}: pass initial_state() "
                "or the state returned by a previous scan."
            )
        for key, (kind, optional) in self._state_schema.items():
            if not _is_entry(state[key], kind, optional):
                what = {
                    "int": "an integer",
                    "count": "an integer >= 0",
                    "float": "a finite number",
                    "amount": "a finite number >= 0",
                    "floats": "a list of finite numbers",
                }[kind]
                raise ValueError(
                    f"state[{key!r}] of {type(self).__name__} must be {what}"
                    f"{' or None' if optional else ''}, got {state[key]!r}."
                )

    def _initial_state(self) -> dict:
        raise NotImplementedError

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        raise NotImplementedError

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        raise NotImplementedError


def _is_number(value) -> bool:
    return (
        isinstance(value, Real) and not isinstance(value, bool) and np.isfinite(value)
    )


def _is_entry(value, kind, optional) -> bool:
    if value is None:
        return optional
    if kind in ("int", "count"):
        is_int = isinstance(value, Integral) and not isinstance(value, bool)
        return is_int and (kind == "int" or value >= 0)
    if kind == "float":
        return _is_number(value)
    if kind == "amount":
        return _is_number(value) and value >= 0
    return isinstance(value, list) and all(_is_number(v) for v in value)


class AllOfRule(ScanRule):
    """Inspect only where every member rule agrees (:class:`~skrbal.budget.AllOf`).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget._rules import CostThresholdRule
    >>> rule = AllOfRule(policies=[CostThresholdRule(), CostThresholdRule()])
    >>> rule.scan(np.array([1.0, 9.0]), np.arange(2.0), np.ones(2, bool), 5.0,
    ...           rule.initial_state())
    (1, {'policies': [{}, {}]})
    """

    def __init__(self, *, policies):
        self.policies = policies

    @property
    def _chunk_size(self):
        return min(policy._chunk_size for policy in self.policies)

    def _initial_state(self) -> dict:
        return {"policies": [policy._initial_state() for policy in self.policies]}

    def _check_state(self, state) -> None:
        super()._check_state(state)
        members = state["policies"]
        if not isinstance(members, list) or len(members) != len(self.policies):
            raise ValueError(
                f"state['policies'] must be a list of {len(self.policies)} "
                "member states."
            )
        for policy, member in zip(self.policies, members):
            policy._check_state(member)

    def _candidates(self, evpi, times, cost, state) -> np.ndarray:
        wanted = np.ones(evpi.shape[0], dtype=bool)
        for policy, member in zip(self.policies, state["policies"]):
            wanted &= policy._candidates(evpi, times, cost, member)
        return wanted

    def _advance(self, evpi, times, cost, state, inspected) -> dict:
        return {
            "policies": [
                policy._advance(evpi, times, cost, member, inspected)
                for policy, member in zip(self.policies, state["policies"])
            ]
        }
