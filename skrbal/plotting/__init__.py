"""Figures of risk-based active-learning studies (needs matplotlib).

Every figure is a display in scikit-learn's pattern: create it with
``from_study``, ``from_frames``, ``from_estimator`` or (an agent's
timeline) ``from_agent`` / ``from_store``, redraw it with
``plot(ax=...)``, and find its artists in the trailing-underscore
attributes. A health state has one colour and one name in every figure
(:func:`state_styles`).
"""

from skrbal.plotting._agent_history import AgentHistoryDisplay
from skrbal.plotting._curves import (
    ClassProportionDisplay,
    QueryCurveDisplay,
    query_curve_summary,
)
from skrbal.plotting._evpi import EVPIDisplay
from skrbal.plotting._queries import (
    QueryCountDisplay,
    QueryPositionDisplay,
    segment_boundaries,
)
from skrbal.plotting._states import StateStyle, state_styles

__all__ = [
    "AgentHistoryDisplay",
    "ClassProportionDisplay",
    "EVPIDisplay",
    "QueryCountDisplay",
    "QueryCurveDisplay",
    "QueryPositionDisplay",
    "StateStyle",
    "query_curve_summary",
    "segment_boundaries",
    "state_styles",
]
