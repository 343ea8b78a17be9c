"""The decision processes of the paper's two case studies."""

from __future__ import annotations

import numpy as np

from skrbal._decision._process import DecisionProcess

__all__ = ["synthetic_decision_process", "z24_decision_process"]

_SYNTHETIC_TRANSITION = (
    (  # d = 0, do nothing: monotone degradation
        (0.8, 0.18, 0.015, 0.005),
        (0.0, 0.8, 0.15, 0.05),
        (0.0, 0.0, 0.8, 0.2),
        (0.0, 0.0, 0.0, 1.0),
    ),
    (  # d = 1, repair
        (1.0, 0.0, 0.0, 0.0),
        (0.99, 0.01, 0.0, 0.0),
        (0.99, 0.0, 0.01, 0.0),
        (0.99, 0.0, 0.0, 0.01),
    ),
)

# The Z24 tables exactly as printed; rows (d=0, y=2) and (d=1, y=1) do not sum
# to one, so validation rejects them. Kept to test that it does.
_Z24_TRANSITION_AS_PRINTED = (
    (
        (0.7, 0.28, 0.015, 0.005),
        (0.43, 0.55, 0.15, 0.05),
        (0.0, 0.0, 0.8, 0.2),
        (0.0, 0.0, 0.0, 1.0),
    ),
    (
        (0.7173, 0.2857, 0.0, 0.0),
        (0.4388, 0.5612, 0.0, 0.0),
        (0.5996, 0.3904, 0.01, 0.0),
        (0.5996, 0.3904, 0.0, 0.01),
    ),
)

# The evident correction: state 2 degrades like state 1 (0.015, 0.005), and
# 0.7173 is a transposition of 0.7143 = 1 - 0.2857.
_Z24_TRANSITION = np.array(_Z24_TRANSITION_AS_PRINTED)
_Z24_TRANSITION[0, 1] = (0.43, 0.55, 0.015, 0.005)
_Z24_TRANSITION[1, 0] = (0.7143, 0.2857, 0.0, 0.0)
_Z24_TRANSITION.flags.writeable = False

_SHM_STATE_NAMES = ("undamaged", "minor damage", "significant damage", "failure")
_Z24_STATE_NAMES = ("normal", "cold", "incipient damage", "advanced damage")


def synthetic_decision_process() -> DecisionProcess:
    """Decision process of the paper's synthetic four-state case study.

    States ``1..4`` (undamaged, minor, significant, critical damage), actions
    do nothing / repair with utilities ``0`` and ``-30``, next-state utilities
    ``10, 10, 5, -75``, monotone degradation when nothing is done, repair back
    to state 1 with probability 0.99, and an inspection cost of 7
    (Hughes et al., sections 3.1.1).

    Returns
    -------
    process : DecisionProcess

    See Also
    --------
    z24_decision_process : The Z24 bridge case study.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> process = synthetic_decision_process()
    >>> process.state_action_utility
    array([[  9.5 , -20.  ],
           [  5.  , -20.  ],
           [-11.  , -20.05],
           [-75.  , -20.85]])
    >>> float(process.inspection_cost)
    7.0
    """
    return DecisionProcess(
        transition=np.array(_SYNTHETIC_TRANSITION),
        state_utility=np.array([10.0, 10.0, 5.0, -75.0]),
        action_utility=np.array([0.0, -30.0]),
        inspection_cost=7.0,
        classes=np.array([1, 2, 3, 4]),
        state_names=_SHM_STATE_NAMES,
        action_names=("do nothing", "repair"),
    )


def z24_decision_process() -> DecisionProcess:
    """Decision process of the paper's Z24 bridge case study.

    States ``1..4`` (normal, cold, incipient damage, advanced damage), actions
    do nothing / perform maintenance with utilities ``0`` and ``-100``,
    next-state utilities ``10, 10, -50, -1000`` and an inspection cost of 30.

    Returns
    -------
    process : DecisionProcess

    See Also
    --------
    synthetic_decision_process : The synthetic case study.

    Notes
    -----
    Two rows of the transition tables as printed in the paper are not
    probability distributions, and :class:`DecisionProcess` rejects them:

    - ``d = 0``, state 2 reads ``[0.43, 0.55, 0.15, 0.05]`` (sum 1.18). The
      damage propensities are evidently those of state 1 (``0.015, 0.005``):
      both undamaged states degrade alike; the row used is
      ``[0.43, 0.55, 0.015, 0.005]``.
    - ``d = 1``, state 1 reads ``[0.7173, 0.2857, 0, 0]`` (sum 1.003), a
      transposition of ``0.7143 = 1 - 0.2857``; the row used is
      ``[0.7143, 0.2857, 0, 0]``.

    Examples
    --------
    >>> from skrbal import z24_decision_process
    >>> process = z24_decision_process()
    >>> process.optimal_action([[1, 0, 0, 0], [0, 0, 0, 1]])
    array([0, 1])
    >>> float(process.inspection_cost)
    30.0
    """
    return DecisionProcess(
        transition=_Z24_TRANSITION.copy(),
        state_utility=np.array([10.0, 10.0, -50.0, -1000.0]),
        action_utility=np.array([0.0, -100.0]),
        inspection_cost=30.0,
        classes=np.array([1, 2, 3, 4]),
        state_names=_Z24_STATE_NAMES,
        action_names=("do nothing", "perform maintenance"),
    )
