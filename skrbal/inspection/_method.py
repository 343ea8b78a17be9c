"""An inspection method: its name, its cost and its confusion model."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator

from skrbal._decision import DecisionProcess
from skrbal._validation import as_finite_array, check_cost, check_probability_rows

__all__ = ["InspectionMethod", "perfect_inspection"]

# The keys of InspectionMethod.to_dict, in order.
_DICT_KEYS = ("name", "cost", "confusion", "outcomes")


class _Validated(NamedTuple):
    confusion: np.ndarray
    outcomes: np.ndarray
    cost: float


class InspectionMethod(BaseEstimator):
    """An inspection whose report follows a known confusion model.

    A perfect inspection reveals the current health state ``y``; a real one
    returns a report ``z``, drawn from ``P(z | y)``: a visual inspection that
    misses cracks, a non-destructive test with a probability of detection and
    false calls. The report outcomes need not be the health states (for
    instance "crack found" / "not found").

    Parameters
    ----------
    name : str
        Name of the method, used in histories and summaries.
    cost : float
        Cost of one inspection with this method, finite and ``>= 0``.
    confusion : array-like of shape (n_states, n_outcomes)
        ``confusion[y, z] = P(report = z | state = y)``. Rows follow the
        states of the :class:`~skrbal.DecisionProcess` the method informs,
        in its order; each row must be a probability distribution
        (non-negative, summing to one within 1e-8).
    outcomes : array-like of shape (n_outcomes,), default=None
        Distinct labels of the report outcomes, in the order of the columns of
        ``confusion``. Defaults to ``0, ..., n_outcomes - 1``.

    Attributes
    ----------
    n_states : int
        Number of health states, the rows of ``confusion``.
    n_outcomes : int
        Number of report outcomes, the columns of ``confusion``.
    outcomes_ : ndarray of shape (n_outcomes,)
        Labels of the report outcomes (``outcomes``, or ``0, ..., n_outcomes
        - 1``), validated.
    cost_ : float
        The cost, validated.

    See Also
    --------
    perfect_inspection : The method that reveals the state without error.
    evsi : Expected value of sample information of each method.
    choose_inspection : The query rule between methods.

    Notes
    -----
    Like :class:`~skrbal.DecisionProcess`, the parameters are only stored by
    ``__init__`` and validated when used, with a ``ValueError`` that names the
    offending entry.

    Examples
    --------
    >>> from skrbal.inspection import InspectionMethod
    >>> drone = InspectionMethod(
    ...     name="drone",
    ...     cost=1.4,
    ...     confusion=[[0.95, 0.05], [0.7, 0.3], [0.2, 0.8], [0.1, 0.9]],
    ...     outcomes=["no damage found", "damage found"],
    ... )
    >>> drone.n_states, drone.n_outcomes
    (4, 2)
    >>> drone.outcomes_.tolist()
    ['no damage found', 'damage found']
    >>> InspectionMethod.from_dict(drone.to_dict()).cost_
    1.4
    """

    def __init__(self, *, name: str, cost: float, confusion, outcomes=None):
        self.name = name
        self.cost = cost
        self.confusion = confusion
        self.outcomes = outcomes

    def _validated(self) -> _Validated:
        """Check the parameters; return (confusion, outcomes, cost)."""
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}.")
        who = f"confusion of inspection method {self.name!r}"
        confusion = as_finite_array(self.confusion, who, 2)
        n_states, n_outcomes = confusion.shape
        if n_states < 1 or n_outcomes < 1:
            raise ValueError(
                f"{who} must have shape (n_states, n_outcomes) with both >= 1, "
                f"got {confusion.shape}."
            )
        check_probability_rows(
            confusion,
            entry=lambda y, z: f"{who}: entry [{y}, {z}]",
            row=lambda y: f"{who}: row {y}",
            kind="report",
            law="P(report | state)",
        )
        cost = check_cost(self.cost, f"cost of inspection method {self.name!r}")
        if self.outcomes is None:
            outcomes = np.arange(n_outcomes)
        else:
            outcomes = np.asarray(self.outcomes)
            if outcomes.shape != (n_outcomes,):
                raise ValueError(
                    f"outcomes of inspection method {self.name!r} must have shape "
                    f"({n_outcomes},) to match its confusion, got {outcomes.shape}."
                )
            if len(np.unique(outcomes)) != n_outcomes:
                raise ValueError(
                    f"outcomes of inspection method {self.name!r} must be "
                    f"distinct, got {outcomes.tolist()}."
                )
        return _Validated(confusion, outcomes, cost)

    def _confusion_for(self, process: DecisionProcess) -> np.ndarray:
        """The validated confusion, checked against the process's states."""
        confusion = self._validated().confusion
        n_states = process.n_states
        if confusion.shape[0] != n_states:
            raise ValueError(
                f"confusion of inspection method {self.name!r} has "
                f"{confusion.shape[0]} rows but the process has {n_states} "
                "states: one row per state, in the process's order."
            )
        return confusion

    @property
    def n_states(self) -> int:
        """Number of health states (rows of ``confusion``)."""
        return self._validated().confusion.shape[0]

    @property
    def n_outcomes(self) -> int:
        """Number of report outcomes (columns of ``confusion``)."""
        return self._validated().confusion.shape[1]

    @property
    def outcomes_(self) -> np.ndarray:
        """Labels of the report outcomes, in column order."""
        return self._validated().outcomes

    @property
    def cost_(self) -> float:
        """The cost of one inspection, validated (a finite float ``>= 0``)."""
        return self._validated().cost

    def to_dict(self) -> dict:
        """The method as plain JSON values: name, cost, confusion, outcomes.

        The parameters are validated first. Floats are kept exactly (JSON
        writers such as :func:`json.dumps` write their ``repr``), and numpy
        labels become Python values, so ``from_dict(to_dict())`` rebuilds an
        equal method.

        Returns
        -------
        data : dict
            ``{"name": str, "cost": float, "confusion": list of lists of
            float, "outcomes": list}``.

        See Also
        --------
        from_dict : The inverse.

        Examples
        --------
        >>> from skrbal.inspection import InspectionMethod
        >>> InspectionMethod(name="visual", cost=1.0,
        ...                  confusion=[[0.9, 0.1], [0.2, 0.8]]).to_dict()
        {'name': 'visual', 'cost': 1.0, 'confusion': [[0.9, 0.1], [0.2, 0.8]],
        'outcomes': [0, 1]}
        """
        confusion, outcomes, cost = self._validated()
        return {
            "name": self.name,
            "cost": cost,
            "confusion": confusion.tolist(),
            "outcomes": outcomes.tolist(),
        }

    @classmethod
    def from_dict(cls, data) -> InspectionMethod:
        """The method a :meth:`to_dict` value describes, validated.

        Parameters
        ----------
        data : dict
            With exactly the keys ``name``, ``cost``, ``confusion`` and
            ``outcomes``.

        Returns
        -------
        method : InspectionMethod

        Raises
        ------
        ValueError
            When ``data`` is not such a dict, or a value is invalid (naming
            the method and the entry, as the validation of the parameters
            does).

        Examples
        --------
        >>> from skrbal.inspection import InspectionMethod
        >>> method = InspectionMethod.from_dict(
        ...     {"name": "visual", "cost": 1.0,
        ...      "confusion": [[0.9, 0.1], [0.2, 0.8]], "outcomes": ["ok", "bad"]})
        >>> method.outcomes_.tolist()
        ['ok', 'bad']
        """
        if not isinstance(data, dict) or set(data) != set(_DICT_KEYS):
            raise ValueError(
                "an inspection method must be a dict with exactly the keys "
                f"{', '.join(_DICT_KEYS)}; got {data!r}."
            )
        method = cls(**data)
        method._validated()
        return method


