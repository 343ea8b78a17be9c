"""Figures of risk-based active-learning studies (needs matplotlib)."""

from skrbal.plotting._curves import (
    plot_class_proportions,
    plot_query_curves,
    query_curve_summary,
)

__all__ = [
    "plot_class_proportions",
    "plot_query_curves",
    "query_curve_summary",
]
