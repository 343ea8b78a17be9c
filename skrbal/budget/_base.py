"""The budget-policy protocol: decide, step by step, which decisions to inspect."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError

from skrbal.budget._scan import AllOfRule, ScanRule

__all__ = ["AllOf", "BudgetPolicy"]


def check_no_bool_numbers(policy) -> None:
    """Refuse a bool for a numeric parameter of ``policy``, naming it.

    ``True == 1`` passes scikit-learn's ``Interval`` checks (a bool is an
    ``Integral``), so ``SpendCap(limit=True)`` would spend 1 per period.
    """
    for name, constraints in policy._parameter_constraints.items():
        value = getattr(policy, name, None)
        if "boolean" not in constraints and isinstance(value, bool | np.bool_):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(policy).__name__} must be a "
                f"number, not a bool: got {value!r}."
            )


class BudgetPolicy(ScanRule, BaseEstimator):
    """Base class of the inspection budget policies.

    A policy reads the EVPI of consecutive decisions and says which to
    inspect. It holds only configuration; its running state (spend so far,
    recent EVPI, ...) is a JSON-serialisable ``dict`` passed in and out of
    :meth:`scan`, so an agent can store it in a database and resume exactly,
    and the same policy object can drive many streams.

    Subclasses implement three private methods:

    - ``_initial_state()``: the state before any step;
    - ``_candidates(evpi, times, cost, state)``: a boolean array, True at the
      steps the policy would inspect if no step before them (in this call)
      were inspected;
    - ``_advance(evpi, times, cost, state, inspected)``: the state after
      absorbing the given steps, the last one inspected when ``inspected``.

    :meth:`scan` combines them: the first step that is a candidate and
    available is inspected. Because a policy's state changes only through
    ``_advance``, scanning a block or its pieces in sequence gives the same
    result, and policies compose (:class:`AllOf`, ``policy & other``).

    See Also
    --------
    CostThreshold : The paper's rule, ``EVPI > cost``.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import CostThreshold
    >>> policy = CostThreshold()
    >>> state = policy.initial_state()
    >>> evpi = np.array([1.0, 9.0, 3.0, 8.0])
    >>> policy.scan(evpi, np.arange(4.0), np.ones(4, bool), 5.0, state)
    (1, {})
    """

    _parameter_constraints: ClassVar[dict] = {}

    def __and__(self, other):
        if not isinstance(other, BudgetPolicy):
            return NotImplemented
        return AllOf(policies=[*_members(self), *_members(other)])

    # -------------------------------------------------------------- #
    def _check_params(self) -> None:
        """Raise an error naming any invalid parameter."""
        check_no_bool_numbers(self)
        self._validate_params()


def _members(policy):
    return list(policy.policies) if isinstance(policy, AllOf) else [policy]


class AllOf(AllOfRule, BudgetPolicy):
    """Inspect only where every policy agrees.

    Each member sees every step; a step is inspected when all members would
    inspect it, and then every member counts the inspection (its spend, its
    gap, ...). ``a & b`` builds ``AllOf(policies=[a, b])``, flattening nested
    compositions.

    Parameters
    ----------
    policies : list of BudgetPolicy
        The members, at least one.

    See Also
    --------
    BudgetPolicy : The protocol each member follows.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.budget import AllOf, CostThreshold
    >>> policy = AllOf(policies=[CostThreshold(), CostThreshold()])
    >>> evpi = np.array([1.0, 9.0])
    >>> policy.scan(evpi, np.arange(2.0), np.ones(2, bool), 5.0,
    ...             policy.initial_state())
    (1, {'policies': [{}, {}]})
    """

    _parameter_constraints: ClassVar[dict] = {"policies": [list, tuple]}

    def _check_params(self) -> None:
        if not isinstance(self.policies, list | tuple) or not self.policies:
            raise ValueError(
                f"policies must be a non-empty list of BudgetPolicy, got "
                f"{self.policies!r}."
            )
        for policy in self.policies:
            if not isinstance(policy, BudgetPolicy):
                raise TypeError(
                    f"policies must hold BudgetPolicy instances, got "
                    f"{type(policy).__name__}."
                )
            policy._check_params()
