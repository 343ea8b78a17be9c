"""Smoothing with a classifier's class-conditional densities and a process."""

from __future__ import annotations

import numpy as np

from skrbal._labels import labels_differ
from skrbal.smoothing._result import SmoothingResult
from skrbal.smoothing._segment import forward_backward
from skrbal.smoothing._validation import _float_array


def aligned_log_density(estimator, X, process) -> np.ndarray:
    """Class-conditional log densities in the order of a process's states.

    Calls ``estimator.class_log_density(X)`` (columns in
    ``estimator.classes_`` order) and reorders the columns as
    ``process.classes_``.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``classes_`` and ``class_log_density(X)``
        returning ``log p(x | y = k)`` of shape ``(n_samples, n_classes)``.
        Every state of the process must be one of its classes. A Bayesian
        classifier that declares all states up front, such as
        ``BayesianGMMClassifier(classes=process.classes_)``, gives a state it
        has no data for its prior predictive density.
    X : array-like of shape (n_samples, n_features)
        Observations; may have no rows, in which case the estimator is not
        called.
    process : DecisionProcess
        Supplies the states (``classes_``).

    Returns
    -------
    log_density : ndarray of shape (n_samples, n_states)

    Raises
    ------
    ValueError
        If a class of the estimator is not a state of the process or the
        reverse, or the densities have the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal import DecisionProcess
    >>> from skrbal.smoothing import aligned_log_density
    >>> process = DecisionProcess(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]]],
    ...     state_utility=[0.0, -1.0],
    ...     action_utility=[0.0],
    ...     classes=["healthy", "damaged"],
    ... )
    >>> class Densities:
    ...     classes_ = np.array(["damaged", "healthy"])
    ...     def class_log_density(self, X):
    ...         return np.column_stack([-np.ravel(X), np.ravel(X)])
    >>> aligned_log_density(Densities(), [[2.0]], process)
    array([[ 2., -2.]])
    """
    process_classes = np.asarray(process.classes_)
    estimator_classes = np.asarray(estimator.classes_)
    n_samples = np.shape(X)[0]
    position = {label: k for k, label in enumerate(process_classes.tolist())}
    unknown = [c for c in estimator_classes.tolist() if c not in position]
    if unknown:
        raise ValueError(
            f"the estimator's classes {unknown} are not states of the process, "
            f"whose classes are {process_classes.tolist()}."
        )
    columns = [position[c] for c in estimator_classes.tolist()]
    missing = sorted(set(range(len(process_classes))) - set(columns))
    if missing:
        raise ValueError(
            f"the estimator has no class {process_classes[missing].tolist()} of the "
            f"process (estimator classes_ = {estimator_classes.tolist()}), so it "
            "gives no density for those states; declare every state when "
            "constructing it (e.g. classes=process.classes_) so that states "
            "without data get their prior predictive density."
        )
    aligned = np.empty((n_samples, len(process_classes)))
    if n_samples == 0:
        return aligned
    density = _float_array(estimator.class_log_density(X), "class_log_density(X)")
    if density.shape != (n_samples, len(estimator_classes)):
        raise ValueError(
            f"class_log_density(X) has shape {density.shape}, expected "
            f"({n_samples}, {len(estimator_classes)}) (samples, estimator classes)."
        )
    aligned[:, columns] = density
    return aligned


def _label_index(label, process_classes, name: str) -> int:
    matches = (
        np.flatnonzero(~labels_differ(process_classes, label))
        if np.ndim(label) == 0
        else []
    )
    if len(matches) != 1:
        raise ValueError(
            f"{name} = {label!r} is not a state of the process, whose classes are "
            f"{process_classes.tolist()}."
        )
    return int(matches[0])


def smooth_segment(
    estimator,
    X,
    process,
    actions=None,
    *,
    start_label=None,
    end_label=None,
    initial_state=None,
) -> SmoothingResult:
    """Smooth the hidden health states of a segment with a classifier.

    Thin adapter over :func:`forward_backward`: the emissions are the
    estimator's class-conditional log densities (see
    :func:`aligned_log_density`), the transitions those of the decision
    process, and the anchors inspected labels.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``classes_`` and ``class_log_density(X)``.
    X : array-like of shape (n_steps, n_features)
        The observations of the hidden steps, in time order.
    process : DecisionProcess
        Transition model and states.
    actions : array-like of int of shape (n_steps + 1,) or (n_steps,), \
            default=None
        ``actions[t] = d_t``, the action index taken at step ``t``, from the
        start step (``t = 0``) to the step before the end inspection
        (``n_steps + 1`` entries) or, without an end, to the step before the
        last hidden one (``n_steps`` entries). See :func:`forward_backward`.
    start_label : label, default=None
        Inspected label one step before the first hidden step. When None (no
        inspection yet), ``initial_state`` is used instead.
    end_label : label, default=None
        Inspected label one step after the last hidden step; None for an open
        end.
    initial_state : label or array-like of shape (n_states,), default=None
        What is assumed about the start when ``start_label`` is None: a label
        (the paper assumes the structure started undamaged, for instance
        ``initial_state=1`` with :func:`~skrbal.synthetic_decision_process`),
        a probability vector over ``process.classes_``, or None for a uniform
        distribution. Ignored when ``start_label`` is given.

    Returns
    -------
    result : SmoothingResult
        Marginals over ``process.classes_``, pseudo-labels as class labels.

    Raises
    ------
    ImpossibleEvidenceError
        If the labels, actions and observations have probability zero.
    ValueError
        If a label is not a state of the process, the estimator's classes do
        not map onto the process's states, or an input is malformed.

    See Also
    --------
    forward_backward : The underlying smoother on log emissions.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.smoothing import smooth_segment
    >>> class Density:
    ...     classes_ = np.array([1, 2, 3, 4])
    ...     def class_log_density(self, X):
    ...         return -0.5 * (np.asarray(X) - self.classes_) ** 2
    >>> process = synthetic_decision_process()
    >>> X = [[1.1], [3.9], [2.2]]
    >>> smooth_segment(Density(), X, process, [0, 0, 0, 0],
    ...                start_label=1, end_label=1).pseudo_labels
    array([1, 1, 1])
    >>> smooth_segment(Density(), X, process, [0, 0, 0], start_label=1).pseudo_labels
    array([1, 2, 2])
    """
    process_classes = np.asarray(process.classes_)
    log_emission = aligned_log_density(estimator, X, process)
    if start_label is not None:
        start = _label_index(start_label, process_classes, "start_label")
    elif initial_state is None or np.ndim(initial_state) == 1:
        start = initial_state
    else:
        start = _label_index(initial_state, process_classes, "initial_state")
    end = None
    if end_label is not None:
        end = _label_index(end_label, process_classes, "end_label")
    result = forward_backward(
        log_emission,
        np.asarray(process.transition, dtype=float),
        actions,
        start=start,
        end=end,
    )
    return SmoothingResult(
        marginals=result.marginals,
        pseudo_labels=process_classes[result.pseudo_labels],
        log_likelihood=result.log_likelihood,
        classes=process_classes,
    )
