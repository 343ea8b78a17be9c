"""Multiclass relevance vector machines with multinomial-probit likelihood."""

from skrbal.exceptions import LostClassWarning, NonDiscriminatingFitWarning
from skrbal.rvm._mrvm import MulticlassRVC

__all__ = ["LostClassWarning", "MulticlassRVC", "NonDiscriminatingFitWarning"]
