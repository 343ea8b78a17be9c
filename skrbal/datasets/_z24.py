"""Z24 bridge natural frequencies: a look-alike generator and a loader."""

from __future__ import annotations

import codecs
import io
from collections.abc import Callable
from numbers import Real
from pathlib import Path

import numpy as np
import scipy.io
from scipy.io.matlab import MatReadError
from scipy.signal import lfilter
from scipy.signal.windows import tukey
from sklearn.utils import check_random_state

from skrbal.datasets._validation import check_int

__all__ = ["load_z24", "make_z24_like"]

Z24_N_SAMPLES = 3932
Z24_DAMAGE_ONSET = 3476
# Pre-damage observations whose first natural frequency exceeds this are cold.
Z24_COLD_F1_THRESHOLD = 4.1
_N_MODES = 4

# Look-alike model. Natural frequencies (Hz) at the reference temperature of
# 10 degC; relative change per degC above freezing (the deck softens slightly
# as it warms); relative rise per degC of frost (the asphalt layer stiffens
# sharply below 0 degC, the cause of Z24's cold-period jump); relative loss at
# the end of the damage tests (the modes are not equally sensitive).
_F_REF = np.array([3.95, 5.05, 9.85, 10.95])
_WARM_SLOPE = np.array([-0.0015, -0.0012, -0.0018, -0.0010])
_FROST_GAIN = np.array([0.012, 0.006, 0.010, 0.008])
_DAMAGE_LOSS = np.array([0.075, 0.030, 0.055, 0.040])
_NOISE_CORRELATION = 0.6
_NOISE_RELATIVE_STD = np.array([0.004, 0.004, 0.003, 0.004])
# Where the long cold period sits, as shares of the pre-damage record: Z24's
# observations 1200 to 1500 of 3476.
_COLD_PERIOD = (1200 / 3476, 1500 / 3476)
_N_COLD_SPELLS = 3
_N_DAMAGE_STAGES = 6


def _check_damage_onset(damage_onset, n_samples: int) -> int:
    damage_onset = check_int(damage_onset, "damage_onset", minimum=1)
    if damage_onset > n_samples - 2:
        raise ValueError(
            f"damage_onset={damage_onset} leaves fewer than 2 post-damage "
            f"observations of {n_samples}: the incipient and advanced damage "
            "classes need one each."
        )
    return damage_onset


def _z24_classes(n_samples: int, damage_onset: int, cold) -> np.ndarray:
    """Classes 1..4 from the cold flags (pre-damage only) and the damage onset.

    The post-damage record is halved; the incipient half gets the extra
    observation when its length is odd.
    """
    y = np.where(cold, 2, 1)
    n_damaged = n_samples - damage_onset
    advanced_from = damage_onset + (n_damaged + 1) // 2
    y[damage_onset:advanced_from] = 3
    y[advanced_from:] = 4
    return y


def _temperature(rng, n_samples: int, damage_onset: int) -> np.ndarray:
    """Deck temperature (degC): season, weather noise and cold spells."""
    position = np.arange(n_samples) / n_samples
    # From late autumn through a winter minimum to summer, as on Z24.
    season = 11.0 - 8.5 * np.cos(
        2 * np.pi * (position - 0.36 * damage_onset / n_samples)
    )
    weather = lfilter([1.0], [1.0, -0.97], rng.normal(scale=0.6, size=n_samples))
    frost = np.zeros(n_samples)
    start, stop = (round(share * damage_onset) for share in _COLD_PERIOD)
    frost[start:stop] = 13.0 * tukey(stop - start, alpha=0.3)
    # A few short spells elsewhere before the damage, away from the long one.
    for _ in range(_N_COLD_SPELLS):
        length = int(rng.randint(15, 45))
        candidates = np.r_[0 : max(start - length, 0), stop : damage_onset - length]
        if candidates.size == 0:
            break
        begin = int(rng.choice(candidates))
        frost[begin : begin + length] += rng.uniform(8.0, 11.0) * tukey(length, 0.5)
    return season + weather - frost


