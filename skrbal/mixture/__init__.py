"""Bayesian Gaussian-mixture classifiers with normal-inverse-Wishart priors."""

from skrbal.mixture._gmm import BayesianGMMClassifier
from skrbal.mixture._semi_supervised import SemiSupervisedGMMClassifier

__all__ = ["BayesianGMMClassifier", "SemiSupervisedGMMClassifier"]
