"""Z24 bridge natural frequencies: a look-alike generator and a loader."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.signal import lfilter
from scipy.signal.windows import tukey
from sklearn.utils import Bunch, check_random_state

from skrbal._validation import check_int, check_positive_real
from skrbal._z24_labels import (
    TEMPERATURE_NAMES,
    Z24_DAMAGE_ONSET,
    Z24_N_SAMPLES,
    check_damage_onset,
    label_z24,
    z24_classes,
)
from skrbal.datasets._files import csv_text
from skrbal.datasets._matfile import describe_mat, find_arrays, mat_value, read_mat

__all__ = ["load_z24", "make_z24_like"]

_N_MODES = 4

# Look-alike model, after Peeters & De Roeck (2001), "One-year monitoring of
# the Z24-Bridge: environmental effects versus damage events". Natural
# frequencies (Hz) at the reference temperature of 10 degC; relative change
# per degC above freezing (the deck softens as it warms); relative rise per
# degC of frost (the asphalt layer stiffens sharply below 0 degC, the cause of
# Z24's cold-period jump); relative loss at the end of the damage tests (the
# modes are not equally sensitive).
_F_REF = np.array([3.95, 5.05, 9.85, 10.95])
_WARM_SLOPE = np.array([-0.0015, -0.0012, -0.0018, -0.0010])
_FROST_GAIN = np.array([0.012, 0.006, 0.010, 0.008])
_DAMAGE_LOSS = np.array([0.075, 0.030, 0.055, 0.040])
# Cumulative share of the final loss after each damage test: the pier
# settlement (the first tests) moves the frequencies most, the later spalling,
# hinge and tendon failures less, and the first test hides in the summer's
# spread.
_DAMAGE_PROFILE = np.array([0.12, 0.3, 0.5, 0.62, 0.72, 0.8, 0.87, 0.94, 1.0])
_NOISE_CORRELATION = 0.4
# Identification scatter of each mode (relative): modes 2 and 4 are the
# weakly excited ones, identified less precisely.
_NOISE_RELATIVE_STD = np.array([0.007, 0.010, 0.006, 0.012])
# Share of observations with one mode misidentified, and the size of the slip.
_OUTLIER_SHARE = 0.015
_OUTLIER_SIZE = (0.02, 0.06)
# Observations per day (Z24: an average every hour or two, with gaps).
_PER_DAY = 12
# Where the long cold period sits, as shares of the pre-damage record: Z24's
# observations 1200 to 1500 of 3476.
_COLD_PERIOD = (1200 / 3476, 1500 / 3476)
_N_COLD_SPELLS = 3
# Length of a short cold spell, in observations (drawn uniformly, upper bound
# excluded).
_COLD_SPELL_LENGTH = (15, 45)


def _temperature(
    rng,
    n_samples: int,
    season_end: int,
    n_cold_spells: int = _N_COLD_SPELLS,
    spell_length: tuple[int, int] = _COLD_SPELL_LENGTH,
) -> np.ndarray:
    """Deck temperature (degC): season, day, weather and cold spells.

    ``season_end`` is the observation where the record's late summer starts
    (the damage onset on Z24); the winter sits at the same shares before it.
    """
    position = np.arange(n_samples) / n_samples
    # From late autumn through a winter minimum to a hot summer, as on Z24.
    season = 12.0 - 11.0 * np.cos(
        2 * np.pi * (position - 0.36 * season_end / n_samples)
    )
    # The sun heats the deck by day, more in summer.
    day = (2.0 + 0.25 * np.maximum(season, 0.0)) * np.sin(
        2 * np.pi * (np.arange(n_samples) / _PER_DAY + rng.uniform())
    )
    weather = lfilter([1.0], [1.0, -0.97], rng.normal(scale=0.7, size=n_samples))
    frost = np.zeros(n_samples)
    start, stop = (round(share * season_end) for share in _COLD_PERIOD)
    frost[start:stop] = 11.0 * tukey(stop - start, alpha=0.3)
    # A few short spells elsewhere before the summer, away from the long one.
    for _ in range(n_cold_spells):
        length = int(rng.randint(*spell_length))
        candidates = np.r_[0 : max(start - length, 0), stop : season_end - length]
        if candidates.size == 0:
            break
        begin = int(rng.choice(candidates))
        frost[begin : begin + length] += rng.uniform(8.0, 11.0) * tukey(length, 0.5)
    return season + day + weather - frost


def _identification_noise(rng, n_samples: int) -> np.ndarray:
    """Relative errors of the identified frequencies.

    Correlated across modes, heavy-tailed (Student t with 4 degrees of
    freedom) and right-skewed, plus occasional slips of one mode.
    """
    correlation = np.full((_N_MODES, _N_MODES), _NOISE_CORRELATION)
    np.fill_diagonal(correlation, 1.0)
    gaussian = (
        rng.standard_normal((n_samples, _N_MODES)) @ np.linalg.cholesky(correlation).T
    )
    heavy = gaussian * np.sqrt(2.0 / rng.chisquare(4.0, size=(n_samples, 1)))
    skewed = (rng.gamma(2.0, 1.0, size=(n_samples, _N_MODES)) - 2.0) / np.sqrt(2.0)
    noise = (0.8 * heavy + 0.6 * skewed) * _NOISE_RELATIVE_STD
    slips = np.flatnonzero(rng.uniform(size=n_samples) < _OUTLIER_SHARE)
    modes = rng.randint(_N_MODES, size=slips.size)
    signs = rng.choice([-1.0, 1.0], size=slips.size)
    noise[slips, modes] += signs * rng.uniform(*_OUTLIER_SIZE, size=slips.size)
    return noise


def _damage_share(
    n_samples: int, damage_onset: int | None, profile: np.ndarray = _DAMAGE_PROFILE
) -> np.ndarray:
    """Share of the final damage loss at each observation (0 before the onset)."""
    share = np.zeros(n_samples)
    if damage_onset is None:
        return share
    n_damaged = n_samples - damage_onset
    test = np.arange(n_damaged) * profile.size // n_damaged
    share[damage_onset:] = profile[test]
    return share


def _check_damage_profile(profile) -> np.ndarray:
    """Cumulative shares of the final loss, non-decreasing in (0, 1], ending at 1."""
    if profile is None:
        return _DAMAGE_PROFILE
    values = np.asarray(profile, dtype=float)
    if (
        values.ndim != 1
        or values.size == 0
        or not np.all(np.isfinite(values))
        or values[0] <= 0
        or np.any(np.diff(values) < 0)
        or values[-1] != 1.0
    ):
        raise ValueError(
            "damage_profile must be a non-empty 1-d sequence of cumulative shares "
            "of the final loss, positive, non-decreasing and ending at 1.0, got "
            f"{profile!r}."
        )
    return values


def _check_spell_length(length) -> tuple[int, int]:
    """``(shortest, longest + 1)`` observations of a short cold spell, checked."""
    try:
        low, high = (check_int(v, "cold_spell_length", minimum=2) for v in length)
    except (TypeError, ValueError):
        low = high = None
    if low is None or high <= low:
        raise ValueError(
            "cold_spell_length must be two integers (shortest, longest + 1) "
            f"with 2 <= shortest < longest + 1, got {length!r}."
        )
    return low, high


def _check_modes(value, default: np.ndarray, name: str, positive: bool) -> np.ndarray:
    """One finite value per mode (positive, or non-negative), or the default."""
    if value is None:
        return default
    try:
        values = np.array(value, dtype=float)
    except (TypeError, ValueError):
        values = None
    if (
        values is None
        or values.shape != (_N_MODES,)
        or not np.all(np.isfinite(values))
        or np.any(values <= 0 if positive else values < 0)
    ):
        sign = "positive" if positive else "non-negative"
        raise ValueError(
            f"{name} must be {_N_MODES} finite {sign} numbers, one per mode, "
            f"got {value!r}."
        )
    return values


def make_z24_like(
    n_samples: int = Z24_N_SAMPLES,
    *,
    damage_onset: int | None = Z24_DAMAGE_ONSET,
    damage_scale: float = 1.0,
    damage_profile=None,
    n_cold_spells: int = _N_COLD_SPELLS,
    cold_spell_length: tuple[int, int] = _COLD_SPELL_LENGTH,
    frequency_scale=1.0,
    environment_scale: float = 1.0,
    noise_scale: float = 1.0,
    damage_loss=None,
    random_state=None,
    return_temperature: bool = False,
) -> tuple[np.ndarray, ...]:
    """Generate four natural frequencies with the character of the Z24 bridge.

    A stand-in for the Z24 benchmark (which cannot be shipped) with its
    difficulties: four correlated natural frequencies near 4, 5, 10 and 11 Hz
    driven by a latent deck temperature that runs from late autumn through a
    frosty winter to a hot summer, with a daily cycle; a long cold period and
    a few short cold spells in which frost stiffens the deck and every
    frequency jumps up; identification noise with heavy tails and occasional
    slips of one mode; and progressive damage, only at the end of the record,
    whose first stages hide in the summer's spread. The classes overlap, are
    not Gaussian and are strongly imbalanced.

    Parameters
    ----------
    n_samples : int, default=3932
        Number of observations, as in the Z24 record.
    damage_onset : int or None, default=3476
        Index of the first damaged observation (the default is the paper's:
        the last 12 % of the record). Must leave at least two observations
        after it. ``None`` generates a record in which the damage never
        comes. The seasons keep their place in the record whatever the
        onset: a later onset (e.g. ``n_samples - 150``) is damage that comes
        late in the summer.
    damage_scale : float, default=1.0
        Factor on the final loss of every mode (7.5 %, 3 %, 5.5 % and 4 % of
        the first four frequencies): below 1, damage that hides more in the
        seasons' spread.
    damage_profile : sequence of float, default=None
        Cumulative share of the final loss after each damage test, the tests
        of equal length: positive, non-decreasing, ending at 1. ``None`` is
        Z24's nine tests, ``(0.12, 0.3, 0.5, 0.62, 0.72, 0.8, 0.87, 0.94,
        1.0)``, whose first stage hides in the summer's spread; a profile
        that starts high is damage that comes at once.
    n_cold_spells : int, default=3
        Short cold spells besides the long cold period, placed at random
        before the late summer (they may overlap each other); each deepens
        the frost by 8 to 11 degC at its middle.
    cold_spell_length : tuple of int, default=(15, 45)
        ``(shortest, longest + 1)`` observations of a cold spell (12
        observations a day).
    frequency_scale : float or array-like of shape (4,), default=1.0
        Factor (one, or one per mode) on Z24's natural frequencies at the
        reference temperature of 10 degC, ``(3.95, 5.05, 9.85, 10.95)`` Hz:
        another structure of a fleet has others.
    environment_scale : float, default=1.0
        Factor on the temperature effects (the softening with warmth and the
        frost stiffening): a structure more (above 1) or less sensitive to
        its environment than Z24.
    noise_scale : float, default=1.0
        Factor on the identification noise (its scatter and its slips).
    damage_loss : array-like of shape (4,), default=None
        Final relative loss of each mode (before ``damage_scale``); ``None``
        is Z24's ``(0.075, 0.03, 0.055, 0.04)``. Damage elsewhere on a
        structure changes other modes most.
    random_state : int, RandomState instance or None, default=None
        Seed of the generator; pass an int for reproducible output.
    return_temperature : bool, default=False
        Also return the latent deck temperature, from which the cold class is
        defined.

    Returns
    -------
    X : ndarray of shape (n_samples, 4)
        Natural frequencies (Hz) of the first four modes, in temporal order.
    y : ndarray of int of shape (n_samples,)
        Classes as in the paper: 1 normal, 2 cold (pre-damage observations
        with a deck temperature below 0 degC), 3 incipient damage (the first
        half of the post-damage record), 4 advanced damage (the second half).
    actions : ndarray of int of shape (n_samples,)
        All zeros ("do nothing"): the bridge was never repaired during the
        monitoring campaign. Returned for symmetry with
        :func:`make_degradation_stream`.
    temperature : ndarray of shape (n_samples,)
        Deck temperature (degC); only with ``return_temperature=True``.

    See Also
    --------
    load_z24 : Read and label a copy of the real Z24 data.
    skrbal.z24_decision_process : The matching decision process.

    Notes
    -----
    A relative frequency change is the sum of a linear softening with
    warmth, a smooth frost stiffening (a softplus of the frost depth, so
    near 0 degC classes 1 and 2 overlap), a damage loss rising over nine
    tests (most of it in the first, the pier settlement), and
    identification noise: correlated across modes, Student-t tails,
    right-skewed, with 1.5 % of the observations carrying a slip of 2-6 %
    on one mode. Damaged observations fall in the late summer, with no
    frost; the warmest normal days and the first damage tests overlap.
    Magnitudes follow Peeters and De Roeck (2001): about -0.15 % per degC
    above freezing, +1 % per degC of frost on the first mode, a few percent
    of loss at the end of the damage tests.

    With the defaults, about 80 % of the observations are normal, 8-12 %
    cold and 6 % in each damage class. The cold class is defined from the
    latent temperature (below 0 degC), as :func:`load_z24`'s temperature rule
    defines it on a real record; its frequency rule (first frequency above
    4.1 Hz) recovers it for most observations. On the ``'z24'`` case study
    the unconstrained EVPI rule with a Bayesian GMM needs a few tens of
    inspections per run, as on the real record (the paper's Figure 24;
    ``benchmarks/bench_budget.py`` measures it).

    References
    ----------
    .. [1] B. Peeters and G. De Roeck, "One-year monitoring of the Z24-Bridge:
       environmental effects versus damage events", Earthquake Engineering
       and Structural Dynamics 30(2), 149-171, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.datasets import make_z24_like
    >>> X, y, actions = make_z24_like(random_state=0)
    >>> X.shape
    (3932, 4)
    >>> np.bincount(y)[1:].tolist()  # normal, cold, incipient, advanced
    [2987, 489, 228, 228]
    >>> bool(X[y == 2, 0].mean() > X[y == 1, 0].mean() > X[y == 4, 0].mean())
    True
    >>> int(actions.sum())
    0

    A record in which the damage never comes:

    >>> _, y, _ = make_z24_like(damage_onset=None, random_state=0)
    >>> sorted(np.unique(y).tolist())
    [1, 2]

    A harder record: frost in twelve spells of two to eight days, and damage
    that comes at once:

    >>> X, y, _ = make_z24_like(
    ...     n_cold_spells=12, cold_spell_length=(24, 96), damage_scale=1.25,
    ...     damage_profile=[0.8, 0.9, 1.0], random_state=0)
    >>> int((y == 2).sum()) > 489
    True
    """
    n_samples = check_int(n_samples, "n_samples", minimum=3)
    if damage_onset is not None:
        damage_onset = check_damage_onset(damage_onset, n_samples)
    damage_scale = check_positive_real(damage_scale, "damage_scale")
    profile = _check_damage_profile(damage_profile)
    n_cold_spells = check_int(n_cold_spells, "n_cold_spells", minimum=0)
    spell_length = _check_spell_length(cold_spell_length)
    reference = _F_REF * _check_modes(
        np.broadcast_to(frequency_scale, _N_MODES)
        if np.ndim(frequency_scale) == 0
        else frequency_scale,
        np.ones(_N_MODES),
        "frequency_scale",
        positive=True,
    )
    loss = _check_modes(damage_loss, _DAMAGE_LOSS, "damage_loss", positive=False)
    environment_scale = check_positive_real(environment_scale, "environment_scale")
    noise_scale = check_positive_real(noise_scale, "noise_scale")
    rng = check_random_state(random_state)

    season_end = Z24_DAMAGE_ONSET * n_samples // Z24_N_SAMPLES
    temperature = _temperature(rng, n_samples, season_end, n_cold_spells, spell_length)
    frost_depth = np.logaddexp(0.0, -temperature)  # softplus: smooth max(0, -T)
    warmth = np.maximum(temperature, 0.0) - 10.0
    relative = (
        1.0
        # Term by term as before the scales existed: the defaults give the
        # same record bit for bit.
        + environment_scale * warmth[:, None] * _WARM_SLOPE
        + environment_scale * frost_depth[:, None] * _FROST_GAIN
        - _damage_share(n_samples, damage_onset, profile)[:, None]
        * (damage_scale * loss)
        + noise_scale * _identification_noise(rng, n_samples)
    )
    X = reference * relative
    onset = n_samples if damage_onset is None else damage_onset
    cold = (temperature < 0.0) & (np.arange(n_samples) < onset)
    y = np.where(cold, 2, 1)
    if damage_onset is not None:
        y = z24_classes(n_samples, damage_onset, cold)
    actions = np.zeros(n_samples, dtype=np.int64)
    if return_temperature:
        return X, y, actions, temperature
    return X, y, actions


# ---------------------------------------------------------------------- #
# reading a copy of the real record
# ---------------------------------------------------------------------- #
def _csv_table(path: Path) -> tuple[np.ndarray, list[str] | None]:
    """The numbers of a CSV file and its header, if its first line is one."""
    text = csv_text(path, "load_z24")
    first_line = text.split("\n", 1)[0]
    try:
        [float(field) for field in first_line.split(",")]
        header = None
    except ValueError:
        header = [field.strip().strip('"') for field in first_line.split(",")]
    try:
        table = np.loadtxt(
            io.StringIO(text), delimiter=",", skiprows=int(header is not None), ndmin=2
        )
    except ValueError as exc:
        raise ValueError(
            f"{path} is not a CSV of numbers (an optional header line, then 4 "
            "comma-separated numeric columns, plus a column headed "
            f"'temperature' if you have one): {exc}"
        ) from exc
    return table, header


def _csv_record(path: Path, temperature_key: str | None) -> Bunch:
    table, header = _csv_table(path)
    if header is None:
        if temperature_key is not None:
            raise ValueError(
                f"{path} has no header line, so it has no column "
                f"{temperature_key!r} (temperature_key=)."
            )
        return Bunch(raw=table, where="its columns", temperature=None)
    wanted = (temperature_key,) if temperature_key is not None else TEMPERATURE_NAMES
    matches = [i for i, name in enumerate(header) if name.lower() in wanted]
    if temperature_key is not None and not matches:
        raise ValueError(
            f"{path} has no column {temperature_key!r} (temperature_key=); its "
            f"header is {header}."
        )
    if len(matches) > 1:
        raise ValueError(
            f"{path} has several temperature columns, "
            f"{[header[i] for i in matches]}; pass temperature_key= with one."
        )
    if not matches:
        return Bunch(raw=table, where="its columns", temperature=None)
    column = matches[0]
    frequencies = [name for i, name in enumerate(header) if i != column]
    return Bunch(
        raw=np.delete(table, column, axis=1),
        where=f"columns {frequencies}",
        temperature=(table[:, column], f"column {header[column]!r}"),
    )


def _find_frequencies(contents: dict, path: Path) -> tuple[object, str]:
    """The one array of shape (n_samples, 4) anywhere in a ``.mat`` file."""
    candidates = find_arrays(
        contents, lambda _, a: a.ndim == 2 and a.shape[1] == _N_MODES < a.shape[0]
    )
    if len(candidates) == 1:
        key, value = candidates[0]
        return value, key
    if len(candidates) > 1:
        if "data" in dict(candidates):  # the conventional name wins
            return contents["data"], "data"
        found = ", ".join(f"{key} {a.dtype} {a.shape}" for key, a in candidates)
        raise ValueError(
            f"{path} holds several numeric arrays of 4 columns ({found}); pass "
            "key= with the key path of the natural frequencies, e.g. "
            f"key={candidates[0][0]!r}."
        )
    if "data" in contents:  # checked as it is: the error says what is wrong
        return contents["data"], "data"
    transposed = find_arrays(
        contents, lambda _, a: a.ndim == 2 and a.shape[0] == _N_MODES < a.shape[1]
    )
    hint = (
        f" {transposed[0][0]} has shape {transposed[0][1].shape}: it looks "
        "transposed; store one observation per row."
        if transposed
        else ""
    )
    raise ValueError(
        f"{path} holds no numeric array of shape (n_samples, 4), the first four "
        f"natural frequencies of each observation. It holds: "
        f"{describe_mat(contents)}.{hint} Pass key= with the key path of the "
        "frequencies, struct fields joined by dots (e.g. 'databasez24.data')."
    )


def _mat_record(path: Path, key: str | None, temperature_key: str | None) -> Bunch:
    contents = read_mat(path)
    if key is None:
        raw, where = _find_frequencies(contents, path)
    else:
        raw, where = mat_value(contents, key, path), key
    if temperature_key is not None:
        temperature = (mat_value(contents, temperature_key, path), temperature_key)
    else:
        named = find_arrays(
            contents,
            lambda key, a: (
                key.rsplit(".", 1)[-1].lower() in TEMPERATURE_NAMES and a.ndim == 1
            ),
        )
        if len(named) > 1:
            raise ValueError(
                f"{path} holds several temperature arrays "
                f"({', '.join(f'{k} {a.shape}' for k, a in named)}); pass "
                "temperature_key= with one."
            )
        temperature = (named[0][1], named[0][0]) if named else None
    return Bunch(raw=raw, where=where, temperature=temperature)


def _checked_frequencies(raw, path: Path, where: str) -> np.ndarray:
    try:
        X = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the data in {path} ({where}) are not numeric.") from exc
    if X.ndim != 2 or X.shape[1] != _N_MODES:
        hint = (
            " It looks transposed: store one observation per row."
            if X.ndim == 2 and X.shape[0] == _N_MODES
            else ""
        )
        raise ValueError(
            f"the data in {path} ({where}) have shape {X.shape}; expected "
            "(n_samples, 4), the first four natural frequencies of each "
            f"observation.{hint}"
        )
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"the data in {path} ({where}) have a missing or non-finite value at "
            f"row {row}, column {column} ({X[row, column]})."
        )
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if constant.size and X.shape[0] > 1:
        column = int(constant[0])
        raise ValueError(
            f"the data in {path} ({where}) have column {column} (counted from 0) "
            f"constant, {X[0, column]} in every row: a natural frequency varies "
            "with temperature and damage, so this is not a record of one (a "
            "stuck channel, or a column of another quantity)."
        )
    return X


def _checked_temperature(raw, path: Path, where: str, n_samples: int) -> np.ndarray:
    try:
        temperature = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"the temperatures in {path} ({where}) are not numeric."
        ) from exc
    if temperature.shape != (n_samples,):
        raise ValueError(
            f"the temperatures in {path} ({where}) have shape {temperature.shape}; "
            f"expected ({n_samples},), one per observation."
        )
    bad = np.flatnonzero(~np.isfinite(temperature))
    if bad.size:
        raise ValueError(
            f"the temperatures in {path} ({where}) have a missing or non-finite "
            f"value at row {int(bad[0])} ({temperature[bad[0]]}); fill the gap or "
            "use cold_rule='frequency'."
        )
    if temperature.min() > 150.0:
        raise ValueError(
            f"the temperatures in {path} ({where}) are all above 150, from "
            f"{temperature.min():g} to {temperature.max():g}: they look like "
            "kelvin. The cold rule needs degrees Celsius."
        )
    return temperature


def read_z24(path, *, damage_onset, cold_rule, key=None, temperature_key=None) -> Bunch:
    """Read and label a Z24 file: ``X``, ``y``, ``actions`` and ``protocol``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Z24 data file not found: {path}. The data are not shipped with "
            "skrbal; point load_z24 at your own copy."
        )
    suffix = path.suffix.lower()
    if suffix in (".mat", ".csv") and path.stat().st_size == 0:
        raise ValueError(f"{path} is empty (0 bytes): it holds no Z24 record.")
    if suffix == ".mat":
        record = _mat_record(path, key, temperature_key)
    elif suffix == ".csv":
        record = _csv_record(path, temperature_key)
    else:
        raise ValueError(
            f"cannot read {path}: expected a .mat or .csv file, got {suffix!r}."
        )
    X = _checked_frequencies(record.raw, path, record.where)
    temperature = record.temperature
    if not (isinstance(cold_rule, str) and cold_rule in ("auto", "temperature")):
        temperature = None  # another rule: the temperatures are not used
    if temperature is not None:
        values, where = temperature
        temperature = (_checked_temperature(values, path, where, len(X)), where)
    y, protocol = label_z24(X, damage_onset, cold_rule, temperature, str(path))
    return Bunch(
        X=X,
        y=y,
        actions=np.zeros(X.shape[0], dtype=np.int64),
        protocol=f"frequencies from {record.where}; {protocol}",
    )


