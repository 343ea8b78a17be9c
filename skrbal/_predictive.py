"""The Student-t posterior predictive of conjugate classifiers, numpy only.

The mixture classifiers of :mod:`skrbal.mixture` predict each class with a
multivariate Student-t (the posterior predictive of a normal-inverse-Wishart
class model). Everything their ``predict_proba`` needs is a few arrays per
class: a location, a whitener ``W = L^{-T}`` of the scale's Cholesky factor,
the degrees of freedom, and an offset (the density's normaliser plus the log
class prior). :class:`StudentTPredictive` holds those arrays for one model or
for several stacked (copies that learnt fantasised results), computes the
beliefs from them, and writes them as JSON at full precision and back, so
that a model's beliefs can be computed without scikit-learn or scipy (the
command line's decision step, issue 28.25). The classifiers compute their own
densities with :func:`student_t_log_density`: one implementation, so a
predictive rebuilt from JSON gives their ``predict_proba`` bit for bit.
"""

from __future__ import annotations

import json
from math import log

import numpy as np

from skrbal._logspace import exp_normalise

__all__ = [
    "PredictiveClassifier",
    "StudentTPredictive",
    "log1p_mahalanobis",
    "squared_mahalanobis",
    "student_t_log_density",
]

#: Format of :meth:`StudentTPredictive.to_json`.
PREDICTIVE_FORMAT = 1


def student_t_log_density(X, means, whiteners, df, offset, index=None) -> np.ndarray:
    """Student-t log densities plus an offset per class, shape (n_classes, n).

    ``log t_k(x) + offset_k`` with ``t_k`` the multivariate Student-t of
    location ``means[k]``, whitener ``whiteners[k]`` (``W = L^{-T}`` of the
    scale's Cholesky factor ``L``) and ``df[k]`` degrees of freedom, and
    ``offset_k`` its log normaliser plus whatever the caller adds (a log class
    prior). With ``index``, the distinct predictives are ``means``,
    ``whiteners`` and ``df`` and row ``j`` of the result is predictive
    ``index[j]`` (``offset`` has one entry per row): a class repeated across
    stacked models is computed once.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._predictive import student_t_log_density
    >>> student_t_log_density(np.zeros((1, 1)), np.zeros((1, 1)),
    ...                       np.ones((1, 1, 1)), np.array([3.0]), np.zeros(1))
    array([[-0.]])
    """
    d = X.shape[1]
    density = log1p_mahalanobis(X, means, whiteners, df)
    if index is not None:
        density, df = density[index], df[index]
    density *= -0.5 * (df[:, None] + d)
    density += offset[:, None]
    return density