def perfect_inspection(
    process: DecisionProcess, *, name: str = "perfect", cost: float | None = None
) -> InspectionMethod:
    """The inspection that reveals the current health state without error.

    Its confusion matrix is the identity and its outcomes are the process's
    class labels, so its expected value of sample information is the EVPI
    and :func:`choose_inspection` with this method alone is the EVPI rule
    ``process.evpi(proba) > process.inspection_cost``.

    Parameters
    ----------
    process : DecisionProcess
        The process whose states the inspection reveals.
    name : str, default="perfect"
        Name of the method.
    cost : float, default=None
        Cost of one inspection; ``None`` means ``process.inspection_cost``.

    Returns
    -------
    method : InspectionMethod

    See Also
    --------
    InspectionMethod : An inspection with any confusion model.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.inspection import perfect_inspection
    >>> method = perfect_inspection(synthetic_decision_process())
    >>> method.cost, method.outcomes_.tolist()
    (7.0, [1, 2, 3, 4])
    >>> method.confusion[3]
    array([0., 0., 0., 1.])
    """
    if not isinstance(process, DecisionProcess):
        raise TypeError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    classes = process.classes_
    return InspectionMethod(
        name=name,
        cost=float(process.inspection_cost) if cost is None else cost,
        confusion=np.eye(len(classes)),
        outcomes=classes.copy(),
    )
