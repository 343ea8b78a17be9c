"""The one campaign of risk-based learning that every driver shares (private).

:class:`~skrbal.active.RiskBasedLearner` walks a recorded stream,
:class:`~skrbal.online.RiskBasedAgent` a live feed; both hold a
:class:`Campaign` (model and update rule, requests, budget state, expiry),
which decides with :class:`DecisionKernel` (beliefs -> value -> method ->
budget -> request, and results read back) and learns with the update rules
of :func:`make_update` (supervised, EM, smoothing) over the steps it keeps.
Nothing here is public API: the drivers are.

Modules: ``_campaign`` (the running state and its request book), ``_kernel``
(the decision step and results), ``_fantasy`` (the pending results
fantasised, bounded and kept between calls), ``_updates`` (the update rules,
:func:`clone_for` and the shared parameter checks), ``_steps`` (the steps
the rules read: a recorded stream, or an agent's buffers).
"""

from skrbal._learning._campaign import (
    Campaign,
    Request,
    RequestBook,
    check_campaign_params,
    reissue,
    warning_texts,
)
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
from skrbal._learning._params import CampaignParams
from skrbal._learning._steps import DenseSteps, RecordedSteps, SparseSteps
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
    "Campaign",
    "CampaignParams",
    "DecisionKernel",
    "DenseSteps",
    "EMUpdate",
    "Fantasies",
    "RecordedSteps",
    "Request",
    "RequestBook",
    "Result",
    "SmoothingUpdate",
    "SparseSteps",
    "StreamState",
    "SupervisedUpdate",
    "can_partial_fit",
    "check_anchor_methods",
    "check_campaign_params",
    "check_learnable",
    "check_learning_params",
    "check_state_coverage",
    "clone_for",
    "give_classes",
    "make_update",
    "reissue",
    "reveals_state",
    "soft_rows",
    "stack_rows",
    "take_rows",
    "top_combinations",
    "warning_texts",
]