class StudentTPredictive:
    """The class predictives of one or several models, as arrays.

    Parameters
    ----------
    means : ndarray of shape (n_models * n_classes, n_features)
        Each model's class locations, model after model.
    whiteners : ndarray of shape (n_models * n_classes, n_features, n_features)
        ``W = L^{-T}`` of each class's predictive scale ``L L^T``.
    df : ndarray of shape (n_models * n_classes,)
        Degrees of freedom.
    offset : ndarray of shape (n_models * n_classes,)
        Log normaliser of each density plus the log class prior.
    n_classes : int
        Classes per model.

    Attributes
    ----------
    n_models : int
        The models stacked.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._predictive import StudentTPredictive
    >>> predictive = StudentTPredictive(
    ...     means=np.array([[0.0], [4.0]]), whiteners=np.ones((2, 1, 1)),
    ...     df=np.array([5.0, 5.0]), offset=np.log([0.5, 0.5]), n_classes=2)
    >>> predictive.proba(np.array([[0.0], [4.0]])).round(3)
    array([[[0.987, 0.013],
            [0.013, 0.987]]])
    >>> again = StudentTPredictive.from_json(predictive.to_json())
    >>> bool(np.array_equal(again.proba(np.array([[1.0]])),
    ...                     predictive.proba(np.array([[1.0]]))))
    True
    """

    def __init__(self, *, means, whiteners, df, offset, n_classes: int):
        means, whiteners = np.asarray(means, float), np.asarray(whiteners, float)
        df, offset = np.asarray(df, float), np.asarray(offset, float)
        n_rows = df.shape[0]
        if (
            n_classes < 1
            or n_rows % n_classes
            or means.shape[0] != n_rows
            or whiteners.shape != (n_rows, means.shape[1], means.shape[1])
            or offset.shape != (n_rows,)
        ):
            raise ValueError(
                "StudentTPredictive: means, whiteners, df and offset must hold "
                f"one entry per class of each model ({n_classes} per model), got "
                f"shapes {means.shape}, {whiteners.shape}, {df.shape}, "
                f"{offset.shape}."
            )
        self.n_classes, self.n_models = int(n_classes), n_rows // int(n_classes)
        self.offset = offset
        # Each class's density depends on its own predictive only: one
        # repeated across the models (bit for bit) is computed once.
        seen: dict = {}
        self.index = np.array(
            [
                seen.setdefault(
                    (means[j].tobytes(), whiteners[j].tobytes(), df[j].tobytes()),
                    len(seen),
                )
                for j in range(n_rows)
            ],
            dtype=np.intp,
        )
        unique = np.unique(self.index, return_index=True)[1]
        self.means, self.whiteners = means[unique], whiteners[unique]
        self.df = df[unique]

    @property
    def n_features(self) -> int:
        """Features of a sample."""
        return self.means.shape[1]

    def log_density(self, X: np.ndarray) -> np.ndarray:
        """Each model's joint log densities, shape (n_models * n_classes, n)."""
        return student_t_log_density(
            X, self.means, self.whiteners, self.df, self.offset, self.index
        )

    def proba(self, X: np.ndarray) -> np.ndarray:
        """Each model's beliefs over ``X``, shape (n_models, n_samples, n_classes).

        ``X`` is a finite float64 array of shape (n_samples, n_features).
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features}), got {X.shape}."
            )
        density = self.log_density(X)
        stacked = density.reshape(self.n_models, self.n_classes, X.shape[0])
        return exp_normalise(stacked.transpose(0, 2, 1), axis=-1)

    def to_json(self) -> str:
        """The predictive as JSON text, every number at full precision."""
        rows = self.index
        return json.dumps(
            {
                "format": PREDICTIVE_FORMAT,
                "n_classes": self.n_classes,
                "means": self.means[rows].tolist(),
                "whiteners": self.whiteners[rows].tolist(),
                "df": self.df[rows].tolist(),
                "offset": self.offset.tolist(),
            },
            allow_nan=False,
        )

    @classmethod
    def from_json(cls, text: str) -> StudentTPredictive:
        """Rebuild a predictive from :meth:`to_json`'s text.

        Raises
        ------
        ValueError
            Naming what is wrong: not this format, or arrays that do not fit.
        """
        try:
            given = json.loads(text)
            if given.get("format") != PREDICTIVE_FORMAT:
                raise ValueError(f"format {given.get('format')!r}")
            return cls(
                means=np.array(given["means"], dtype=float).reshape(
                    len(given["df"]), -1
                ),
                whiteners=given["whiteners"],
                df=given["df"],
                offset=given["offset"],
                n_classes=int(given["n_classes"]),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise ValueError(f"not a StudentTPredictive's JSON: {error}") from None


class PredictiveClassifier:
    """One model's snapshot, with the classifier interface deciding reads.

    ``predict_proba`` and ``classes_`` of the model whose
    :class:`StudentTPredictive` this is: the decision kernel's beliefs
    (:meth:`~skrbal._learning.DecisionKernel.beliefs`) read only these, so it
    decides from the snapshot as from the model.

    Parameters
    ----------
    predictive : StudentTPredictive
        Of one model.
    classes : array-like of shape (n_classes,)
        The model's ``classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal._predictive import PredictiveClassifier, StudentTPredictive
    >>> predictive = StudentTPredictive(
    ...     means=np.array([[0.0], [4.0]]), whiteners=np.ones((2, 1, 1)),
    ...     df=np.array([5.0, 5.0]), offset=np.log([0.5, 0.5]), n_classes=2)
    >>> model = PredictiveClassifier(predictive, ["healthy", "damaged"])
    >>> model.predict_proba(np.array([[4.0]])).round(3), model.classes_
    (array([[0.013, 0.987]]), array(['healthy', 'damaged'], dtype='<U7'))
    """

    def __init__(self, predictive: StudentTPredictive, classes):
        if predictive.n_models != 1:
            raise ValueError(
                f"PredictiveClassifier: one model's predictive, got "
                f"{predictive.n_models}."
            )
        self.predictive = predictive
        self.classes_ = np.asarray(classes)
        if self.classes_.shape != (predictive.n_classes,):
            raise ValueError(
                f"PredictiveClassifier: {predictive.n_classes} classes, got "
                f"{self.classes_.tolist()}."
            )

    def predict_proba(self, X) -> np.ndarray:
        """The beliefs over ``X``, shape (n_samples, n_classes)."""
        return self.predictive.proba(X)[0]


def squared_mahalanobis(
    X: np.ndarray, means: np.ndarray, whiteners: np.ndarray
) -> np.ndarray:
    """``(x - m_k)^T (L_k L_k^T)^{-1} (x - m_k)`` for all samples and classes.

    Returns an array of shape (n_classes, n_samples): each row is written
    contiguously, which is markedly faster than filling strided columns.
    The work runs on the transposed data, features as contiguous rows, in two
    buffers reused by every class: one subtraction, one ``(D, D) @ (D, n)``
    product and the squares summed over the D rows. No copy of ``X`` is made
    per class, and with few features this is several times faster than
    ``(X - m) @ W`` on (n, D) arrays, whose short rows the matrix product
    handles poorly.
    """
    data = np.ascontiguousarray(X.T)
    out = np.empty((means.shape[0], X.shape[0]))
    centred = np.empty_like(data)
    whitened = np.empty_like(data)
    for k, (mean, whitener) in enumerate(zip(means, whiteners)):
        np.subtract(data, mean[:, None], out=centred)
        np.matmul(whitener.T, centred, out=whitened)
        np.multiply(whitened, whitened, out=whitened)
        np.add.reduce(whitened, axis=0, out=out[k])
    return out


def log1p_mahalanobis(
    X: np.ndarray, means: np.ndarray, whiteners: np.ndarray, df: np.ndarray
) -> np.ndarray:
    """``log(1 + maha_k(x) / df_k)`` for all classes and samples, shape (K, n).

    The Student-t kernel. A squared distance beyond the float range (a point
    around 1e154 or further from a class) is recomputed in log space, so every
    finite ``X`` gets a finite value.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = squared_mahalanobis(X, means, whiteners)
        np.divide(out, df[:, None], out=out)
    np.log1p(out, out=out)
    # Finite entries are at most about 710 each, so their sum is finite: one
    # reduction tells whether any entry overflowed.
    if not np.isfinite(out.sum()):
        classes, rows = np.nonzero(~np.isfinite(out))
        for k in np.unique(classes).tolist():
            at = rows[classes == k]
            out[k, at] = _log1p_mahalanobis_far(X[at], means[k], whiteners[k], df[k])
    return out


def _log1p_mahalanobis_far(X, mean, whitener, df) -> np.ndarray:
    """``log(1 + maha / df)`` for one class, with every magnitude in log space.

    Differences are taken on data scaled by its largest magnitude and the
    whitened vectors scaled by theirs, so nothing overflows; the result is the
    same function as the direct path, evaluated where its squares cannot be.
    """
    scale = np.maximum(np.abs(X).max(axis=1), np.abs(mean).max())[:, None]
    z = (X / scale - mean / scale) @ whitener
    size = np.abs(z).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        log_maha = (
            2.0 * np.log(scale[:, 0])
            + 2.0 * np.log(size[:, 0])
            + np.log(((z / size) ** 2).sum(axis=1))
        )
    value = np.logaddexp(0.0, log_maha - log(df))
    if not np.isfinite(value).all():
        raise ValueError(
            "X holds a sample whose distance to a class cannot be represented in "
            "double precision; rescale X."
        )
    return value
