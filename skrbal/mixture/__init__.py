"""Bayesian Gaussian-mixture classifiers with normal-inverse-Wishart priors."""

from skrbal.exceptions import UnlabelledClassesWarning
from skrbal.mixture._class_priors import process_weight_concentration
from skrbal.mixture._fleet_prior import FleetPrior, commissioning_window
from skrbal.mixture._gmm import BayesianGMMClassifier
from skrbal.mixture._pooled import PooledGMMClassifier
from skrbal.mixture._semi_supervised import SemiSupervisedGMMClassifier

__all__ = [
    "BayesianGMMClassifier",
    "FleetPrior",
    "PooledGMMClassifier",
    "SemiSupervisedGMMClassifier",
    "UnlabelledClassesWarning",
    "commissioning_window",
    "process_weight_concentration",
]
