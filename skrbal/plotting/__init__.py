"""Figures of risk-based active-learning studies (needs matplotlib)."""

from skrbal.plotting._curves import (
    plot_class_proportions,
    plot_query_curves,
    query_curve_summary,
)
from skrbal.plotting._evpi import EVPIDisplay, plot_model_evpi
from skrbal.plotting._queries import (
    plot_query_counts,
    plot_query_positions,
    segment_boundaries,
)

__all__ = [
    "EVPIDisplay",
    "plot_class_proportions",
    "plot_model_evpi",
    "plot_query_counts",
    "plot_query_curves",
    "plot_query_positions",
    "query_curve_summary",
    "segment_boundaries",
]
