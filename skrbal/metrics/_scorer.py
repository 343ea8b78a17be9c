"""Decision-based scorers for scikit-learn's model selection tools."""

from __future__ import annotations

import sklearn
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from skrbal._decision import DecisionProcess
from skrbal.metrics._decision_metrics import decision_accuracy, utility_regret

__all__ = ["make_decision_scorer"]

_METRICS = ("accuracy", "regret")


class _DecisionScorer:
    """Callable ``scorer(estimator, X, y)`` scoring decisions, greater is better.

    A plain callable rather than ``sklearn.metrics.make_scorer``: the score
    function of ``make_scorer`` receives ``predict_proba`` without the
    estimator's ``classes_``, and a classifier fitted on a fold that lacked a
    class has fewer columns than the process has states, so the columns cannot
    be matched to states without the labels.

    It takes part in scikit-learn's metadata routing as ``make_scorer``'s
    scorers do: ``set_score_request(sample_weight=True)`` asks
    :func:`~sklearn.model_selection.cross_validate` and the searches to pass
    the test fold's weights; without a request, passing weights is an error
    rather than a silent unweighted score.
    """

    def __init__(self, process: DecisionProcess, metric: str):
        self.process = process
        self.metric = metric
        self._sample_weight_request = None

    def set_score_request(self, *, sample_weight=UNCHANGED):
        """Request ``sample_weight`` when the scorer is routed metadata.

        Parameters
        ----------
        sample_weight : bool, str or None, default=UNCHANGED
            ``True`` to receive the weights, ``False`` not to, ``None`` to
            raise if they are passed, a string to receive them under that
            alias. Only available with
            ``sklearn.set_config(enable_metadata_routing=True)``.

        Returns
        -------
        self : scorer
        """
        if not sklearn.get_config().get("enable_metadata_routing", False):
            raise RuntimeError(
                "set_score_request is only available when metadata routing is "
                "enabled: sklearn.set_config(enable_metadata_routing=True)."
            )
        if sample_weight is not UNCHANGED:
            self._sample_weight_request = sample_weight
        return self

    def get_metadata_routing(self) -> MetadataRequest:
        """The metadata this scorer requests: ``sample_weight`` for ``score``.

        Returns
        -------
        routing : MetadataRequest
        """
        request = MetadataRequest(owner=self)
        request.score.add_request(
            param="sample_weight", alias=self._sample_weight_request
        )
        return request

    def __call__(self, estimator, X, y_true, sample_weight=None) -> float:
        classes = getattr(estimator, "classes_", None)
        if classes is None:
            raise ValueError(
                f"{type(estimator).__name__} has no classes_: a decision scorer "
                "needs a fitted classifier with classes_ and predict_proba."
            )
        proba = estimator.predict_proba(X)
        if self.metric == "accuracy":
            return decision_accuracy(
                y_true,
                proba,
                self.process,
                classes=classes,
                sample_weight=sample_weight,
            )
        # 0.0 - r rather than -r: a perfect score should read 0.0, not -0.0.
        return 0.0 - utility_regret(
            y_true, proba, self.process, classes=classes, sample_weight=sample_weight
        )

    def __repr__(self) -> str:
        return f"make_decision_scorer({self.process!r}, metric={self.metric!r})"


def make_decision_scorer(process: DecisionProcess, *, metric: str = "accuracy"):
    """Make a scorer that rates a classifier by the decisions it leads to.

    The scorer has the signature ``scorer(estimator, X, y, sample_weight=None)``
    accepted by ``scoring=`` in :class:`~sklearn.model_selection.GridSearchCV`,
    :func:`~sklearn.model_selection.cross_val_score` and friends. It calls the
    estimator's ``predict_proba`` and maps the columns onto the process's
    states through the estimator's ``classes_``, so a classifier fitted on a
    fold that lacked some classes is scored correctly (missing states get
    probability zero).

    Parameters
    ----------
    process : DecisionProcess
        The decision process whose actions are compared.
    metric : {"accuracy", "regret"}, default="accuracy"
        ``"accuracy"`` scores with :func:`decision_accuracy`; ``"regret"``
        scores with the negated :func:`utility_regret`, so that greater is
        better as scikit-learn expects.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``.

    See Also
    --------
    decision_accuracy : The accuracy metric.
    utility_regret : The regret metric.

    Notes
    -----
    Labels of ``y`` must be among the process's ``classes_``, and so must the
    estimator's ``classes_``; otherwise a ``ValueError`` names the label.

    With metadata routing enabled, weighted scores reach
    :func:`~sklearn.model_selection.cross_validate` and
    :class:`~sklearn.model_selection.GridSearchCV` through
    ``scorer.set_score_request(sample_weight=True)``, as with the scorers of
    :func:`~sklearn.metrics.make_scorer`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.metrics import make_decision_scorer
    >>> X = np.repeat([[0.0], [5.0], [10.0], [20.0]], 10, axis=0)
    >>> X = X + np.tile(np.linspace(-1, 1, 10), 4)[:, None]
    >>> y = np.repeat([1, 2, 3, 4], 10)
    >>> scorer = make_decision_scorer(synthetic_decision_process(), metric="regret")
    >>> cross_val_score(GaussianNB(), X, y, scoring=scorer, cv=2)
    array([0., 0.])
    """
    if not isinstance(process, DecisionProcess):
        raise ValueError(
            f"process must be a DecisionProcess, got {type(process).__name__}."
        )
    if not isinstance(metric, str) or metric not in _METRICS:
        raise ValueError(f"metric must be one of {list(_METRICS)}, got {metric!r}.")
    return _DecisionScorer(process, metric)
