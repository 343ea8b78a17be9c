"""The cases of ``bench_unseen.py`` beyond the built-in ones (issue 26).

Ablations of ``'z24-hard'`` (:data:`VARIANTS`), each undoing one of its
hardships, and the cases built as the record of the first-week trial
(:data:`GRADUAL`), with the trial's hand-typed three-state process
(:func:`trial_process`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from skrbal import DecisionProcess
from skrbal.datasets import make_z24_like
from skrbal.experiments import get_case_study


def _z24_variant(random_state, **params):
    return make_z24_like(random_state=random_state, **params)


#: Ablations of ``'z24-hard'``, one of its hardships undone at a time:
#: standardised with the whole record's statistics (which hold the winter
#: and the damage) as the paper's case; Z24's gradual damage profile (its
#: first stage hides in the summer's spread); Z24's three short cold spells.
VARIANTS = {
    "z24-hard-whole": {"standardise_window": None},
    "z24-hard-gradual": {"damage_profile": None},
    "z24-hard-few-spells": {"n_cold_spells": 3, "cold_spell_length": (15, 45)},
}
#: The generator parameters of ``'z24-hard'`` (its ``source`` names them).
Z24_HARD = {
    "damage_scale": 1.25,
    "damage_profile": (0.8, 0.82, 0.85, 0.87, 0.9, 0.92, 0.95, 0.97, 1.0),
    "n_cold_spells": 12,
    "cold_spell_length": (24, 96),
}


def trial_process(classes=(1, 3, 4)) -> DecisionProcess:
    """The three-state process of the first-week trial, typed by hand.

    Healthy, damaged and severe, labelled ``classes`` (by default the Z24
    states 1, 3 and 4: the cold state 2 is healthy); an inspection costs 50,
    a repair 1,500, a step of damage 200 and one of severe damage 5,000;
    doing nothing, damage comes with probability 0.005 a step.
    """
    return DecisionProcess(
        transition=[
            [[0.995, 0.004, 0.001], [0.0, 0.99, 0.01], [0.0, 0.0, 1.0]],
            [[1.0, 0.0, 0.0], [0.98, 0.02, 0.0], [0.98, 0.0, 0.02]],
        ],
        state_utility=[0.0, -200.0, -5000.0],
        action_utility=[0.0, -1500.0],
        inspection_cost=50.0,
        classes=list(classes),
        state_names=["healthy", "damaged", "severe"],
        action_names=["do nothing", "repair"],
    )


def _three_states(random_state, *, make_data):
    """A Z24 record with its cold state (2) labelled healthy (1)."""
    X, y, actions = make_data(random_state)
    return X, np.where(y == 2, 1, y), actions


#: Cases built as the record of the first-week trial (issue 26):
#: :func:`~skrbal.datasets.make_z24_like` with its defaults, whose damage grows
#: over nine tests during the late summer (its first stages inside the
#: summer's softening), in raw Hz as a user has them, every mixture arm with
#: the priors ``skrbal agent init`` gives (``mean_prior='data'``,
#: ``covariance_prior='data'``: the initial labels' moments). The first has
#: the Z24 process of the other cases; ``'z24-gradual-3state'`` the trial's
#: hand-typed process (:func:`trial_process`), whose cheap damage (200 a
#: step against a 1,500 repair) makes early damage barely worth an
#: inspection, so delay due to the costs is separable from delay due to the
#: belief.
GRADUAL = ("z24-gradual", "z24-gradual-3state")


def _gradual_case(name: str, arms):
    paper = get_case_study("z24")
    if paper.source != "make_z24_like(random_state=0)":
        raise RuntimeError(
            f"the 'z24' case is no longer make_z24_like's defaults ({paper.source})."
        )
    data_priors = {"mean_prior": "data", "covariance_prior": "data"}
    three = name == "z24-gradual-3state"
    return replace(
        paper,
        name=name,
        make_process=trial_process if three else paper.make_process,
        make_data=(
            partial(_three_states, make_data=paper.make_data)
            if three
            else paper.make_data
        ),
        standardise=False,
        standardise_window=None,
        description="Z24-like natural frequencies in raw Hz, damage growing "
        "in stages during the late summer"
        + (", the first-week trial's three-state process" if three else ""),
        labelling=paper.labelling
        + ("; states 1 and 2 labelled 1 (healthy)" if three else ""),
        method_params={arm: data_priors for arm in arms},
    )


def case_study(name: str, arms=()):
    """A built-in case study, an ablation of ``'z24-hard'`` or a gradual case.

    ``arms``: the names of the mixture methods a gradual case gives the
    priors ``skrbal agent init`` builds.
    """
    if name in GRADUAL:
        return _gradual_case(name, arms)
    if name not in VARIANTS:
        return get_case_study(name)
    hard = get_case_study("z24-hard")
    arguments = ", ".join(f"{k}={v!r}" for k, v in Z24_HARD.items())
    if hard.source != f"make_z24_like(random_state=0, {arguments})":
        raise RuntimeError(
            f"Z24_HARD no longer matches the 'z24-hard' case ({hard.source}); "
            "update it, or the ablations undo more than one hardship."
        )
    change = dict(VARIANTS[name])
    window = change.pop("standardise_window", hard.standardise_window)
    params = {**Z24_HARD, **change}
    return replace(
        hard,
        name=name,
        make_data=partial(_z24_variant, **params),
        standardise_window=window,
        source="make_z24_like(random_state=0, "
        + ", ".join(f"{k}={v!r}" for k, v in params.items())
        + ")",
    )
