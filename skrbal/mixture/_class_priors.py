"""Per-class priors stated in engineering terms, and class weights from a process.

A class with a *directed* prior has, instead of the broad NIW prior shared by
every class, a mixture of two NIW priors: a directed one, centred where the
user says the state lies relative to a reference class (typically the healthy
one), and the broad one, kept with a defensive weight so that a wrong
statement cannot make the state undetectable. A mixture of conjugate priors
is conjugate: the posterior is the mixture of the two NIW posteriors, with
weights updated by each component's marginal likelihood of the class's data,
and the posterior predictive is a mixture of two Student-t densities. Entries
given the same ``'statement'`` name (e.g. "damage lowers every frequency" for
a damaged and a severe state) share which component is true: a label of one
tests the statement for all.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import log, log1p, pi
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from scipy.special import multigammaln

from skrbal._labels import label_positions
from skrbal.exceptions import UnlabelledClassesWarning

__all__ = ["process_weight_concentration"]

_UNITS = ("std", "relative", "absolute")
_SPEC_KEYS = frozenset(
    (
        "shift units reference weight mean_precision degrees_of_freedom statement "
        "check size_factor"
    ).split()
)
# Whether a statement is also weighed by the labels of the classes without one
# (see ``_statement_check``) when the entry does not say.
_DEFAULT_CHECK = False
# The factor within which a statement's size is known when it does not say.
_DEFAULT_SIZE_FACTOR = 1.0
# The prior probability of the directed component when none is stated: the
# broad component keeps a tenth, enough for the data of a state the statement
# misplaces to find it (see the user guide, "Commissioning").
_DEFAULT_DIRECTED_WEIGHT = 0.9
# How many reference-class samples the stated location is worth when the
# statement does not say: 1 / d^2, with d the stated step's length in the
# reference class's (Mahalanobis) standard deviations, so that the directed
# mean is uncertain by about the step itself and a size stated half or twice
# too large lies within one prior standard deviation; clipped to [0.1, 1]: at
# most about three reference standard deviations of uncertainty (a long step),
# at least one (a short one). A fixed 0.1 made a short step (a few percent
# against a reference class that spans the seasons) a component about twice
# as wide as the reference class, which loses to it wherever it has mass.
_LOOSEST_MEAN_PRECISION = 0.1
_TIGHTEST_MEAN_PRECISION = 1.0


class _DirectedPrior(NamedTuple):
    """One validated entry of ``class_priors`` (indices into ``classes_``)."""

    index: int  # the class the prior is about
    reference: int | None  # the class it is stated against; None: most labelled
    shift: np.ndarray  # (D,)
    units: str
    log_weight: float  # log of the directed component's prior probability
    log_defensive: float  # log of the broad component's
    mean_precision: float | None  # kappa of the directed component; None: 1 / d^2
    degrees_of_freedom: float | None  # v of the directed component; None: D + 2
    statement: object = None  # entries with the same name share the indicator
    check: bool = False  # also weighed by the unstated classes' labels
    size_factor: float = 1.0  # the shift's size is known within this factor


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}.")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return float(value)


def _class_index(label, classes: np.ndarray, owner: str) -> int:
    try:
        return int(label_positions(np.array([label]), classes, owner=owner)[0])
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"{owner}: {label!r} is not one of the classes {classes.tolist()}."
        ) from exc


def _validate_entry(label, spec, classes, n_features) -> _DirectedPrior:
    owner = f"class_priors[{label!r}]"
    if not isinstance(spec, Mapping):
        raise ValueError(
            f"{owner} must be a dict such as {{'shift': -3.0}}, got {spec!r}."
        )
    unknown = sorted(map(str, set(spec) - _SPEC_KEYS))
    if unknown:
        raise ValueError(
            f"{owner} has unknown key(s) {unknown}; the keys are {sorted(_SPEC_KEYS)}."
        )
    if "shift" not in spec:
        raise ValueError(f"{owner} must give a 'shift'.")
    try:
        shift = np.array(spec["shift"], dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{owner}['shift'] must be numeric.") from exc
    if shift.ndim == 0:
        shift = np.full(n_features, float(shift))
    if shift.shape != (n_features,) or not np.isfinite(shift).all():
        raise ValueError(
            f"{owner}['shift'] must be a finite float or have shape "
            f"({n_features},) to match n_features, got {spec['shift']!r}."
        )
    units = spec.get("units", "std")
    if units not in _UNITS:
        raise ValueError(f"{owner}['units'] must be one of {_UNITS}, got {units!r}.")
    index = _class_index(label, classes, "class_priors")
    reference = spec.get("reference")
    if reference is not None:
        reference = _class_index(reference, classes, f"{owner}['reference']")
        if reference == index:
            raise ValueError(f"{owner}['reference'] must be another class.")
    weight = spec.get("weight", _DEFAULT_DIRECTED_WEIGHT)
    if isinstance(weight, bool) or not isinstance(weight, Real) or not 0 < weight < 1:
        raise ValueError(
            f"{owner}['weight'] (the prior probability of the directed component) "
            f"must lie strictly between 0 and 1, got {weight!r}: the broad prior "
            "must keep some weight so that a wrong statement cannot hide the state."
        )
    dof = spec.get("degrees_of_freedom")
    if dof is not None:
        dof = _positive(dof, f"{owner}['degrees_of_freedom']")
        if dof <= n_features - 1:
            raise ValueError(
                f"{owner}['degrees_of_freedom'] must be greater than n_features - 1 "
                f"= {n_features - 1}, got {dof}."
            )
    return _DirectedPrior(
        index,
        reference,
        shift,
        units,
        log(weight),
        log1p(-weight),
        None
        if spec.get("mean_precision") is None
        else _positive(spec["mean_precision"], f"{owner}['mean_precision']"),
        dof,
        _statement_name(spec.get("statement"), owner),
        _flag(spec.get("check", _DEFAULT_CHECK), f"{owner}['check']"),
        _size_factor(spec.get("size_factor", _DEFAULT_SIZE_FACTOR), owner),
    )


def _size_factor(value, owner: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, Real)
        or not np.isfinite(value)
        or not value >= 1
    ):
        raise ValueError(
            f"{owner}['size_factor'] (the factor within which the shift's size "
            f"is known) must be a finite number >= 1, got {value!r}."
        )
    return float(value)


#: Sizes (relative to the stated one) of a statement's directed components.
_N_SIZES = 5
#: Their prior probabilities: binomial, a discretised log-normal size whose
#: standard deviation is half the log of the factor (the factor at two).
_SIZE_PRIOR = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


def stated_sizes(entry: _DirectedPrior) -> tuple:
    """The size factors of an entry's directed components and their log prior.

    A statement whose size is known within a factor ``f`` (``size_factor``)
    has ``_N_SIZES`` directed components, its shift scaled by ``f^u`` for
    ``u`` evenly spaced in [-1, 1], with binomial prior probabilities
    (1, 4, 6, 4, 1) / 16: a log-normal size about the stated one, on a grid,
    with ``f`` two standard deviations away. ``f = 1`` is the stated size
    alone.
    """
    if entry.size_factor == 1.0:
        return np.ones(1), np.zeros(1)
    return entry.size_factor ** np.linspace(-1.0, 1.0, _N_SIZES), np.log(_SIZE_PRIOR)


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _statement_name(name, owner: str):
    if name is None or isinstance(name, (str, Integral)):
        return name
    raise ValueError(
        f"{owner}['statement'] must be a name (a string or an integer) shared "
        f"by the entries of one statement, got {name!r}."
    )


def validate_class_priors(class_priors, classes, n_features) -> tuple:
    """The entries of ``class_priors``, checked, in the order of ``classes``."""
    if class_priors is None:
        return ()
    if not isinstance(class_priors, Mapping):
        raise ValueError(
            "class_priors must be a dict {class label: {'shift': ...}}, got "
            f"{class_priors!r}."
        )
    entries = [
        _validate_entry(label, spec, classes, n_features)
        for label, spec in class_priors.items()
    ]
    directed = {entry.index for entry in entries}
    if len(directed) != len(entries):
        raise ValueError("class_priors names a class twice.")
    weights = {}
    for label, entry in zip(class_priors, entries):
        if entry.statement is None:
            continue
        first = weights.setdefault(entry.statement, (label, entry.log_weight))
        if first[1] != entry.log_weight:
            raise ValueError(
                f"class_priors[{first[0]!r}] and class_priors[{label!r}] make one "
                f"statement ({entry.statement!r}) but give it different weights: "
                "the weight is the prior probability that the statement is "
                "right, one number for all its entries."
            )
    for entry in entries:
        if entry.reference in directed:
            raise ValueError(
                f"class_priors[{classes[entry.index]!r}]['reference'] = "
                f"{classes[entry.reference]!r} has a directed prior itself; the "
                "reference must be a class with the broad prior (e.g. the "
                "healthy one)."
            )
    return tuple(sorted(entries, key=lambda entry: entry.index))


def resolve_references(directed: tuple, counts: np.ndarray) -> tuple:
    """Fill in the default reference: the most labelled class without a prior."""
    if all(entry.reference is not None for entry in directed):
        return directed
    candidates = np.ones(len(counts), dtype=bool)
    candidates[[entry.index for entry in directed]] = False
    if not candidates.any():
        raise ValueError(
            "class_priors gives every class a directed prior: one class (e.g. the "
            "healthy one) must keep the broad prior to be the reference."
        )
    most = int(np.flatnonzero(candidates)[np.argmax(counts[candidates])])
    return tuple(
        entry if entry.reference is not None else entry._replace(reference=most)
        for entry in directed
    )


def stated_mean_precision(step, reference_covariance) -> float:
    """``kappa`` of a directed component whose statement gives none.

    ``1 / d^2`` with ``d^2 = step' Sigma^-1 step`` the squared Mahalanobis
    length of the stated step in the reference class's covariance, clipped to
    ``[0.1, 1]``: the directed mean (``N(m, Sigma / kappa)``) is uncertain by
    about the step itself, at most about three and at least one reference
    standard deviation.
    """
    distance = float(step @ np.linalg.solve(reference_covariance, step))
    if not distance > 1.0 / _TIGHTEST_MEAN_PRECISION:
        return _TIGHTEST_MEAN_PRECISION
    return max(1.0 / distance, _LOOSEST_MEAN_PRECISION)


def directed_niw(entry: _DirectedPrior, reference_mean, reference_covariance):
    """``(m, kappa, v, S)`` of the directed NIW component of one class.

    Its mean is the reference class's posterior mean moved by the stated
    shift, and its covariance prior is centred on the reference class's
    covariance (the inverse-Wishart mean ``S / (v - D - 1)`` equals it):
    damage moves a state, the measurement noise stays about the same. Its
    mean precision is the stated one, else :func:`stated_mean_precision`.
    """
    d = reference_mean.shape[0]
    if entry.units == "std":
        step = entry.shift * np.sqrt(np.diagonal(reference_covariance))
    elif entry.units == "relative":
        step = entry.shift * np.abs(reference_mean)
    else:
        step = entry.shift
    dof = float(d + 2) if entry.degrees_of_freedom is None else entry.degrees_of_freedom
    # For v <= D + 1 the inverse-Wishart has no mean; its mode S / (v + D + 1)
    # is then set to the reference covariance instead.
    divisor = dof - d - 1 if dof > d + 1 else dof + d + 1
    kappa = entry.mean_precision
    if kappa is None:
        kappa = stated_mean_precision(step, reference_covariance)
    return (
        reference_mean + step,
        kappa,
        dof,
        divisor * reference_covariance,
    )


def niw_log_marginal(kappa0, dof0, scale0, count, kappa_n, dof_n, scale_n) -> float:
    """Log marginal likelihood of a class's (weighted) data under an NIW prior.

    ``log p(X) = -N D / 2 log(pi) + log Gamma_D(v_n / 2) - log Gamma_D(v0 / 2)
    + v0 / 2 log|S0| - v_n / 2 log|S_n| + D / 2 (log kappa0 - log kappa_n)``
    (Murphy, 2012, eq. 4.215); fractional counts enter as they are. The data
    terms may also be stacks (one data set per row: ``count``, ``kappa_n`` and
    ``dof_n`` of shape (S,), ``scale_n`` of shape (S, D, D)), giving an array.
    """
    d = scale0.shape[-1]
    _, logdet0 = np.linalg.slogdet(scale0)
    _, logdet_n = np.linalg.slogdet(scale_n)
    value = (
        -0.5 * count * d * log(pi)
        + multigammaln(0.5 * dof_n, d)
        - multigammaln(0.5 * dof0, d)
        + 0.5 * dof0 * logdet0
        - 0.5 * dof_n * logdet_n
        + 0.5 * d * (np.log(kappa0) - np.log(kappa_n))
    )
    return float(value) if np.ndim(value) == 0 else value


def component_log_weights(entry: _DirectedPrior, log_marginal_broad, log_marginal_dir):
    """Posterior ``(log w_broad, log w_directed)`` of the two components."""
    a = entry.log_defensive + log_marginal_broad
    b = entry.log_weight + log_marginal_dir
    top = max(a, b)
    total = top + log(np.exp(a - top) + np.exp(b - top))
    return a - total, b - total


def validate_concentration(value, classes, minimum: float, owner: str) -> np.ndarray:
    """``weight_concentration_prior`` as one positive ``alpha_k`` per class."""
    n = len(classes)
    if isinstance(value, Real) and not isinstance(value, bool):
        alpha = np.full(n, float(value))
    elif isinstance(value, Mapping):
        alpha = np.ones(n)
        for label, entry in value.items():
            k = _class_index(label, classes, "weight_concentration_prior")
            alpha[k] = _positive(entry, f"weight_concentration_prior[{label!r}]")
    else:
        try:
            alpha = np.array(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "weight_concentration_prior must be a float, a dict {class: alpha} "
                f"or one alpha per class, got {value!r}."
            ) from exc
        if alpha.shape != (n,):
            raise ValueError(
                f"weight_concentration_prior must have shape ({n},), one alpha per "
                f"class of {classes.tolist()}, got shape {alpha.shape}."
            )
    if not (
        np.isfinite(alpha).all() and (alpha >= minimum).all() and (alpha > 0).all()
    ):
        bound = f">= {minimum:g}" if minimum > 0 else "> 0"
        raise ValueError(
            f"{owner}: every weight_concentration_prior must be finite and "
            f"{bound}, got {alpha.tolist()}."
        )
    return alpha


def process_weight_concentration(
    process,
    *,
    horizon: int,
    start=None,
    total: float | None = None,
    min_concentration: float = 0.1,
) -> dict:
    """Dirichlet class weights from a decision process's transition model.

    The prior weight of a health state that has never been labelled is the
    fraction of time the process expects to spend in it over the first
    ``horizon`` steps after commissioning, when it starts in ``start`` and
    nothing is done: ``occupancy = mean_{t=1..horizon} e_start T_0^t`` with
    ``T_0`` the transition under the first action (doing nothing). The
    concentrations are ``total * occupancy``, floored at ``min_concentration``
    so that no state is silenced: a state whose weight is tiny needs a
    correspondingly large likelihood ratio before the belief shows it, and
    the floor bounds that ratio where the data say the state is there.

    Parameters
    ----------
    process : DecisionProcess
        The decision process; its first action must be "do nothing".
    horizon : int
        Number of steps ahead the commissioning belief is about (e.g. the
        steps until the next scheduled inspection).
    start : label, default=None
        State of the structure when commissioned. ``None`` is the first
        state of the process (the healthy one in the presets).
    total : float, default=None
        Sum of the concentrations before the floor, the prior's weight in
        samples; ``None`` is the number of states (so that a state with the
        average occupancy has the default ``alpha = 1``).
    min_concentration : float, default=0.1
        Smallest concentration given to any state.

    Returns
    -------
    concentration : dict
        ``{state label: alpha}`` for every state of the process, to pass as
        ``weight_concentration_prior``.

    See Also
    --------
    BayesianGMMClassifier : Takes the dict as ``weight_concentration_prior``.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.mixture import process_weight_concentration
    >>> alpha = process_weight_concentration(synthetic_decision_process(), horizon=1)
    >>> {state: round(value, 3) for state, value in alpha.items()}
    {1: 3.2, 2: 0.72, 3: 0.1, 4: 0.1}
    """
    _ = process.state_action_utility  # validates the process
    transition = np.asarray(process.transition, dtype=float)[0]
    classes = np.asarray(process.classes_)
    n = len(classes)
    if isinstance(horizon, bool) or not isinstance(horizon, Integral) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}.")
    total = float(n) if total is None else _positive(total, "total")
    floor = _positive(min_concentration, "min_concentration")
    state = np.zeros(n)
    state[0 if start is None else _class_index(start, classes, "start")] = 1.0
    occupancy = np.zeros(n)
    for _ in range(int(horizon)):
        state = state @ transition
        occupancy += state
    occupancy /= horizon
    alpha = np.maximum(total * occupancy, floor)
    return {label: float(value) for label, value in zip(classes.tolist(), alpha)}


def statement_groups(entries) -> np.ndarray:
    """The statement each directed entry belongs to, as a group number.

    Entries with the same ``'statement'`` name make one statement (e.g.
    "damage lowers every frequency", sizes per state): it is right or wrong
    for all of them together, so they share one component indicator and a
    label of any of them tests it for all. An entry without a name is a
    statement of its own.
    """
    names, groups = {}, []
    for j, entry in enumerate(entries):
        key = ("entry", j) if entry.statement is None else ("name", entry.statement)
        groups.append(names.setdefault(key, len(names)))
    return np.array(groups, dtype=np.intp)


def tied_log_weights(entries, log_marginals) -> np.ndarray:
    """Posterior ``(log w_broad, log w_directed)`` of every entry, shape (M, 2).

    The entries of one statement (:func:`statement_groups`) share their
    indicator: its posterior is the prior times the product of the members'
    marginal likelihoods under each component.
    """
    log_marginals = np.asarray(log_marginals, dtype=float).reshape(-1, 2)
    groups = statement_groups(entries)
    totals = np.zeros((groups.max(initial=-1) + 1, 2))
    np.add.at(totals, groups, log_marginals)
    out = np.empty_like(log_marginals)
    for j, entry in enumerate(entries):
        out[j] = component_log_weights(entry, *totals[groups[j]])
    return out


def _describe(entry, classes) -> str:
    shift = np.unique(entry.shift)
    amount = f"{shift[0]:g}" if shift.size == 1 else str(entry.shift.tolist())
    units = {
        "std": " standard deviations of",
        "relative": " times the level of",
        "absolute": " from",
    }[entry.units]
    weight = float(np.exp(entry.log_defensive))
    label, reference = classes[entry.index].item(), classes[entry.reference].item()
    return (
        f"the belief in [{label!r}] rests on the directed prior of class_priors (shift "
        f"{amount}{units} class {reference!r}) mixed with the broad prior (weight "
        f"{weight:.3g})"
    )


def unlabelled_classes_warning(owner, classes, labelled, directed):
    """An :class:`UnlabelledClassesWarning` naming the classes without a label."""
    missing = np.flatnonzero(~(np.asarray(labelled) > 0))
    if not missing.size:
        return None
    by_index = {entry.index: entry for entry in directed}
    broad = [classes[k].item() for k in missing if k not in by_index]
    parts = [_describe(by_index[k], classes) for k in missing if k in by_index]
    if broad:
        parts.insert(0, f"the belief in {broad} rests on the broad prior alone")
    return UnlabelledClassesWarning(
        f"{owner}: class(es) {classes[missing].tolist()} have no labelled sample; "
        f"{'; '.join(parts)}. Their probabilities are assumptions, "
        "not measurements: label an example of each, or state where each lies "
        "(class_priors) and how likely it is (weight_concentration_prior)."
    )
