"""What a user must know about one mRVM fit: the warnings it raises and records."""

from __future__ import annotations

import warnings

import numpy as np

from skrbal.exceptions import (
    LostClassWarning,
    NonDiscriminatingFitWarning,
    caller_stacklevel,
)

# A fit discriminates its training classes when its training log loss is at
# least this fraction below the entropy of the class frequencies (the log loss
# of the best constant belief) and its training accuracy beats the majority
# class. Uniform beliefs gain 0; every fit of the benchmark sets gains > 0.8.
MIN_INFORMATION_GAIN = 0.05


def lost_classes(scores, y_index) -> np.ndarray:
    """Indices of the labelled classes predicted for none of their samples."""
    predicted = np.argmax(scores, axis=1)
    recalled = np.unique(predicted[predicted == y_index])
    return np.setdiff1d(np.unique(y_index), recalled)


def discrimination(scores, log_proba, y_index) -> tuple[bool, dict]:
    """Whether training scores discriminate the classes, and the numbers.

    Compares the scores with the best constant belief (the class
    frequencies): the accuracy with the majority class share, the log loss
    (of ``log_proba``, the beliefs of ``scores``) with the entropy of the
    frequencies.
    """
    counts = np.bincount(y_index)
    shares = counts[counts > 0] / y_index.size
    if shares.size < 2:
        # A single observed class: there is nothing to discriminate.
        return True, {}
    log_loss = -np.mean(log_proba[np.arange(y_index.size), y_index])
    entropy = -np.sum(shares * np.log(shares))
    accuracy = np.mean(np.argmax(scores, axis=1) == y_index)
    gain = 1.0 - log_loss / entropy
    discriminates = bool(accuracy > shares.max() and gain >= MIN_INFORMATION_GAIN)
    return discriminates, {
        "training_accuracy": float(accuracy),
        "majority_share": float(shares.max()),
        "log_loss": float(log_loss),
        "class_entropy": float(entropy),
    }


class FitReport:
    """The warnings of one fit of one method, raised and recorded.

    Each check raises its warning from the user's line (whatever the depth:
    ``_fit_context``, a Pipeline, a learner) and appends it to ``warnings``,
    which the estimator exposes as ``fit_warnings_``.

    Parameters
    ----------
    method : str
        The method fitted, named in the messages.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.rvm._diagnostics import FitReport
    >>> report = FitReport("mrvm2")
    >>> report.check_prune_threshold(tau=1e-5, nu=1e-5, prune_threshold=1e4)
    >>> report.warnings
    []
    """

    def __init__(self, method: str):
        self.method = method
        self.warnings: list[Warning] = []

    def warn(self, warning: Warning) -> None:
        """Raise ``warning`` at the user's line and record it."""
        self.warnings.append(warning)
        warnings.warn(warning, stacklevel=caller_stacklevel())

    def check_prune_threshold(self, *, tau, nu, prune_threshold) -> None:
        """Warn when mRVM2 can never prune: the threshold is above the
        largest precision the hyperprior allows."""
        ceiling = (2.0 * tau + 1.0) / (2.0 * nu)
        if prune_threshold < ceiling:
            return
        self.warn(
            UserWarning(
                f"prune_threshold={prune_threshold:g} is not below the "
                f"largest precision the hyperprior allows, {ceiling:g}; "
                "mRVM2 will never prune a sample."
            )
        )

    def check_discrimination(self, scores, log_proba, y_index, n_relevance) -> bool:
        """Whether the fit discriminates its training classes; warns if not."""
        discriminates, diagnostics = discrimination(scores, log_proba, y_index)
        if discriminates:
            return True
        # The message does not change with the numbers, so Python's default
        # filter shows it once for a run of refits (a stream study); the
        # numbers of each fit travel with the warning.
        warning = NonDiscriminatingFitWarning(
            f"MulticlassRVC ({self.method}) cannot discriminate its "
            f"{np.unique(y_index).size} training classes: on the training "
            "data it predicts no better than the majority class, or its "
            "beliefs are barely better than the class frequencies (see the "
            "warning's `diagnostics` in `fit_warnings_`). Its beliefs "
            "ignore the features: give it more labels, or a kernel width "
            "(gamma) suited to the feature scale"
            + (", or use method='mrvm2'." if self.method == "mrvm1" else ".")
        )
        warning.diagnostics = {**diagnostics, "n_relevance": int(n_relevance)}
        self.warn(warning)
        return False

    def check_lost_classes(self, scores, y_index, classes, discriminates):
        """The labelled classes predicted for none of their training samples.

        Their relevance vectors were pruned or their weights drained, so the
        model cannot tell them apart anywhere they were labelled. Warns with
        :class:`LostClassWarning`, unless the fit discriminates nothing (it
        has already warned with :class:`NonDiscriminatingFitWarning`).
        """
        lost = classes[lost_classes(scores, y_index)]
        if lost.size and discriminates:
            warning = LostClassWarning(
                f"MulticlassRVC ({self.method}) predicts none of the training "
                f"samples of the labelled classes {lost.tolist()!r} as their "
                "class (see `lost_classes_`): their relevance vectors were "
                "pruned or carry no weight. Give them more labels or a wider "
                "kernel (smaller gamma, or gamma='auto')"
                + (
                    ", and keep max_alpha_updates bounded."
                    if self.method == "mrvm2"
                    else "."
                )
            )
            warning.classes = lost
            self.warn(warning)
        return lost
