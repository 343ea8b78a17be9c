"""Bayesian Gaussian-mixture classifiers with normal-inverse-Wishart priors."""

from skrbal.mixture._gmm import BayesianGMMClassifier

__all__ = ["BayesianGMMClassifier"]
