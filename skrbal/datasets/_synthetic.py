"""The synthetic four-state degradation stream of the paper's section 3.1."""

from __future__ import annotations

import numpy as np
from scipy.signal.windows import tukey
from sklearn.utils import check_random_state

from skrbal._validation import check_int, check_positive_real

__all__ = ["make_degradation_stream"]

# Class-conditional moments of the published synthetic data set, rows = class
# 1..4, columns = features.
_MEANS = np.array([[-5.19, -0.01], [-0.66, -0.06], [5.75, -0.11], [19.11, 0.02]])
_VARIANCES = np.array([[0.68, 0.70], [0.71, 0.91], [0.63, 0.55], [0.71, 0.82]])
_N_STATES = 4
# Before the damage onset a cycle goes no further than minor damage: it is
# found and repaired before it grows (the worst state of the calm phase).
_MILD = 2


def _segment_lengths(rng, n_cycles, n_per_cycle, concentration) -> np.ndarray:
    """Lengths of the four class segments of each cycle, shape (n_cycles, 4).

    Each row sums to ``n_per_cycle`` and every entry is at least one, so every
    cycle visits every state.
    """
    shares = rng.dirichlet(np.full(_N_STATES, concentration), size=n_cycles)
    free = n_per_cycle - _N_STATES
    exact = shares * free
    lengths = np.floor(exact).astype(np.int64)
    # Largest-remainder rounding: hand the points lost to flooring to the
    # segments that lost most, so each row sums exactly to ``free``.
    deficit = free - lengths.sum(axis=1)
    order = np.argsort(lengths - exact, axis=1)
    rank = np.argsort(order, axis=1)
    lengths += rank < deficit[:, None]
    return lengths + 1


def _repair_actions(y) -> np.ndarray:
    """Repair actions implied by a degradation sequence.

    ``actions[t] = 1`` (repair) exactly when the structure is damaged at
    ``t`` and undamaged (class 1) at ``t + 1``; otherwise 0. The last entry is
    0: no observation follows it.
    """
    y = np.asarray(y)
    actions = np.zeros(y.shape[0], dtype=np.int64)
    actions[:-1] = (y[1:] == 1) & (y[:-1] != 1)
    return actions


def _check_spells(length, depth) -> tuple[tuple[int, int], tuple[float, float]]:
    """The ranges of the spells' lengths and depths, checked."""
    try:
        low, high = (check_int(v, "spell_length", minimum=2) for v in length)
    except (TypeError, ValueError):
        low = high = None
    if low is None or high <= low:
        raise ValueError(
            "spell_length must be two integers (shortest, longest + 1) with "
            f"2 <= shortest < longest + 1, got {length!r}."
        )
    try:
        shallow, deep = (float(v) for v in depth)
    except (TypeError, ValueError):
        shallow = deep = np.nan
    if not (0 < shallow <= deep < np.inf):
        raise ValueError(
            "spell_depth must be two numbers (shallowest, deepest) with "
            f"0 < shallowest <= deepest, got {depth!r}."
        )
    return (low, high), (shallow, deep)


def _spells(rng, n_samples, onset, n_spells, lengths, depths) -> np.ndarray:
    """Shift of the second feature by environmental spells, in class-1 units.

    Each spell has a length drawn from ``lengths`` and a depth from
    ``depths`` (standard deviations of the undamaged class's second feature),
    reached smoothly (a Tukey window) and placed uniformly before ``onset``
    (or anywhere when the onset leaves no room); spells may overlap.
    """
    shift = np.zeros(n_samples)
    scale = np.sqrt(_VARIANCES[0, 1])
    for _ in range(n_spells):
        length = min(int(rng.randint(*lengths)), n_samples)
        room = onset - length if onset - length > 0 else n_samples - length
        begin = int(rng.randint(room + 1))
        depth = rng.uniform(*depths) * scale
        shift[begin : begin + length] += depth * tukey(length, alpha=0.5)
    return shift


