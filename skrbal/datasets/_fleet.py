"""A fleet of similar structures: one Z24-like record per structure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils import Bunch, check_random_state

from skrbal._validation import check_int
from skrbal._z24_labels import Z24_N_SAMPLES
from skrbal.datasets._z24 import make_z24_like

__all__ = ["make_fleet"]

# The hardships of the 'z24-hard' case study (issue 26), applied to every
# structure: many cold spells of two to eight days, damage larger than Z24's
# that comes at once.
_HARD = {
    "damage_scale": 1.25,
    "damage_profile": (0.8, 0.82, 0.85, 0.87, 0.9, 0.92, 0.95, 0.97, 1.0),
    "n_cold_spells": 12,
    "cold_spell_length": (24, 96),
}
# Damage elsewhere on a structure: the weakly excited modes 2 and 4 lose most,
# the others little (Z24's damage lowers modes 1 and 3 most).
_UNLIKE_LOSS = np.array([0.015, 0.075, 0.01, 0.065])
# Where the damage may start, as shares of the record: after the winter's
# first half, never in the last tenth (so each damage state has observations).
_ONSET = (0.45, 0.9)
# A repair comes after this share of the rest of the record.
_REPAIR_AFTER = (0.3, 0.7)
FEATURE_NAMES = ("f1", "f2", "f3", "f4")


def _check_share(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}.")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}.")
    return float(value)


def _check_spread(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}.")
    if not 0.0 <= float(value) < np.inf:
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}.")
    return float(value)


def _labels(temperature, onset, stop) -> np.ndarray:
    """Z24's classes of one record whose damage runs from ``onset`` to ``stop``.

    1 normal, 2 cold (undamaged, deck below 0 degC), 3 the first half of the
    damaged observations, 4 the second half (the incipient half gets the odd
    one).
    """
    y = np.where(temperature < 0.0, 2, 1)
    if onset is not None:
        advanced_from = onset + (stop - onset + 1) // 2
        y[onset:advanced_from] = 3
        y[advanced_from:stop] = 4
    return y


def _structure(rng, n_samples, onset, repair, unlike, spreads, hard) -> Bunch:
    """The record and the properties of one structure."""
    frequency_spread, environment_spread, noise_spread = spreads
    # One size factor for the whole structure (a longer span has lower
    # frequencies) and a little per-mode variation.
    frequency_scale = np.exp(
        rng.normal(0.0, frequency_spread) + rng.normal(0.0, frequency_spread / 5, 4)
    )
    environment_scale = float(np.exp(rng.normal(0.0, environment_spread)))
    noise_scale = float(np.exp(rng.normal(0.0, noise_spread)))
    loss = _UNLIKE_LOSS if unlike else None
    seed = int(rng.randint(np.iinfo(np.int32).max))
    params = dict(
        frequency_scale=frequency_scale,
        environment_scale=environment_scale,
        noise_scale=noise_scale,
        damage_loss=loss,
        random_state=seed,
        return_temperature=True,
        **(_HARD if hard else {}),
    )
    # The same seed draws the same weather and noise whatever the damage
    # (the damage draws nothing), so the record after a repair is the
    # undamaged record's.
    X, _, _, temperature = make_z24_like(n_samples, damage_onset=None, **params)
    actions = np.zeros(n_samples, dtype=np.int64)
    stop = n_samples if repair is None else repair + 1
    if onset is not None:
        damaged, _, _, _ = make_z24_like(n_samples, damage_onset=onset, **params)
        X[onset:stop] = damaged[onset:stop]
        if repair is not None:
            actions[repair] = 1
    return Bunch(
        X=X,
        y=_labels(temperature, onset, stop),
        actions=actions,
        temperature=temperature,
        onset=onset,
        repair=repair,
        unlike=bool(unlike),
        frequency_scale=frequency_scale,
        environment_scale=environment_scale,
        noise_scale=noise_scale,
        seed=seed,
    )


def _schedule(rng, n_structures, n_samples, damaged_share, unlike_share, repair_share):
    """Onset, repair and damage pattern of every structure."""
    n_damaged = round(damaged_share * n_structures)
    damaged = np.zeros(n_structures, dtype=bool)
    damaged[rng.permutation(n_structures)[:n_damaged]] = True
    n_unlike = min(round(unlike_share * n_structures), n_damaged)
    unlike = np.zeros(n_structures, dtype=bool)
    unlike[rng.permutation(np.flatnonzero(damaged))[:n_unlike]] = True
    onsets, repairs = [], []
    for is_damaged in damaged:
        onset = repair = None
        if is_damaged:
            onset = int(rng.uniform(*_ONSET) * n_samples)
            if rng.uniform() < repair_share:
                rest = n_samples - onset
                repair = onset + max(1, int(rng.uniform(*_REPAIR_AFTER) * rest))
                repair = min(repair, n_samples - 2)
        onsets.append(onset)
        repairs.append(repair)
    return onsets, repairs, unlike


def make_fleet(
    n_structures: int = 30,
    *,
    n_samples: int = Z24_N_SAMPLES,
    damaged_share: float = 0.7,
    unlike_share: float = 0.1,
    repair_share: float = 0.5,
    frequency_spread: float = 0.15,
    environment_spread: float = 0.25,
    noise_spread: float = 0.25,
    hard: bool = True,
    random_state=None,
) -> Bunch:
    """Generate a fleet of similar bridges, each with its own monitoring record.

    Every structure is a Z24-like bridge (:func:`make_z24_like`: four natural
    frequencies, a frosty winter, identification noise with heavy tails) with
    its own natural frequencies, sensitivity to temperature, noise level,
    weather and cold spells. Most structures are damaged at some point (each
    at its own time), some are repaired afterwards, the others stay healthy
    through the record. On a few damaged structures the damage looks
    different (it lowers other modes most), so what the rest of the fleet
    knows about damage misleads there: the test of any model that transfers
    knowledge between structures.

    Parameters
    ----------
    n_structures : int, default=30
        Number of structures.
    n_samples : int, default=3932
        Observations per structure (Z24's record length; 12 a day).
    damaged_share : float, default=0.7
        Share of the structures damaged within the record (rounded to a
        count); the others stay undamaged.
    unlike_share : float, default=0.1
        Share of the structures (rounded, at most the damaged ones) whose
        damage lowers modes 2 and 4 most (relative losses ``0.015, 0.075,
        0.01, 0.065``) instead of modes 1 and 3 (Z24's ``0.075, 0.03, 0.055,
        0.04``).
    repair_share : float, default=0.5
        Probability that a damaged structure is repaired before the record
        ends; after the repair (action 1 at the last damaged observation) it
        is undamaged again.
    frequency_spread : float, default=0.15
        Standard deviation of the log of a structure's frequency factor (one
        per structure, plus a fifth of it per mode) against Z24's.
    environment_spread : float, default=0.25
        Standard deviation of the log of a structure's temperature
        sensitivity factor.
    noise_spread : float, default=0.25
        Standard deviation of the log of a structure's noise factor.
    hard : bool, default=True
        Give every structure the hardships of the ``'z24-hard'`` case study
        (:func:`skrbal.experiments.get_case_study`): twelve more cold spells
        of two to eight days and damage that comes at once, 1.25 times
        Z24's. ``False``: Z24's three cold spells and gradual damage.
    random_state : int, RandomState instance or None, default=None
        Seed of the whole fleet; pass an int for reproducible output.

    Returns
    -------
    fleet : Bunch
        - ``structures``: list of Bunch, one per structure, each with ``X``
          (ndarray of shape ``(n_samples, 4)``, frequencies in Hz), ``y``
          (classes as :func:`make_z24_like`'s: 1 normal, 2 cold, 3 the first
          half of the damaged observations, 4 the second half), ``actions``
          (1 at the repair, else 0), ``temperature``, ``onset`` and
          ``repair`` (observation indices, or ``None``), ``unlike`` (whether
          its damage looks different), ``frequency_scale``,
          ``environment_scale``, ``noise_scale`` (the factors on Z24's,
          see :func:`make_z24_like`) and ``seed`` (of its :func:`make_z24_like` record);
        - ``assets``: the names of the structures (``'S01'``, ...);
        - ``frame``: DataFrame, the fleet campaign table, one row per
          observation with columns ``asset``, ``time`` (seconds since the
          start, one row every 2 hours: skrbal's agents and ``skrbal
          fleet`` read a numeric time as seconds, so a ``--period 1w`` is
          84 rows), ``f1`` to ``f4``, ``action`` and ``label``, as
          :func:`load_fleet_campaign` reads it;
        - ``properties``: DataFrame, one row per structure, its properties.

    See Also
    --------
    make_z24_like : The record of one structure.
    load_fleet_campaign : Read such a table of your own fleet.

    Examples
    --------
    >>> from skrbal.datasets import make_fleet
    >>> fleet = make_fleet(6, n_samples=600, random_state=0)
    >>> len(fleet.structures), fleet.structures[0].X.shape
    (6, (600, 4))
    >>> fleet.frame.columns.tolist()
    ['asset', 'time', 'f1', 'f2', 'f3', 'f4', 'action', 'label']
    >>> fleet.frame["time"].iloc[:3].tolist()  # seconds, 12 rows a day
    [0.0, 7200.0, 14400.0]
    >>> int(fleet.properties["damaged"].sum()), int(fleet.properties["unlike"].sum())
    (4, 1)
    """
    n_structures = check_int(n_structures, "n_structures", minimum=1)
    n_samples = check_int(n_samples, "n_samples", minimum=20)
    damaged_share = _check_share(damaged_share, "damaged_share")
    unlike_share = _check_share(unlike_share, "unlike_share")
    repair_share = _check_share(repair_share, "repair_share")
    spreads = tuple(
        _check_spread(value, name)
        for value, name in (
            (frequency_spread, "frequency_spread"),
            (environment_spread, "environment_spread"),
            (noise_spread, "noise_spread"),
        )
    )
    rng = check_random_state(random_state)
    onsets, repairs, unlike = _schedule(
        rng, n_structures, n_samples, damaged_share, unlike_share, repair_share
    )
    width = len(str(n_structures))
    assets = [f"S{i + 1:0{max(width, 2)}d}" for i in range(n_structures)]
    structures = [
        _structure(rng, n_samples, onset, repair, is_unlike, spreads, bool(hard))
        for onset, repair, is_unlike in zip(onsets, repairs, unlike)
    ]
    for asset, structure in zip(assets, structures):
        structure.asset = asset
    return Bunch(
        structures=structures,
        assets=assets,
        frame=_fleet_frame(assets, structures),
        properties=_properties(assets, structures),
    )


# The campaign table's time step: Z24's 12 observations a day, in seconds
# (the unit in which the agents and the CLI read a numeric time).
SECONDS_PER_ROW = 7200.0


def _fleet_frame(assets, structures) -> pd.DataFrame:
    """The fleet campaign table: every structure's rows, one after another."""
    parts = []
    for asset, structure in zip(assets, structures):
        n = structure.X.shape[0]
        part = pd.DataFrame(structure.X, columns=list(FEATURE_NAMES))
        part.insert(0, "time", SECONDS_PER_ROW * np.arange(n))
        part.insert(0, "asset", asset)
        part["action"] = structure.actions
        part["label"] = structure.y
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _properties(assets, structures) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "asset": assets,
            "damaged": [s.onset is not None for s in structures],
            "onset": pd.array([s.onset for s in structures], dtype="Int64"),
            "repair": pd.array([s.repair for s in structures], dtype="Int64"),
            "unlike": [s.unlike for s in structures],
            "environment_scale": [s.environment_scale for s in structures],
            "noise_scale": [s.noise_scale for s in structures],
            "frequency_scale": [float(s.frequency_scale.mean()) for s in structures],
        }
    )
