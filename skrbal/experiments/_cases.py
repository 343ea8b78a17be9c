"""Case studies: a data record, its decision process and the paper's protocol."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from os import PathLike
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from skrbal._decision import (
    DecisionProcess,
    synthetic_decision_process,
    z24_decision_process,
)
from skrbal.datasets import (
    load_z24,
    make_degradation_stream,
    make_z24_like,
    stream_test_split,
)

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
    source : str, default=''
        Where the record comes from (a generator and its seed, or a file and
        its SHA-256). It is part of a study's configuration, so a study cannot
        be resumed on different data.

    See Also
    --------
    get_case_study : The built-in case studies, and Z24 from a file.

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
    source: str = ""

    def process(self) -> DecisionProcess:
        """The decision process of the study.

        Returns
        -------
        process : DecisionProcess
        """
        return self.make_process()

    def record(self, data_random_state=0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The whole record in temporal order, standardised if the study says so.

        Parameters
        ----------
        data_random_state : int, default=0
            Seed of the record (see :meth:`split`).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        actions : ndarray of int of shape (n_samples,)
        """
        X, y, actions = self.make_data(data_random_state)
        X = np.asarray(X, dtype=float)
        if self.standardise:
            X = _standardised(X, self.source or self.name)
        return X, np.asarray(y), np.asarray(actions)

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
        X, y, actions = self.record(data_random_state)
        return stream_test_split(
            X,
            y,
            actions,
            test_size=self.test_size,
            initial_size=self.initial_size,
            random_state=random_state,
        )


def _standardised(X: np.ndarray, source: str) -> np.ndarray:
    """Zero mean, unit variance per feature; a constant feature is an error."""
    scale = X.std(axis=0)
    constant = np.flatnonzero(scale == 0)
    if constant.size:
        raise ValueError(
            f"feature {int(constant[0])} (counted from 0) of the record "
            f"({source}) is constant, {X[0, constant[0]]} in every observation: "
            "it cannot be standardised and carries no information. Remove it."
        )
    return (X - X.mean(axis=0)) / scale


def _synthetic_data(random_state):
    return make_degradation_stream(random_state=random_state)


def _z24_like_data(random_state):
    return make_z24_like(random_state=random_state)


def _fixed_record(random_state, *, X, y, actions):
    """A record read once: the same for every seed."""
    return X, y, actions


_CASES = {
    "synthetic": CaseStudy(
        name="synthetic",
        make_process=synthetic_decision_process,
        make_data=_synthetic_data,
        initial_size=0.002,
        description="synthetic four-state degradation stream, 6 repair cycles",
        source="make_degradation_stream(random_state=0)",
    ),
    "z24": CaseStudy(
        name="z24",
        make_process=z24_decision_process,
        make_data=_z24_like_data,
        initial_size=0.003,
        standardise=True,
        description="Z24-like natural frequencies (4 modes), damage at the end",
        source="make_z24_like(random_state=0)",
    ),
}


def _checked_record(data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        X, y, actions = data
    except (TypeError, ValueError):
        raise ValueError(
            "data must be a path to a Z24 file or a tuple (X, y, actions), got "
            f"{type(data).__name__}."
        ) from None
    X, y, actions = np.asarray(X, dtype=float), np.asarray(y), np.asarray(actions)
    if X.ndim != 2 or y.shape != (X.shape[0],) or actions.shape != y.shape:
        raise ValueError(
            "data as (X, y, actions) needs X of shape (n_samples, n_features) and "
            f"y and actions of shape (n_samples,); got {X.shape}, {y.shape} and "
            f"{actions.shape}."
        )
    return X, y, actions


def _z24_from(data) -> CaseStudy:
    """The Z24 case study on a given record (file or arrays)."""
    if isinstance(data, str | PathLike):
        path = Path(data)
        X, y, actions = load_z24(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        source = f"load_z24({str(path)!r}), sha256 {digest}"
        description = f"Z24 natural frequencies (4 modes) from {path.name}"
    else:
        X, y, actions = _checked_record(data)
        digest = hashlib.sha256(
            np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(y).tobytes()
        ).hexdigest()
        source = f"arrays of shape {X.shape}, sha256 {digest}"
        description = f"Z24 record given as arrays, {X.shape[0]} observations"
    _standardised(X, source)  # a record that cannot be used fails here, not in a run
    # The record travels with the case (a few hundred kB), so workers of a
    # remote Dask cluster need no access to the user's file.
    return replace(
        _CASES["z24"],
        make_data=partial(_fixed_record, X=X, y=y, actions=actions),
        description=description,
        source=source,
    )


def get_case_study(name: str, *, data=None) -> CaseStudy:
    """Look up a built-in case study by name, optionally on the user's Z24 data.

    Parameters
    ----------
    name : {'synthetic', 'z24'}
        The case study.
    data : path-like or tuple (X, y, actions), default=None
        Only for ``'z24'``: the real record. A path is read with
        :func:`skrbal.datasets.load_z24` (a ``.mat`` or ``.csv`` file of the
        first four natural frequencies, labelled with its default damage onset
        and cold rule); a tuple is a record already loaded, e.g. by
        ``load_z24(path, damage_onset=3462)``. ``None`` uses the Z24-like
        generator :func:`skrbal.datasets.make_z24_like`. Either way the
        features are standardised with the whole record's mean and standard
        deviation, which need no labels.

    Returns
    -------
    case : CaseStudy

    Raises
    ------
    ValueError
        If the name is unknown, ``data`` is given for the synthetic case, or
        the data cannot be read as a Z24 record.
    FileNotFoundError
        If ``data`` is a path that does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from skrbal.datasets import make_z24_like
    >>> from skrbal.experiments import get_case_study
    >>> get_case_study("z24").initial_size
    0.003
    >>> X, _, _ = make_z24_like(random_state=1)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "z24.csv"
    ...     np.savetxt(path, X, delimiter=",")
    ...     case = get_case_study("z24", data=path)
    >>> case.split(random_state=0).X_stream.shape
    (1966, 4)
    >>> case.source.startswith("load_z24(")
    True
    """
    try:
        case = _CASES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown case study {name!r}; choose from {sorted(_CASES)}."
        ) from None
    if data is None:
        return case
    if name != "z24":
        raise ValueError(
            f"data= is only for the 'z24' case study; {name!r} is generated."
        )
    return _z24_from(data)
