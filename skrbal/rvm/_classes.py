"""The classes an mRVM covers and its beliefs where no relevance vector reaches."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

# Pseudo-count added to every class's label count for class_prior="frequencies"
# (Jeffreys' prior): a declared class without labels keeps a small positive
# belief far from the data.
PRIOR_PSEUDO_COUNT = 0.5


class ClassSet:
    """The classes of a fit: declared, or those of the labels.

    Parameters
    ----------
    declared : array-like or None
        Every class the model must cover (``classes``), or ``None`` for the
        classes in ``y``.
    class_prior : array-like, "uniform" or "frequencies"
        The beliefs far from every relevance vector (``class_prior``).

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._classes import ClassSet
    >>> class_set = ClassSet([1, 2, 3], "frequencies")
    >>> classes, y_index = class_set.encode(np.array([1, 1, 2]))
    >>> classes.tolist(), y_index.tolist()
    ([1, 2, 3], [0, 0, 1])
    >>> class_set.prior(y_index, 3).round(3).tolist()
    [0.556, 0.333, 0.111]
    """

    def __init__(self, declared, class_prior):
        self.declared = declared
        self.class_prior = class_prior

    def encode(self, y):
        """``(classes, index of each label in classes)``.

        Raises
        ------
        ValueError
            If ``y`` holds one class and none are declared, the declared ones
            are not 1-d, fewer than two or duplicated, or ``y`` holds a label
            not declared.
        """
        check_classification_targets(y)
        if self.declared is None:
            classes, y_index = np.unique(y, return_inverse=True)
            if classes.size < 2:
                raise ValueError(
                    "MulticlassRVC needs at least two classes but y holds one "
                    f"class ({classes[0]!r}); pass `classes` to declare every "
                    "class the model must cover."
                )
            return classes, y_index
        classes = np.asarray(self.declared)
        if classes.ndim != 1 or classes.size < 2:
            raise ValueError(
                "`classes` must be a 1-d array-like of at least two labels, got "
                f"{self.declared!r}."
            )
        unique = np.unique(classes)
        if unique.size != classes.size:
            raise ValueError(f"`classes` has duplicate labels: {self.declared!r}.")
        unknown = ~np.isin(y, unique)
        if unknown.any():
            raise ValueError(
                f"y has labels not in `classes`: {np.unique(y[unknown])!r}."
            )
        return unique, np.searchsorted(unique, y)

    def prior(self, y_index, n_classes):
        """Beliefs where no relevance vector reaches, shape ``(n_classes,)``.

        Raises
        ------
        ValueError
            If a given prior does not hold one positive, finite value per class.
        """
        if isinstance(self.class_prior, str):
            if self.class_prior == "uniform":
                return np.full(n_classes, 1.0 / n_classes)
            counts = np.bincount(y_index, minlength=n_classes) + PRIOR_PSEUDO_COUNT
            return counts / counts.sum()
        prior = np.asarray(self.class_prior, dtype=float)
        if prior.shape != (n_classes,) or not np.all(np.isfinite(prior)):
            raise ValueError(
                f"class_prior must hold one finite probability per class "
                f"({n_classes}), got {self.class_prior!r}."
            )
        if np.any(prior <= 0):
            raise ValueError(
                "class_prior must be positive for every class (a class of prior "
                f"0 could never be believed), got {self.class_prior!r}."
            )
        return prior / prior.sum()
