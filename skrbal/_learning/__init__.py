"""The one campaign of risk-based learning that every driver shares (private).

:class:`~skrbal.active.RiskBasedLearner` walks a recorded stream,
:class:`~skrbal.online.RiskBasedAgent` a live feed; both hold a
:class:`Campaign` (model and update rule, requests, budget state, expiry),
which decides with :class:`DecisionKernel` (beliefs -> value -> method ->
budget -> request, and results read back) and learns with the update rules
of :func:`make_update` (supervised, EM, smoothing) over the steps it keeps.
Nothing here is public API: the drivers are.

Modules: ``_campaign`` (the running state: model, learning, fantasies, and
its snapshot), ``_decision_state`` (the decisions' running state: requests,
budget state, stall, expiry), ``_requests`` (the request book), ``_kernel``
(the decision step and results), ``_fantasy`` (the pending results
fantasised, bounded and kept between calls), ``_updates`` (the update rules,
:func:`clone_for` and the shared parameter checks), ``_steps`` (the steps
the rules read: a recorded stream, or an agent's buffers).

The names are imported when first used (PEP 562): ``_kernel``,
``_decision_state``, ``_requests`` and ``_fantasy`` import numpy alone, so
that deciding from a snapshot of the model (issue 28.25) does not import
scikit-learn through this package.
"""

from skrbal._lazy import lazy_attributes

_LAZY = {
    "DecisionState": "skrbal._learning._decision_state",
    "AfterState": "skrbal._learning._snapshot",
    "SNAPSHOT_VERSION": "skrbal._learning._snapshot",
    "snapshot_value": "skrbal._learning._snapshot",
    "BlockFantasies": "skrbal._learning._fantasy",
    "MAX_FANTASISED": "skrbal._learning._fantasy",
    "Campaign": "skrbal._learning._campaign",
    "Request": "skrbal._learning._requests",
    "RequestBook": "skrbal._learning._requests",
    "check_campaign_params": "skrbal._learning._campaign",
    "reissue": "skrbal._learning._campaign",
    "warning_texts": "skrbal._learning._campaign",
    "BlockDecisions": "skrbal._learning._kernel",
    "DecisionKernel": "skrbal._learning._kernel",
    "Fantasies": "skrbal._learning._kernel",
    "PENDING_VALUES": "skrbal._learning._kernel",
    "Result": "skrbal._learning._kernel",
    "check_anchor_methods": "skrbal._learning._kernel",
    "reveals_state": "skrbal._learning._kernel",
    "top_combinations": "skrbal._learning._kernel",
    "CampaignParams": "skrbal._learning._params",
    "DenseSteps": "skrbal._learning._steps",
    "RecordedSteps": "skrbal._learning._steps",
    "SparseSteps": "skrbal._learning._steps",
    "EMUpdate": "skrbal._learning._updates",
    "EM_STARTS": "skrbal._learning._updates",
    "SEMI_SUPERVISED": "skrbal._learning._updates",
    "SmoothingUpdate": "skrbal._learning._updates",
    "StreamState": "skrbal._learning._updates",
    "SupervisedUpdate": "skrbal._learning._updates",
    "UPDATE_MODES": "skrbal._learning._updates",
    "can_partial_fit": "skrbal._learning._updates",
    "check_learnable": "skrbal._learning._updates",
    "check_learning_params": "skrbal._learning._updates",
    "check_state_coverage": "skrbal._learning._updates",
    "clone_for": "skrbal._learning._updates",
    "give_classes": "skrbal._learning._updates",
    "make_update": "skrbal._learning._updates",
    "soft_rows": "skrbal._learning._updates",
    "stack_rows": "skrbal._learning._updates",
    "take_rows": "skrbal._learning._updates",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