def load_z24(
    path,
    *,
    damage_onset: int = Z24_DAMAGE_ONSET,
    cold_rule: str | float | Callable[[np.ndarray], np.ndarray] = "auto",
    key: str | None = None,
    temperature_key: str | None = None,
    return_protocol: bool = False,
) -> tuple:
    """Load a copy of the Z24 bridge natural frequencies and label four classes.

    The Z24 data cannot be distributed with skrbal; this reads the widely
    circulated file of the first four natural frequencies (3932 observations),
    as a plain array or inside a MATLAB struct, and applies the classes of the
    paper's Z24 case study.

    Parameters
    ----------
    path : str or path-like
        A MATLAB ``.mat`` file (format v7 or older) or a ``.csv`` file. One
        observation per row, in temporal order. In a ``.mat`` file the
        frequencies are an ``(n_samples, 4)`` numeric array, a variable or a
        field of a struct (e.g. ``databasez24.data``), found by ``key`` or by
        searching the file. A CSV holds 4 comma-separated numeric columns with
        an optional header line; a column headed ``temperature`` (or
        ``temp``) is read as the temperatures, not as a frequency.
    damage_onset : int, default=3476
        Index (counted from 0) of the first observation after damage was
        introduced. 3476 is the paper's number; the annotation of commonly
        circulated copies gives 3462. Choose the one your copy follows.
    cold_rule : {'auto', 'frequency', 'temperature'}, float or callable, \
            default='auto'
        Which pre-damage observations form the cold class.

        - ``'temperature'``: temperature below 0 degC; needs temperatures in
          the file (a variable, struct field or CSV column named
          ``temperature``, ``temperatures`` or ``temp``, or ``temperature_key``).
        - ``'frequency'``: first natural frequency above 4.1 Hz.
        - ``'auto'``: the temperature rule when the file holds temperatures,
          else the frequency rule.
        - a float: a threshold in Hz on the first natural frequency.
        - a callable: receives ``X`` and returns a boolean mask of shape
          ``(n_samples,)``.

        Post-damage observations are never cold, whatever the rule says.
    key : str, default=None
        Key path of the frequencies in a ``.mat`` file: a variable name, or
        struct fields joined by dots (``'databasez24.data'``); elements of a
        struct array are indexed as ``'runs[0].data'``. ``None`` searches the
        file for the one numeric array of shape ``(n, 4)`` (a variable named
        ``data`` wins a tie). Ignored for CSV.
    temperature_key : str, default=None
        Key path (``.mat``) or column name (CSV) of the temperatures (degC),
        when they are not under one of the names above.
    return_protocol : bool, default=False
        Also return the labelling protocol in words: where the frequencies
        were found, the damage onset and the cold rule applied. A study
        records it with its results.

    Returns
    -------
    X : ndarray of shape (n_samples, 4)
        Natural frequencies (Hz).
    y : ndarray of int of shape (n_samples,)
        1 normal, 2 cold, 3 incipient damage (the first half of the
        post-damage record; it gets the extra observation when the length is
        odd), 4 advanced damage (the second half).
    actions : ndarray of int of shape (n_samples,)
        All zeros: the bridge was never repaired during the campaign.
    protocol : str
        The labelling protocol; only with ``return_protocol=True``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is empty or unreadable (a corrupt ``.mat``, a CSV not in
        UTF-8 or ASCII), the file type is not ``.mat`` or ``.csv``, no array
        of the frequencies is found (the message lists every variable and
        struct field with its shape and dtype) or several are, the data are
        not numeric, not of shape ``(n, 4)``, contain NaN or infinite values
        or a constant column, the temperature rule is asked for without
        temperatures, or ``damage_onset`` leaves fewer than two damaged
        observations. The message names the file (and the line, column or
        key path at fault).

    See Also
    --------
    make_z24_like : A synthetic stand-in with the same character.
    skrbal.z24_decision_process : The matching decision process.
    skrbal.experiments.get_case_study : The Z24 case study on such a file.

    Notes
    -----
    The paper puts the damage "from observation 3476 onwards" and describes
    class 2 as the cold-temperature condition, with the deck stiffened and
    every frequency raised, "particularly noticeable between observations
    1200 and 1500"; it does not state the rule that assigned the class. The
    temperature rule follows that definition; the frequency rule is a
    heuristic for records without temperatures: the first frequency sits
    near 3.9-4.0 Hz in normal conditions and rises above about 4.1 Hz only
    when the deck is frozen.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> import scipy.io
    >>> from skrbal.datasets import load_z24, make_z24_like
    >>> X, _, _ = make_z24_like(random_state=0)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "z24.csv"
    ...     np.savetxt(path, X, delimiter=",", header="f1,f2,f3,f4", comments="")
    ...     X_loaded, y, actions = load_z24(path)
    >>> X_loaded.shape
    (3932, 4)
    >>> np.unique(y).tolist()
    [1, 2, 3, 4]

    The frequencies inside a MATLAB struct, with the circulated onset:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "z24.mat"
    ...     scipy.io.savemat(path, {"databasez24": {"data": X, "info": "Z24"}})
    ...     _, y, _ = load_z24(path, damage_onset=3462)
    >>> int((y >= 3).sum())
    470

    The protocol, as a study records it:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder) / "z24.csv"
    ...     np.savetxt(path, X, delimiter=",")
    ...     *_, protocol = load_z24(path, cold_rule="frequency", return_protocol=True)
    >>> print(protocol)
    frequencies from ...; damage from observation 3476 (counted from 0) of 3932;
    classes 3 and 4 are the first 228 and the last 228 damaged observations; class 2
    (cold) the pre-damage observations with first natural frequency above 4.1 Hz;
    class 1 the other pre-damage ones
    """
    record = read_z24(
        path,
        damage_onset=damage_onset,
        cold_rule=cold_rule,
        key=key,
        temperature_key=temperature_key,
    )
    if return_protocol:
        return record.X, record.y, record.actions, record.protocol
    return record.X, record.y, record.actions
