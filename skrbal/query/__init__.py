"""Query strategies with modAL's calling convention, led by EVPI sampling."""

from skrbal.query._strategies import (
    EVPISampling,
    entropy_sampling,
    evpi_sampling,
    evpi_scores,
    least_confident_sampling,
    random_sampling,
)

__all__ = [
    "EVPISampling",
    "entropy_sampling",
    "evpi_sampling",
    "evpi_scores",
    "least_confident_sampling",
    "random_sampling",
]
