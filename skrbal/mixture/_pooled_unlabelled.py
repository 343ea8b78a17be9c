"""A structure's own unlabelled stream, for the healthy class of a pooled model.

:class:`~skrbal.mixture.PooledGMMClassifier` learns its classes from labels;
a structure commissioned on healthy data has a few days of healthy labels and
months of unlabelled observations. Those observations show the shape of the
structure's own healthy state (long along the seasons, narrow otherwise),
which the fleet's healthy prior (round, from many structures) does not. The
stream here keeps them, normalised, and gives the reference class their
statistics weighted by the reference class's responsibility under the model.
"""

from __future__ import annotations

import numpy as np

from skrbal.mixture._niw import _merge, _sample_statistics, _Statistics

__all__ = ["UnlabelledStream"]


class UnlabelledStream:
    """The unlabelled samples of one structure, in its normalised space.

    Parameters
    ----------
    n_features : int
        Number of features.
    """

    def __init__(self, n_features: int):
        self.Z = np.zeros((0, n_features))
        self.weight = np.zeros(0)

    @property
    def size(self) -> int:
        """Number of unlabelled samples kept."""
        return int(self.weight.shape[0])

    def extend(self, Z: np.ndarray, weight: np.ndarray) -> None:
        """Append normalised samples and their sample weights."""
        keep = weight > 0
        self.Z = np.concatenate([self.Z, Z[keep]])
        self.weight = np.concatenate([self.weight, weight[keep]])

    def statistics(self, responsibility: np.ndarray) -> _Statistics:
        """Count, mean and scatter of the samples weighted by ``responsibility``."""
        return _sample_statistics(self.Z, self.weight * responsibility)

    def merged_into(
        self, labelled: _Statistics, k: int, responsibility: np.ndarray
    ) -> _Statistics:
        """``labelled`` with class ``k`` merged with the weighted samples."""
        extra = self.statistics(responsibility)
        stats = _Statistics(*(field.copy() for field in labelled))
        merged = _merge(
            labelled.count.item(k),
            labelled.mean[k],
            labelled.scatter[k],
            extra.count.item(0),
            extra.mean[0],
            extra.scatter[0],
        )
        for field, value in zip(stats, merged):
            field[k] = value
        return stats
