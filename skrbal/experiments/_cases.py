"""Case studies: a data record, its decision process and the paper's protocol."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sklearn.utils import Bunch

from skrbal._decision import (
    DecisionProcess,
    synthetic_decision_process,
    z24_decision_process,
)
from skrbal.datasets import make_degradation_stream, make_z24_like, stream_test_split

__all__ = ["CaseStudy", "get_case_study"]


@dataclass(frozen=True)
class CaseStudy:
    """A data record, the decision it informs and how runs are split.

    Parameters
    ----------
    name : str
        Short name (``'synthetic'``, ``'z24'``).
    make_process : callable
        ``make_process() -> DecisionProcess``.
    make_data : callable
        ``make_data(random_state) -> (X, y, actions)``: the whole record in
        temporal order.
    initial_size : float
        Share of the stream labelled at the start (the paper: 0.2 % for the
        synthetic study, 0.3 % for Z24).
    test_size : float, default=0.5
        Share of the record held out as the test set.
    standardise : bool, default=False
        Standardise every feature with the mean and standard deviation of the
        whole record before splitting. Those statistics need no labels, so an
        operator has them; the Z24 frequencies differ in scale by a factor of
        three and a unit-variance prior suits them only once standardised.
    description : str, default=''
        One line for reports.

    Examples
    --------
    >>> from skrbal.experiments import get_case_study
    >>> case = get_case_study("synthetic")
    >>> split = case.split(random_state=0)
    >>> split.X_stream.shape[1], case.process().inspection_cost
    (2, 7.0)
    """

    name: str
    make_process: Callable[[], DecisionProcess]
    make_data: Callable
    initial_size: float
    test_size: float = 0.5
    standardise: bool = False
    description: str = field(default="", compare=False)

    def process(self) -> DecisionProcess:
        """The decision process of the study.

        Returns
        -------
        process : DecisionProcess
        """
        return self.make_process()

    def split(self, random_state=None, data_random_state=0) -> Bunch:
        """One repetition's data: test set, stream and initial labelled set.

        Parameters
        ----------
        random_state : int, RandomState instance or None, default=None
            Draws the test set and the initial labelled set.
        data_random_state : int, default=0
            Seed of the record itself; the paper keeps one record and redraws
            only the split, so every repetition shares it.

        Returns
        -------
        split : Bunch
            As :func:`skrbal.datasets.stream_test_split`.
        """
        X, y, actions = self.make_data(data_random_state)
        if self.standardise:
            X = (X - X.mean(axis=0)) / X.std(axis=0)
        return stream_test_split(
            X,
            y,
            actions,
            test_size=self.test_size,
            initial_size=self.initial_size,
            random_state=random_state,
        )


def _synthetic_data(random_state):
    return make_degradation_stream(random_state=random_state)


def _z24_like_data(random_state):
    return make_z24_like(random_state=random_state)


_CASES = {
    "synthetic": CaseStudy(
        name="synthetic",
        make_process=synthetic_decision_process,
        make_data=_synthetic_data,
        initial_size=0.002,
        description="synthetic four-state degradation stream, 6 repair cycles",
    ),
    "z24": CaseStudy(
        name="z24",
        make_process=z24_decision_process,
        make_data=_z24_like_data,
        initial_size=0.003,
        standardise=True,
        description="Z24-like natural frequencies (4 modes), damage at the end",
    ),
}


def get_case_study(name: str) -> CaseStudy:
    """Look up a built-in case study by name.

    Parameters
    ----------
    name : {'synthetic', 'z24'}
        ``'z24'`` uses the Z24-like generator; build a :class:`CaseStudy` with
        :func:`skrbal.datasets.load_z24` for the real record.

    Returns
    -------
    case : CaseStudy

    Examples
    --------
    >>> from skrbal.experiments import get_case_study
    >>> get_case_study("z24").initial_size
    0.003
    """
    try:
        return _CASES[name]
    except KeyError:
        raise ValueError(
            f"unknown case study {name!r}; choose from {sorted(_CASES)}."
        ) from None
