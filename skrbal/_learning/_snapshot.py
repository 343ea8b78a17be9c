"""What deciding a block needs of the model, as JSON: the campaign's snapshot.

A model whose beliefs are a :class:`~skrbal._predictive.StudentTPredictive`
(the NIW classifiers of :mod:`skrbal.mixture` without a directed class
prior) decides a block from a few arrays per class: its predictive, and,
while requests are pending and counted (``pending_value='fantasy'``), the
stacked predictive of the copies that learnt their likeliest results and
those outcomes' weights. :func:`snapshot_value` writes them as JSON-ready
values; an agent keeps the value of the state after each call that changes
the model or the fantasised requests in that call's event, where the event
chain covers it (issue 28.25), and a driver that has only numpy decides the
next blocks from it bit for bit.

The value's ``version`` is :data:`SNAPSHOT_VERSION`; a reader refuses any
other (a store written before snapshots has none, and is decided by the
model itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from skrbal._learning._fantasy import PendingFantasies, stacked_predictor

__all__ = ["SNAPSHOT_VERSION", "AfterState", "model_predictive", "snapshot_value"]

#: The layout of :func:`snapshot_value`'s value.
SNAPSHOT_VERSION = 1


def model_predictive(model):
    """The model's :class:`~skrbal._predictive.StudentTPredictive`, or ``None``.

    ``None`` for a model whose beliefs are not one (another kind, or a class
    with a directed prior).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> model_predictive(GaussianNB().fit([[0.0], [1.0]], [0, 1])) is None
    True
    """
    stacked = stacked_predictor([model])
    predictive = getattr(stacked, "predictive", None)
    if predictive is None or getattr(stacked, "directed", True):
        return None
    return predictive


def snapshot_value(model, fantasies=None, pending=()) -> dict | None:
    """The JSON-ready snapshot of ``model`` and the fantasies of ``pending``.

    Parameters
    ----------
    model : classifier
        The model.
    fantasies : PendingFantasies or None, default=None
        The copies that learnt the results of the requests ``pending``.
    pending : sequence of int, default=()
        The fantasised requests' ids, oldest first (none: no fantasies).

    Returns
    -------
    snapshot : dict or None
        ``version``, ``classes``, ``model`` (the predictive as JSON) and,
        with ``pending``, ``fantasies``: ``pending`` and
        :meth:`PendingFantasies.snapshot`. ``None`` when the model or the
        copies have no predictive.

    Examples
    --------
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> model = BayesianGMMClassifier().fit([[0.0], [0.2], [5.0], [5.3]], [1, 1, 2, 2])
    >>> value = snapshot_value(model)
    >>> value["version"], value["classes"], "fantasies" in value
    (1, [1, 2], False)
    """
    predictive = model_predictive(model)
    if predictive is None:
        return None
    value = {
        "version": SNAPSHOT_VERSION,
        "classes": model.classes_.tolist(),
        "model": predictive.to_json(),
    }
    if len(pending):
        copies = fantasies.snapshot()
        if copies is None:
            return None
        value["fantasies"] = {"pending": [int(i) for i in pending], **copies}
    return value


@dataclass(frozen=True)
class AfterState:
    """The snapshot of a campaign after a call, built before the call commits.

    Attributes
    ----------
    value : dict
        :func:`snapshot_value` of the state after the call (for its event).
    pending : tuple of int
        The fantasised requests after the call.
    fantasies : PendingFantasies or None
        Their copies, learnt for the model after the call: the campaign
        keeps them once the call commits, so the next call does not learn
        them again.

    Examples
    --------
    >>> AfterState(value={"version": 1}, pending=(), fantasies=None).pending
    ()
    """

    value: dict
    pending: tuple
    fantasies: PendingFantasies | None
