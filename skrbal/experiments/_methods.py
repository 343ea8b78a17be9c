"""Methods compared in a study: an estimator and how it queries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from sklearn.base import clone

__all__ = ["Method", "available_methods", "get_method"]


@dataclass(frozen=True)
class Method:
    """A named way to learn from a stream: an estimator and a query policy.

    Parameters
    ----------
    name : str
        Label in results and figures.
    make_estimator : callable
        ``make_estimator() -> classifier``; called afresh for every run (and
        the result cloned). Any scikit-learn classifier with
        ``predict_proba`` works, Pipelines included: this is how to study an
        estimator that is not built in, which the ``skrbal`` command cannot
        name. A class, a module-level function or a ``functools.partial``
        pickles to every parallel backend.
    query : {'evpi', 'random'}, default='evpi'
        ``'random'`` inspects as many times as the run of ``matched_to`` in the
        same repetition, at random stream positions (the paper's baseline).
    matched_to : str, default=None
        With ``query='random'``, the EVPI method whose inspection count to
        match.
    learner_params : dict, default={}
        Further parameters of :class:`~skrbal.active.RiskBasedLearner`
        (e.g. ``semi_supervised``).

    See Also
    --------
    CaseStudy : Its ``method_params`` set estimator parameters that depend on
        the case (e.g. a kernel width suited to the record's feature scale).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal.experiments import Method
    >>> method = Method("nb-evpi", GaussianNB)
    >>> method.estimator()
    GaussianNB()

    A Pipeline, queried at random as often as another method:

    >>> from functools import partial
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> scaled = Method("scaled-nb-random", partial(make_pipeline, StandardScaler(),
    ...                 GaussianNB()), query="random", matched_to="nb-evpi")
    >>> scaled.estimator()
    Pipeline(steps=[('standardscaler', StandardScaler()), ('gaussiannb', GaussianNB())])
    """

    name: str
    make_estimator: Callable
    query: str = "evpi"
    matched_to: str | None = None
    learner_params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.query not in ("evpi", "random"):
            raise ValueError(
                f"method {self.name!r}: query must be 'evpi' or 'random', got "
                f"{self.query!r}."
            )
        if self.query == "random" and self.matched_to is None:
            raise ValueError(
                f"method {self.name!r}: a random method needs matched_to, the "
                "EVPI method whose number of inspections it matches."
            )
        if self.matched_to == self.name:
            raise ValueError(
                f"method {self.name!r} cannot match its own number of inspections: "
                "matched_to names the EVPI method whose count it takes."
            )

    def estimator(self, case=None):
        """A fresh, unfitted estimator.

        Parameters
        ----------
        case : CaseStudy, default=None
            The case study it will run on: the parameters the case declares
            for this method (its ``method_params[self.name]``) are set.

        Returns
        -------
        estimator : classifier

        Raises
        ------
        TypeError
            If ``case`` is not a case study (a case's name selects nothing).
        ValueError
            If the case sets a parameter the estimator does not have.

        Examples
        --------
        >>> from skrbal.experiments import get_case_study, get_method
        >>> mrvm = get_method("mrvm2-evpi")
        >>> mrvm.estimator(get_case_study("synthetic")).gamma
        0.05
        >>> mrvm.estimator(get_case_study("z24")).gamma is None
        True
        """
        estimator = clone(self.make_estimator())
        if case is None:
            return estimator
        if not hasattr(case, "method_params"):
            raise TypeError(
                f"method {self.name!r}: case must be a CaseStudy, whose "
                f"method_params declare this method's parameters; got {case!r}."
            )
        params = case.method_params.get(self.name, {})
        try:
            return estimator.set_params(**params)
        except ValueError as exc:
            raise ValueError(
                f"case study {case.name!r} sets {', '.join(params)} on method "
                f"{self.name!r}, but its estimator {estimator!r} refuses: {exc}"
            ) from exc


def _gmm():
    from skrbal.mixture import BayesianGMMClassifier

    # The paper's prior, pinned: mean 0 and identity scale on the cases' own
    # features (the synthetic ones raw), as the published studies used it.
    return BayesianGMMClassifier(mean_prior=0.0, covariance_prior=1.0)


def _make_mrvm(method):
    from skrbal.rvm import MulticlassRVC

    # A fixed seed of mRVM2's random start keeps every repetition, and a
    # resumed study, reproducible; the repetitions differ by their splits.
    return MulticlassRVC(method=method, random_state=0)


def _mrvm(method):
    # A partial of a module-level function pickles by reference, so a method
    # travels to any worker (loky, Dask), not only to cloudpickle's.
    return partial(_make_mrvm, method)


_METHODS = {
    "gmm-evpi": Method("gmm-evpi", _gmm),
    "gmm-random": Method("gmm-random", _gmm, query="random", matched_to="gmm-evpi"),
    "gmm-em": Method("gmm-em", _gmm, learner_params={"semi_supervised": "em"}),
    "gmm-smoothing": Method(
        "gmm-smoothing", _gmm, learner_params={"semi_supervised": "smoothing"}
    ),
    # Their kernel width is the paper's 1/D unless the case study declares
    # another (the synthetic case does: see its method_params).
    "mrvm1-evpi": Method("mrvm1-evpi", _mrvm("mrvm1")),
    "mrvm2-evpi": Method("mrvm2-evpi", _mrvm("mrvm2")),
}


def available_methods() -> list[str]:
    """Names of the built-in methods.

    Returns
    -------
    names : list of str

    Examples
    --------
    >>> from skrbal.experiments import available_methods
    >>> "gmm-evpi" in available_methods()
    True
    """
    return list(_METHODS)


def get_method(name_or_method) -> Method:
    """Look up a built-in method by name (a :class:`Method` passes through).

    Parameters
    ----------
    name_or_method : str or Method

    Returns
    -------
    method : Method

    Examples
    --------
    >>> from skrbal.experiments import get_method
    >>> get_method("gmm-random").matched_to
    'gmm-evpi'
    """
    if isinstance(name_or_method, Method):
        return name_or_method
    try:
        return _METHODS[name_or_method]
    except KeyError:
        raise ValueError(
            f"unknown method {name_or_method!r}; choose from {available_methods()} "
            "or pass a Method."
        ) from None
