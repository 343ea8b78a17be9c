"""The decision process's tables and decisions, without scikit-learn.

:class:`ProcessTables` holds the parameters of the one-step maintenance
decision, validates them into its tables once per set of values, and makes
every decision from them (beliefs aligned to the states, expected utilities,
the optimal action, the EVPI, the method of largest net value).
:class:`~skrbal.DecisionProcess` is this class with scikit-learn's estimator
API and serialisation on top: the command line's decision step (issue 28.25)
builds a ``ProcessTables`` from a stored process without importing
scikit-learn, and decides with the very same code.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from skrbal._decision._beliefs import align_beliefs, check_beliefs, check_row_sums
from skrbal._labels import label_positions
from skrbal._params import same_value, snapshot
from skrbal._validation import (
    BELIEF_TOL,
    as_finite_array,
    check_cost,
    check_probability_rows,
)

__all__ = ["PROCESS_PARAMETERS", "ProcessTables"]

#: The parameters of a process, in the order of ``__init__``.
PROCESS_PARAMETERS = (
    "transition",
    "state_utility",
    "action_utility",
    "inspection_cost",
    "classes",
    "state_names",
    "action_names",
)


# Rows of beliefs per block in DecisionProcess.evpi: the block and its
# products (a few hundred kB) stay in cache.
_EVPI_BLOCK = 8192


def _check_derived(table: np.ndarray, what: str) -> None:
    """Raise if a table derived from finite inputs overflowed."""
    bad = ~np.isfinite(table)
    if bad.any():
        state, action = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{what} is not finite for state {state}, action {action}: the "
            "utilities are too large for double precision; rescale them (EVPI and "
            "the decisions scale with the utilities)."
        )


class ProcessTables:
    """The tables and decisions of a one-step maintenance decision process.

    The parameters, their validation and every decision of
    :class:`~skrbal.DecisionProcess` (see it for the parameters and the
    maths), without scikit-learn's estimator API: a stored process is
    rebuilt as one (``process_from_dict(ProcessTables, description)``)
    where scikit-learn is not imported.

    Examples
    --------
    >>> from skrbal._decision._tables import ProcessTables
    >>> tables = ProcessTables(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]],
    ...     state_utility=[10.0, -100.0],
    ...     action_utility=[0.0, -20.0],
    ...     inspection_cost=2.0,
    ... )
    >>> tables.evpi([[0.5, 0.5]]), tables.optimal_action([[0.0, 1.0]])
    (array([4.5]), array([1]))
    """

    def __init__(
        self,
        *,
        transition,
        state_utility,
        action_utility,
        inspection_cost: float = 0.0,
        classes=None,
        state_names: Sequence[str] | None = None,
        action_names: Sequence[str] | None = None,
    ):
        self.transition = transition
        self.state_utility = state_utility
        self.action_utility = action_utility
        self.inspection_cost = inspection_cost
        self.classes = classes
        self.state_names = state_names
        self.action_names = action_names

    # ------------------------------------------------------------------ #
    # validation of the process itself
    # ------------------------------------------------------------------ #
    def _validated(self):
        """The validated tables ``(transition, Q, classes, evpi weights)``, read-only.

        Validation runs once per set of parameter values: the result is cached
        with a copy of the values it was computed from, and every call compares
        the current values with that copy (a few microseconds for small
        tables, against tens for validating again). So ``set_params``, a plain
        assignment and an array changed in place are all taken in at the next
        call.
        """
        values = _process_parameters(self)
        cache = self.__dict__.get("_validated_cache")
        if cache is not None and all(map(same_value, values, cache[0])):
            return cache[1]
        tables = self._validate()
        for table in tables:
            table.flags.writeable = False
        self._validated_cache = (tuple(map(snapshot, values)), tables)
        return tables

    def __getstate__(self):
        # The cache is rebuilt on demand; unpickled arrays would be writable.
        state = super().__getstate__()
        return {key: value for key, value in state.items() if key != "_validated_cache"}

    def _validate(self):
        """Check the parameters and derive the tables (see ``_validated``)."""
        transition = as_finite_array(self.transition, "transition", 3)
        n_actions, n_states, n_states_to = transition.shape
        if n_states != n_states_to or n_actions < 1 or n_states < 1:
            raise ValueError(
                "transition must have shape (n_actions, n_states, n_states), got "
                f"{transition.shape}."
            )
        check_probability_rows(
            transition,
            entry=lambda d, i, j: f"transition[{d}, {i}, {j}]",
            row=lambda d, i: f"transition row {i} for action {d}",
            kind="transition",
            law="P(y_t+1 | y_t, d)",
        )
        state_utility = as_finite_array(self.state_utility, "state_utility", 1)
        if state_utility.shape != (n_states,):
            raise ValueError(
                f"state_utility must have shape ({n_states},) to match transition, "
                f"got {state_utility.shape}."
            )
        action_utility = as_finite_array(self.action_utility, "action_utility", 1)
        if action_utility.shape != (n_actions,):
            raise ValueError(
                f"action_utility must have shape ({n_actions},) to match "
                f"transition, got {action_utility.shape}."
            )
        check_cost(self.inspection_cost, "inspection_cost")
        classes = self._validated_classes(n_states)
        for attr, n in (("state_names", n_states), ("action_names", n_actions)):
            names = getattr(self, attr)
            if names is not None and len(names) != n:
                raise ValueError(f"{attr} must have {n} entries, got {len(names)}.")
        # Q[y, d] = sum_j P(j | y, d) U(j) + U(d)
        with np.errstate(over="ignore", invalid="ignore"):
            q = np.einsum("dij,j->id", transition, state_utility) + action_utility
            regret = q.max(axis=1, keepdims=True) - q
        _check_derived(q, "Q(y, d) = sum_j P(j | y, d) U(j) + U(d)")
        _check_derived(regret, "the regret max_d Q(y, d) - Q(y, d)")
        # Rows: the regret of each action, then ones (for the belief sums);
        # see evpi.
        weights = np.vstack([regret.T, np.ones(n_states)])
        # Copies: the tables are cached read-only and must not share memory
        # with the caller's arrays.
        return transition.copy(), q, classes.copy(), weights

    def _validated_classes(self, n_states: int) -> np.ndarray:
        if self.classes is None:
            return np.arange(n_states)
        classes = np.asarray(self.classes)
        if classes.shape != (n_states,):
            raise ValueError(
                f"classes must have shape ({n_states},) to match transition, got "
                f"{classes.shape}."
            )
        if len(np.unique(classes)) != n_states:
            raise ValueError(f"classes must be distinct, got {classes.tolist()}.")
        return classes

    # ------------------------------------------------------------------ #
    # public properties
    # ------------------------------------------------------------------ #
    @property
    def n_states(self) -> int:
        """Number of health states ``K``."""
        return self._validated()[1].shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions ``A``."""
        return self._validated()[1].shape[1]

    @property
    def classes_(self) -> np.ndarray:
        """Class labels of the health states, in row order."""
        return self._validated()[2]

    @property
    def state_action_utility(self) -> np.ndarray:
        """``Q(y, d)``, the utility of action ``d`` in known state ``y``.

        Returns
        -------
        q : ndarray of shape (n_states, n_actions)
        """
        return self._validated()[1].copy()

    # ------------------------------------------------------------------ #
    # beliefs
    # ------------------------------------------------------------------ #
    def align_proba(self, proba, classes=None) -> np.ndarray:
        """Validate beliefs and order their columns as the process's states.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Probabilities of the health states, each row summing to one.
        classes : array-like of shape (n_columns,), default=None
            The label of each column (a classifier's ``classes_``). Columns are
            mapped onto the process's ``classes``; a state with no column gets
            probability zero. ``None`` means the columns already are the
            process's states, in order.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_states)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> process = synthetic_decision_process()
        >>> process.align_proba([[0.3, 0.7]], classes=[4, 1])
        array([[0.7, 0. , 0. , 0.3]])
        """
        return align_beliefs(proba, classes, self._validated()[2])

    # ------------------------------------------------------------------ #
    # decisions
    # ------------------------------------------------------------------ #
    def expected_utility(self, proba, classes=None) -> np.ndarray:
        """Expected utility of every action under each belief.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Beliefs over the current health state.
        classes : array-like of shape (n_columns,), default=None
            Labels of the columns of ``proba`` (see :meth:`align_proba`).

        Returns
        -------
        utility : ndarray of shape (n_samples, n_actions)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> synthetic_decision_process().expected_utility([[1, 0, 0, 0]])
        array([[  9.5, -20. ]])
        """
        _, q, process_classes, _ = self._validated()
        return align_beliefs(proba, classes, process_classes) @ q

    def optimal_action(self, proba, classes=None) -> np.ndarray:
        """Action of maximum expected utility for each belief.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Beliefs over the current health state.
        classes : array-like of shape (n_columns,), default=None
            Labels of the columns of ``proba``.

        Returns
        -------
        action : ndarray of shape (n_samples,)
            Action indices into ``transition``.

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> synthetic_decision_process().optimal_action([[1, 0, 0, 0], [0, 0, 0, 1]])
        array([0, 1])
        """
        return np.argmax(self.expected_utility(proba, classes), axis=1)

    def meu(self, proba, classes=None) -> np.ndarray:
        """Maximum expected utility for each belief.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Beliefs over the current health state.
        classes : array-like of shape (n_columns,), default=None
            Labels of the columns of ``proba``.

        Returns
        -------
        meu : ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> synthetic_decision_process().meu([[0, 0, 0, 1]])
        array([-20.])
        """
        return self.expected_utility(proba, classes).max(axis=1)

    def evpi(self, proba, classes=None) -> np.ndarray:
        """Expected value of perfect information about the current state.

        ``EVPI = E_y[max_d Q(y, d)] - max_d E_y[Q(y, d)]``, non-negative and
        zero for a certain belief.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Beliefs over the current health state.
        classes : array-like of shape (n_columns,), default=None
            Labels of the columns of ``proba``.

        Returns
        -------
        evpi : ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> process = synthetic_decision_process()
        >>> process.evpi([[0.5, 0.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
        array([14.75,  0.  ])
        """
        _, _, process_classes, weights = self._validated()
        proba = align_beliefs(proba, classes, process_classes, check_values=False)
        # EVPI = E[max_d Q] - max_d E[Q] = min_d E[max_d' Q - Q(., d)]: the
        # expected regret of the best action. One matrix product gives each
        # action's expected regret and the row sums (for validation), in an
        # (A + 1, n) layout whose min over actions runs along contiguous rows.
        # Blocks of rows keep that product, the checks and the min in cache:
        # over a large pool, the cost is one read of the beliefs.
        n_samples, n_actions = proba.shape[0], weights.shape[0] - 1
        value = np.empty(n_samples)
        buffer = np.empty((n_actions + 1, min(n_samples, _EVPI_BLOCK)))
        for start in range(0, n_samples, _EVPI_BLOCK):
            block = proba[start : start + _EVPI_BLOCK]
            # Non-negative rows that sum to one lie in [0, 1]: the minimum and
            # the sums suffice, and a NaN propagates through the minimum.
            lowest = block.min()
            if not lowest >= -BELIEF_TOL:
                check_beliefs(block, check_sums=False, first_row=start)
            products = buffer[:, : block.shape[0]]
            np.matmul(weights, block.T, out=products)
            sums = products[n_actions]
            if sums.max() > 1.0 + BELIEF_TOL or sums.min() < 1.0 - BELIEF_TOL:
                check_row_sums(sums, first_row=start)
            out = value[start : start + block.shape[0]]
            if n_actions == 1:
                out[:] = products[0]
            else:
                np.minimum(products[0], products[1], out=out)
            for action in range(2, n_actions):  # a handful of actions
                np.minimum(out, products[action], out=out)
            if lowest < 0.0:  # beliefs dipping below zero within the tolerance
                np.maximum(out, 0.0, out=out)
        return value

    @property
    def value_tolerance(self) -> float:
        """The rounding of a value of information (EVPI, EVSI) for this process.

        Such values are differences of expected utilities: one within 64
        ulps of the utilities' scale (their largest magnitude, at least 1) is
        rounding, not information, and is read as 0 by :meth:`best_method`,
        :meth:`should_inspect`, :func:`~skrbal.inspection.choose_inspection`
        and the learners' decisions alike.

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> float(synthetic_decision_process().value_tolerance) < 1e-11
        True
        """
        utilities = self._validated()[1]
        return 64 * np.finfo(float).eps * max(1.0, float(np.abs(utilities).max()))

    def best_method(self, values, costs) -> tuple[np.ndarray, np.ndarray]:
        """Per belief, the inspection method of largest net value, and its value.

        The one choice of method that
        :func:`~skrbal.inspection.choose_inspection` and the learners'
        decisions make: the method of
        largest ``value - cost`` (ties to the lowest index), whether or not
        that is positive, and its value, read as 0 within
        :attr:`value_tolerance`.

        Parameters
        ----------
        values : array-like of shape (n_samples, n_methods)
            Each method's value of information (EVSI; the EVPI for a perfect
            method).
        costs : array-like of shape (n_methods,)
            Each method's cost.

        Returns
        -------
        best : ndarray of int of shape (n_samples,)
            Index of the method of largest net value.
        value : ndarray of shape (n_samples,)
            Its value (not net of its cost).

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> process = synthetic_decision_process()
        >>> values = [[14.75, 11.3], [1e-14, 0.0]]  # the second: rounding
        >>> best, value = process.best_method(values, [10.0, 1.4])
        >>> best.tolist(), value.tolist()
        ([1, 1], [11.3, 0.0])
        >>> process.best_method(values, [0.0, 1.4])[1].tolist()
        [14.75, 0.0]
        """
        values = np.asarray(values, dtype=float)
        best = np.argmax(values - np.asarray(costs, dtype=float), axis=1)
        value = np.take_along_axis(values, best[:, None], axis=1)[:, 0]
        return best, np.where(value > self.value_tolerance, value, 0.0)

    def should_inspect(self, proba, classes=None) -> np.ndarray:
        """Whether an inspection is worth its cost (``EVPI > inspection_cost``).

        An EVPI within :attr:`value_tolerance` of zero is rounding, read as 0
        (:meth:`best_method`), as the learners' decisions read it.

        Parameters
        ----------
        proba : array-like of shape (n_samples, n_columns)
            Beliefs over the current health state.
        classes : array-like of shape (n_columns,), default=None
            Labels of the columns of ``proba``.

        Returns
        -------
        inspect : ndarray of bool of shape (n_samples,)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> process = synthetic_decision_process()
        >>> process.should_inspect([[0.5, 0, 0, 0.5], [1, 0, 0, 0]])
        array([ True, False])
        """
        cost = self.inspection_cost
        _, evpi = self.best_method(self.evpi(proba, classes)[:, None], [cost])
        return evpi > cost

    def perfect_information_action(self, y) -> np.ndarray:
        """Optimal action when the current state is known to be ``y``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Class labels, matched against ``classes``.

        Returns
        -------
        action : ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> synthetic_decision_process().perfect_information_action([1, 2, 3, 4])
        array([0, 0, 0, 1])
        """
        _, q, process_classes, _ = self._validated()
        return np.argmax(
            q[label_positions(y, process_classes, owner="the process's classes")],
            axis=1,
        )

    def realised_utility(self, y, action) -> np.ndarray:
        """Utility realised by taking ``action`` in the known state ``y``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            True class labels.
        action : array-like of int of shape (n_samples,)
            Action indices taken.

        Returns
        -------
        utility : ndarray of shape (n_samples,)
            ``Q(y, action)``: the expected utility, over the next state, of the
            action that was taken.

        Examples
        --------
        >>> from skrbal import synthetic_decision_process
        >>> synthetic_decision_process().realised_utility([4, 4], [0, 1])
        array([-75.  , -20.85])
        """
        _, q, process_classes, _ = self._validated()
        rows = label_positions(y, process_classes, owner="the process's classes")
        action = np.asarray(action)
        if action.shape != rows.shape:
            raise ValueError(
                f"action has shape {action.shape} but y has shape {rows.shape}."
            )
        if action.size and (
            not np.issubdtype(action.dtype, np.integer)
            or action.min() < 0
            or action.max() >= q.shape[1]
        ):
            raise ValueError(
                f"action must hold integer action indices in [0, {q.shape[1]}), got "
                f"{np.unique(action).tolist()}."
            )
        return q[rows, action]


_process_parameters = operator.attrgetter(*PROCESS_PARAMETERS)
