"""The labelling protocol of the paper's Z24 case study.

Shared by the Z24-like generator and the loader (:mod:`skrbal.datasets`) and
the Z24 case study (:mod:`skrbal.experiments`), which labels the generator's
records with a chosen cold rule and records the protocol in words.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from skrbal._validation import check_int

Z24_N_SAMPLES = 3932
# The paper's onset ("from observation 3476 onwards"), the default; the
# annotation that comes with commonly circulated copies of the data says 3462.
Z24_DAMAGE_ONSET = 3476
Z24_DAMAGE_ONSET_CIRCULATED = 3462
# Pre-damage observations whose first natural frequency exceeds this are cold.
Z24_COLD_F1_THRESHOLD = 4.1
Z24_COLD_RULES = ("auto", "frequency", "temperature")
# Names under which a deck or air temperature (degC) is recognised in a file.
TEMPERATURE_NAMES = ("temperature", "temperatures", "temp")


def check_damage_onset(damage_onset, n_samples: int) -> int:
    damage_onset = check_int(damage_onset, "damage_onset", minimum=1)
    if damage_onset > n_samples - 2:
        raise ValueError(
            f"damage_onset={damage_onset} leaves fewer than 2 post-damage "
            f"observations of {n_samples}: the incipient and advanced damage "
            "classes need one each."
        )
    return damage_onset


def z24_classes(n_samples: int, damage_onset: int, cold) -> np.ndarray:
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


def resolve_cold_rule(cold_rule, temperature_where, source: str) -> tuple:
    """The rule to apply (``'temperature'``, a threshold or a callable), in words.

    ``temperature_where`` says where the temperatures come from, or is
    ``None`` when there are none; ``source`` names the record in errors.
    """
    if callable(cold_rule):
        name = getattr(cold_rule, "__name__", type(cold_rule).__name__)
        return cold_rule, f"flagged by the callable {name}"
    threshold = Z24_COLD_F1_THRESHOLD
    if isinstance(cold_rule, str) and cold_rule in Z24_COLD_RULES:
        rule = cold_rule
        if rule == "auto":
            rule = "frequency" if temperature_where is None else "temperature"
        if rule == "temperature":
            if temperature_where is None:
                raise ValueError(
                    f"cold_rule='temperature' needs the temperatures, and {source} "
                    "holds none (a variable, struct field or CSV column named one "
                    f"of {list(TEMPERATURE_NAMES)}); pass temperature_key= "
                    "(--temperature-key) or use cold_rule='frequency' "
                    "(--cold-rule frequency)."
                )
            return "temperature", f"temperature ({temperature_where}) below 0 degC"
    elif isinstance(cold_rule, Real) and not isinstance(cold_rule, bool):
        threshold = float(cold_rule)
    else:
        raise ValueError(
            "cold_rule must be a threshold on the first natural frequency (Hz), "
            f"one of {list(Z24_COLD_RULES)} or a callable X -> boolean mask, got "
            f"{cold_rule!r}."
        )
    return threshold, f"first natural frequency above {threshold:g} Hz"


def z24_protocol(damage_onset: int, n_samples: int, rule: str) -> str:
    """The labelling protocol of a Z24 record in one sentence."""
    n_damaged = n_samples - damage_onset
    return (
        f"damage from observation {damage_onset} (counted from 0) of "
        f"{n_samples}; classes 3 and 4 are the first {(n_damaged + 1) // 2} and "
        f"the last {n_damaged // 2} damaged observations; class 2 (cold) the "
        f"pre-damage observations with {rule}; class 1 the other pre-damage ones"
    )


def label_z24(X, damage_onset, cold_rule, temperature, source: str) -> tuple:
    """Classes 1..4 of a Z24 record and its labelling protocol in words.

    ``temperature`` is ``None`` or ``(values, where)``; ``source`` names the
    record in error messages.
    """
    n_samples = X.shape[0]
    damage_onset = check_damage_onset(damage_onset, n_samples)
    where = None if temperature is None else temperature[1]
    rule, text = resolve_cold_rule(cold_rule, where, source)
    if callable(rule):
        cold = np.asarray(rule(X))
        if cold.shape != (n_samples,) or cold.dtype != bool:
            raise ValueError(
                "cold_rule(X) must return a boolean array of shape "
                f"({n_samples},), got dtype {cold.dtype} and shape {cold.shape}."
            )
    elif isinstance(rule, str):
        cold = temperature[0] < 0.0
    else:
        cold = X[:, 0] > rule
    cold = cold & (np.arange(n_samples) < damage_onset)
    y = z24_classes(n_samples, damage_onset, cold)
    return y, z24_protocol(damage_onset, n_samples, text)
