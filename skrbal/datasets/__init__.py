"""Structural health monitoring data: generators, loaders and a splitter.

- :func:`make_degradation_stream`: the synthetic four-state degradation and
  repair stream of the paper's first case study.
- :func:`make_z24_like`: natural frequencies with the character of the Z24
  bridge benchmark; :func:`load_z24` reads and labels a copy of the real one.
- :func:`make_fleet`: a fleet of Z24-like bridges, each with its own
  frequencies, environment, noise, damage onset (or none) and repairs.
- :func:`load_campaign`: a monitoring campaign of your own, a CSV or
  Parquet table of features, labels and (optionally) actions and times;
  :func:`load_fleet_campaign` the same for a fleet, with an asset column.
- :func:`stream_test_split`: the experimental protocol, a random test set and
  a stream in temporal order with a small initial labelled set.

Every generator and loader returns ``X, y, actions`` (:func:`load_campaign`
a Bunch holding them, :func:`make_fleet` and :func:`load_fleet_campaign`
one per structure); ``actions`` are the
indices of the maintenance actions taken after each observation, as the
matching :class:`~skrbal.DecisionProcess` numbers them.
"""

from skrbal.datasets._campaign import load_campaign
from skrbal.datasets._fleet import make_fleet
from skrbal.datasets._fleet_campaign import load_fleet_campaign
from skrbal.datasets._split import stream_test_split
from skrbal.datasets._synthetic import make_degradation_stream
from skrbal.datasets._z24 import load_z24, make_z24_like

__all__ = [
    "load_campaign",
    "load_fleet_campaign",
    "load_z24",
    "make_degradation_stream",
    "make_fleet",
    "make_z24_like",
    "stream_test_split",
]