def make_z24_like(
    n_samples: int = Z24_N_SAMPLES,
    *,
    damage_onset: int = Z24_DAMAGE_ONSET,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate four natural frequencies with the character of the Z24 bridge.

    A stand-in for the Z24 benchmark (which cannot be shipped) with its
    difficulties: four correlated natural frequencies near 4, 5, 10 and 11 Hz
    driven by a latent deck temperature; a long cold period and a few short
    cold spells in which frost stiffens the deck and every frequency rises;
    progressive damage from ``damage_onset`` that lowers them; overlapping,
    non-Gaussian classes and a strong class imbalance.

    Parameters
    ----------
    n_samples : int, default=3932
        Number of observations, as in the Z24 record.
    damage_onset : int, default=3476
        Index of the first damaged observation. Must leave at least two
        observations after it.
    random_state : int, RandomState instance or None, default=None
        Seed of the generator; pass an int for reproducible output.

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

    See Also
    --------
    load_z24 : Read and label a copy of the real Z24 data.
    skrbal.z24_decision_process : The matching decision process.

    Notes
    -----
    A relative frequency change is the sum of a mild linear softening with
    warmth, a smooth frost stiffening (a softplus of the frost depth, so
    near 0 degC classes 1 and 2 overlap), a damage loss rising in
    ``6`` stages over the post-damage record, and identification noise that
    is correlated across modes and right-skewed. Damaged observations fall in
    the summer, with no frost, and the first stage overlaps the normal class.
    With the defaults, about 80% of the observations are normal, 8-12% cold
    and 6% in each damage class. The cold class is defined from the latent
    temperature; the default rule of :func:`load_z24` (first frequency above
    4.1 Hz) recovers it for most observations.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.datasets import make_z24_like
    >>> X, y, actions = make_z24_like(random_state=0)
    >>> X.shape
    (3932, 4)
    >>> np.bincount(y)[1:].tolist()  # normal, cold, incipient, advanced
    [3154, 322, 228, 228]
    >>> bool(X[y == 2, 0].mean() > X[y == 1, 0].mean() > X[y == 4, 0].mean())
    True
    >>> int(actions.sum())
    0
    """
    n_samples = check_int(n_samples, "n_samples", minimum=3)
    damage_onset = _check_damage_onset(damage_onset, n_samples)
    rng = check_random_state(random_state)

    temperature = _temperature(rng, n_samples, damage_onset)
    frost_depth = np.logaddexp(0.0, -temperature)  # softplus: smooth max(0, -T)
    warmth = np.maximum(temperature, 0.0) - 10.0

    stage = np.zeros(n_samples)
    n_damaged = n_samples - damage_onset
    progress = (np.arange(n_damaged) + 1) / n_damaged
    stage[damage_onset:] = np.ceil(progress * _N_DAMAGE_STAGES) / _N_DAMAGE_STAGES

    correlation = np.full((_N_MODES, _N_MODES), _NOISE_CORRELATION)
    np.fill_diagonal(correlation, 1.0)
    gaussian = (
        rng.standard_normal((n_samples, _N_MODES)) @ np.linalg.cholesky(correlation).T
    )
    # Mode identification errs upwards more often than downwards: a centred
    # gamma term gives the noise a right skew at unit variance.
    skewed = (rng.gamma(2.0, 1.0, size=(n_samples, _N_MODES)) - 2.0) / np.sqrt(2.0)
    noise = (0.8 * gaussian + 0.6 * skewed) * _NOISE_RELATIVE_STD

    relative = (
        1.0
        + warmth[:, None] * _WARM_SLOPE
        + frost_depth[:, None] * _FROST_GAIN
        - stage[:, None] * _DAMAGE_LOSS
        + noise
    )
    X = _F_REF * relative
    cold = (temperature < 0.0) & (np.arange(n_samples) < damage_onset)
    y = _z24_classes(n_samples, damage_onset, cold)
    return X, y, np.zeros(n_samples, dtype=np.int64)


def _read_mat(path: Path, key: str) -> np.ndarray:
    try:
        contents = scipy.io.loadmat(path)
    except NotImplementedError as exc:
        raise ValueError(
            f"{path} is a MATLAB v7.3 (HDF5) file, which scipy cannot read; "
            "re-save it with save(..., '-v7') or export the frequencies to CSV."
        ) from exc
    except (MatReadError, ValueError, TypeError, OSError) as exc:
        raise ValueError(f"could not read {path} as a MATLAB file: {exc}") from exc
    if key not in contents:
        variables = sorted(name for name in contents if not name.startswith("__"))
        raise ValueError(
            f"{path} has no variable {key!r}; it holds {variables}. Pass the "
            "name of the natural-frequency array as key=."
        )
    return contents[key]


# Byte-order marks of the encodings a spreadsheet may save "Unicode" text in;
# UTF-32 first, as its little-endian mark begins with UTF-16's.
_WIDE_ENCODINGS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _csv_text(path: Path) -> str:
    """The file as text: UTF-8 (with or without a signature) or ASCII."""
    raw = path.read_bytes()
    for mark, encoding in _WIDE_ENCODINGS:
        if raw.startswith(mark):
            raise ValueError(
                f"{path} is encoded in {encoding}; load_z24 reads UTF-8 or ASCII "
                "text. Save the CSV as UTF-8."
            )
    if b"\x00" in raw:
        raise ValueError(
            f"{path} holds NUL bytes, as UTF-16 or UTF-32 text without a "
            "byte-order mark does; load_z24 reads UTF-8 or ASCII. Save the CSV "
            "as UTF-8."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        column = raw.count(b",", line_start, exc.start)
        raise ValueError(
            f"{path} is not UTF-8 text: byte 0x{raw[exc.start]:02x} in line {line}, "
            f"column {column} (counted from 0) is not UTF-8, as in a file saved "
            "in Latin-1 or Windows-1252. Save the CSV as UTF-8."
        ) from None


def _read_csv(path: Path) -> np.ndarray:
    text = _csv_text(path)
    first_line = text.split("\n", 1)[0]
    try:
        [float(field) for field in first_line.split(",")]
        header_lines = 0
    except ValueError:
        header_lines = 1
    try:
        return np.loadtxt(
            io.StringIO(text), delimiter=",", skiprows=header_lines, ndmin=2
        )
    except ValueError as exc:
        raise ValueError(
            f"{path} is not a CSV of numbers (an optional header line, then 4 "
            f"comma-separated numeric columns): {exc}"
        ) from exc


def _checked_frequencies(raw, path: Path) -> np.ndarray:
    try:
        X = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the data in {path} are not numeric.") from exc
    if X.ndim != 2 or X.shape[1] != _N_MODES:
        hint = (
            " It looks transposed: store one observation per row."
            if X.ndim == 2 and X.shape[0] == _N_MODES
            else ""
        )
        raise ValueError(
            f"the data in {path} have shape {X.shape}; expected (n_samples, 4), "
            f"the first four natural frequencies of each observation.{hint}"
        )
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"the data in {path} have a missing or non-finite value at row {row}, "
            f"column {column} ({X[row, column]})."
        )
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if constant.size and X.shape[0] > 1:
        column = int(constant[0])
        raise ValueError(
            f"the data in {path} have column {column} (counted from 0) constant, "
            f"{X[0, column]} in every row: a natural frequency varies with "
            "temperature and damage, so this is not a record of one (a stuck "
            "channel, or a column of another quantity)."
        )
    return X


def _cold_flags(X: np.ndarray, cold_rule) -> np.ndarray:
    if callable(cold_rule):
        cold = np.asarray(cold_rule(X))
        if cold.shape != (X.shape[0],) or cold.dtype != bool:
            raise ValueError(
                "cold_rule(X) must return a boolean array of shape "
                f"({X.shape[0]},), got dtype {cold.dtype} and shape {cold.shape}."
            )
        return cold
    if isinstance(cold_rule, bool) or not isinstance(cold_rule, Real):
        raise ValueError(
            "cold_rule must be a threshold on the first natural frequency (Hz) "
            f"or a callable X -> boolean mask, got {cold_rule!r}."
        )
    return X[:, 0] > cold_rule


def load_z24(
    path,
    *,
    damage_onset: int = Z24_DAMAGE_ONSET,
    cold_rule: float | Callable[[np.ndarray], np.ndarray] = Z24_COLD_F1_THRESHOLD,
    key: str = "data",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Load a copy of the Z24 bridge natural frequencies and label four classes.

    The Z24 data cannot be distributed with skrbal; this reads the widely
    circulated file of the first four natural frequencies (3932 observations)
    and applies the classes of the paper's Z24 case study.

    Parameters
    ----------
    path : str or path-like
        A MATLAB ``.mat`` file (format v7 or older) holding an
        ``(n_samples, 4)`` array under ``key``, or a ``.csv`` file of 4
        comma-separated numeric columns with an optional header line. One
        observation per row, in temporal order.
    damage_onset : int, default=3476
        Index of the first observation after damage was introduced. Published
        descriptions give 3476 or 3462; choose the one your copy follows.
    cold_rule : float or callable, default=4.1
        Which pre-damage observations form the cold class. A float is a
        threshold in Hz: observations whose first natural frequency exceeds it
        are cold. A callable receives ``X`` and returns a boolean mask of shape
        ``(n_samples,)``. Post-damage observations are never cold, whatever the
        rule says.
    key : str, default="data"
        Name of the variable in a ``.mat`` file; ignored for CSV.

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

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is empty or unreadable (a corrupt ``.mat``, a CSV not in
        UTF-8 or ASCII), the file type is not ``.mat`` or ``.csv``, the MATLAB
        variable is missing, the data are not numeric, not of shape
        ``(n, 4)``, contain NaN or infinite values or a constant column, or
        ``damage_onset`` leaves fewer than two damaged observations. The
        message names the file (and the line or column at fault).

    See Also
    --------
    make_z24_like : A synthetic stand-in with the same character.
    skrbal.z24_decision_process : The matching decision process.

    Notes
    -----
    The paper's cold class covers the freezing period (about observations
    1200 to 1500) and shorter spells, when the deck stiffened and every
    frequency rose. The record comes without temperature labels, so the
    default rule is a heuristic: the first frequency sits near 3.9-4.0 Hz in
    normal conditions and rises above about 4.1 Hz only when the deck is
    frozen. Override it (e.g. with a mask from the measured temperatures) when
    a sharper definition is wanted.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
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
    """
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
        raw = _read_mat(path, key)
    elif suffix == ".csv":
        raw = _read_csv(path)
    else:
        raise ValueError(
            f"cannot read {path}: expected a .mat or .csv file, got {suffix!r}."
        )
    X = _checked_frequencies(raw, path)
    damage_onset = _check_damage_onset(damage_onset, X.shape[0])
    cold = _cold_flags(X, cold_rule)
    cold[damage_onset:] = False
    y = _z24_classes(X.shape[0], damage_onset, cold)
    return X, y, np.zeros(X.shape[0], dtype=np.int64)