def make_degradation_stream(
    n_cycles: int = 6,
    n_per_cycle: int = 2000,
    *,
    tail_df: float = 6.0,
    length_concentration: float = 100.0,
    damage_onset: int | None = 0,
    n_spells: int = 0,
    spell_length: tuple[int, int] = (100, 400),
    spell_depth: tuple[float, float] = (3.0, 8.0),
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Generate the synthetic degradation-and-repair stream of four health states.

    The structure starts undamaged (class 1) and degrades through minor (2),
    significant (3) and critical damage (4); a repair then returns it to class
    1 and the cycle starts again. Each observation has two features whose
    class-conditional distributions follow those of the data set used in the
    paper's synthetic case study (Hughes et al., section 3.1).

    Parameters
    ----------
    n_cycles : int, default=6
        Number of degradation-repair cycles.
    n_per_cycle : int, default=2000
        Observations per cycle (at least 4: every state is visited).
    tail_df : float, default=6.0
        Degrees of freedom of the Student-t distribution of the second feature,
        which makes it heavier-tailed than a Gaussian (excess kurtosis
        ``6 / (tail_df - 4)`` for ``tail_df > 4``). Must exceed 2 for a finite
        variance; ``np.inf`` gives a Gaussian.
    length_concentration : float, default=100.0
        Concentration of the symmetric Dirichlet distribution from which each
        cycle draws the shares of its four class segments. The classes are
        balanced on average; the larger the value, the less the segment
        lengths vary (with 100 and 2000 points per cycle, a segment has
        500 +/- 43 points).
    damage_onset : int or None, default=0
        Index of the first observation that may be in significant (3) or
        critical (4) damage. Before it every cycle stops at minor damage
        (class 2): the states of the cycles are capped at 2 there, and the
        repair that ends the cycle is taken from minor damage. ``None``: no
        observation is damaged beyond minor damage (a campaign in which
        damage never comes). The default, 0, is the paper's stream.
    n_spells : int, default=0
        Environmental spells (the frost of a bridge): runs of observations
        whose second feature is pushed up, whatever the state, by a depth
        drawn from ``spell_depth`` and reached smoothly. They are placed at
        random before ``damage_onset`` (anywhere when it leaves no room) and
        may overlap. 0, the paper's stream, has none.
    spell_length : tuple of int, default=(100, 400)
        ``(shortest, longest + 1)`` observations of a spell.
    spell_depth : tuple of float, default=(3.0, 8.0)
        ``(shallowest, deepest)`` shift of a spell at its middle, in standard
        deviations of the undamaged state's second feature.
    random_state : int, RandomState instance or None, default=None
        Seed of the generator; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_cycles * n_per_cycle, 2)
        Features, in temporal order.
    y : ndarray of int of shape (n_cycles * n_per_cycle,)
        Health states ``1..4``; within each cycle they are non-decreasing.
    actions : ndarray of int of shape (n_cycles * n_per_cycle,)
        Action taken after each observation, as indices of the actions of
        :func:`~skrbal.synthetic_decision_process`: ``actions[t] = 1``
        (repair) exactly when ``y[t] != 1`` and ``y[t + 1] == 1``, the last
        observation of each cycle but the final one; otherwise 0 (do nothing).
        The final entry is 0.

    See Also
    --------
    stream_test_split : Split the stream into a test set and a stream to learn
        from, as in the paper's protocol.
    skrbal.synthetic_decision_process : The matching decision process.

    Notes
    -----
    The first feature of class ``k`` is Gaussian; the second is a Student-t
    variable scaled to the target variance. Means and variances per class:

    ======  ===============  =============
    class   mean             variance
    ======  ===============  =============
    1       (-5.19, -0.01)   (0.68, 0.70)
    2       (-0.66, -0.06)   (0.71, 0.91)
    3       (5.75, -0.11)    (0.63, 0.55)
    4       (19.11, 0.02)    (0.71, 0.82)
    ======  ===============  =============

    The features are independent given the class, and observations are
    independent given their classes. Every transition ``(y[t], actions[t]) ->
    y[t + 1]`` has positive probability under the synthetic decision process:
    without repair the state stays or worsens, and a repair leads to class 1.
    The published data set has 11997 points (one cycle of 1997, five of
    2000); the default gives 12000.

    ``damage_onset`` changes the states only, not the random draws: the
    segment lengths are those of the stream with the same seed and
    ``damage_onset=0``, and a later onset turns the significant and critical
    damage before it into minor damage. The spells are drawn after
    everything else, so they add to the features of the stream with the same
    seed and no spells.

    References
    ----------
    .. [1] A. J. Hughes, P. A. Gardner, L. A. Bull, N. Dervilis and K. Worden,
       "On risk-based active learning for structural health monitoring",
       Mechanical Systems and Signal Processing, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skrbal.datasets import make_degradation_stream
    >>> X, y, actions = make_degradation_stream(
    ...     n_cycles=2, n_per_cycle=100, random_state=0
    ... )
    >>> X.shape, y.shape, actions.shape
    ((200, 2), (200,), (200,))
    >>> [int(v) for v in np.unique(y)]
    [1, 2, 3, 4]
    >>> int(actions.sum())  # one repair, between the two cycles
    1
    >>> int(y[np.flatnonzero(actions)[0] + 1])
    1

    Damage that comes late, in the second cycle's last 40 observations only:

    >>> _, y, _ = make_degradation_stream(
    ...     n_cycles=2, n_per_cycle=100, damage_onset=160, random_state=0
    ... )
    >>> int(np.flatnonzero(y >= 3)[0]) >= 160, int(y[:160].max())
    (True, 2)

    Environmental spells on the same stream:

    >>> kwargs = dict(n_cycles=2, n_per_cycle=100, damage_onset=160, random_state=0)
    >>> X, _, _ = make_degradation_stream(**kwargs)
    >>> X_spells, _, _ = make_degradation_stream(
    ...     n_spells=2, spell_length=(20, 40), **kwargs
    ... )
    >>> bool(np.all(X_spells[:, 0] == X[:, 0])), bool(X_spells[:, 1].max() > 2.0)
    (True, True)
    """
    n_cycles = check_int(n_cycles, "n_cycles", minimum=1)
    n_per_cycle = check_int(n_per_cycle, "n_per_cycle", minimum=_N_STATES)
    tail_df = check_positive_real(tail_df, "tail_df", above=2.0)
    concentration = check_positive_real(length_concentration, "length_concentration")
    n_samples = n_cycles * n_per_cycle
    if damage_onset is not None:
        damage_onset = check_int(damage_onset, "damage_onset", minimum=0)
        if damage_onset >= n_samples:
            raise ValueError(
                f"damage_onset={damage_onset} is beyond the last of the "
                f"{n_samples} observations (n_cycles * n_per_cycle); pass None "
                "for a stream without damage."
            )
    n_spells = check_int(n_spells, "n_spells", minimum=0)
    lengths, depths = _check_spells(spell_length, spell_depth)
    rng = check_random_state(random_state)

    segments = _segment_lengths(rng, n_cycles, n_per_cycle, concentration)
    states = np.tile(np.arange(1, _N_STATES + 1), n_cycles)
    y = np.repeat(states, segments.ravel())
    onset = n_samples if damage_onset is None else damage_onset
    y[:onset] = np.minimum(y[:onset], _MILD)

    std = np.sqrt(_VARIANCES[y - 1])
    first = rng.standard_normal(n_samples)
    if np.isinf(tail_df):
        second = rng.standard_normal(n_samples)
    else:
        # A Student-t with df degrees of freedom has variance df / (df - 2).
        second = rng.standard_t(tail_df, n_samples) * np.sqrt((tail_df - 2) / tail_df)
    X = _MEANS[y - 1] + std * np.column_stack([first, second])
    if n_spells:
        X[:, 1] += _spells(rng, n_samples, onset, n_spells, lengths, depths)
    return X, y, _repair_actions(y)
