"""The one learning kernel that every risk-based driver shares (private).

:class:`~skrbal.active.RiskBasedLearner` walks a recorded stream,
:class:`~skrbal.online.RiskBasedAgent` a live feed; both decide with
:class:`DecisionKernel` (beliefs -> value -> method -> budget -> request, and
results read back) and learn with the update rules of :func:`make_update`
(supervised, EM, smoothing) over a :class:`StreamState`. Nothing here is
public API: the drivers are.

Modules: ``_kernel`` (the decision step and results), ``_updates`` (the update
rules, :func:`clone_for` and the shared parameter checks).
"""

from skrbal._learning._kernel import (
    PENDING_VALUES,
    BlockDecisions,
    DecisionKernel,
    Fantasies,
    Result,
    check_anchor_methods,
    reveals_state,
    top_combinations,
)
from skrbal._learning._updates import (
    EM_STARTS,
    SEMI_SUPERVISED,
    UPDATE_MODES,
    EMUpdate,
    SmoothingUpdate,
    StreamState,
    SupervisedUpdate,
    can_partial_fit,
    check_learnable,
    check_learning_params,
    check_state_coverage,
    clone_for,
    give_classes,
    make_update,
    soft_rows,
    stack_rows,
    take_rows,
)

__all__ = [
    "EM_STARTS",
    "PENDING_VALUES",
    "SEMI_SUPERVISED",
    "UPDATE_MODES",
    "BlockDecisions",
    "DecisionKernel",
    "EMUpdate",
    "Fantasies",
    "Result",
    "SmoothingUpdate",
    "StreamState",
    "SupervisedUpdate",
    "can_partial_fit",
    "check_anchor_methods",
    "check_learnable",
    "check_learning_params",
    "check_state_coverage",
    "clone_for",
    "give_classes",
    "make_update",
    "reveals_state",
    "soft_rows",
    "stack_rows",
    "take_rows",
    "top_combinations",
]
