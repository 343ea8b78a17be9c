"""Bayesian Gaussian-mixture classifiers with normal-inverse-Wishart priors."""

from skrbal.exceptions import UnlabelledClassesWarning
from skrbal.mixture._class_priors import process_weight_concentration
from skrbal.mixture._gmm import BayesianGMMClassifier
from skrbal.mixture._semi_supervised import SemiSupervisedGMMClassifier

__all__ = [
    "BayesianGMMClassifier",
    "SemiSupervisedGMMClassifier",
    "UnlabelledClassesWarning",
    "process_weight_concentration",
]
