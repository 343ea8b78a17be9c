"""Multiclass relevance vector machines with multinomial-probit likelihood."""

from skrbal.rvm._mrvm import MulticlassRVC, NonDiscriminatingFitWarning

__all__ = ["MulticlassRVC", "NonDiscriminatingFitWarning"]
