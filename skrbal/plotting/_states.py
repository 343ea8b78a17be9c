"""One colour and one name per health state, shared by every figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from skrbal._decision import DecisionProcess

__all__ = ["StateStyle", "state_styles"]

# matplotlib's tab10, resolved (a state keeps its colour whatever the style's
# colour cycle) and reordered for health states: the first (undamaged,
# normal) green, then blue, orange and red for the fourth (failure, advanced
# damage), then the rest of tab10.
_HEALTH_PALETTE = (
    "#2ca02c",
    "#1f77b4",
    "#ff7f0e",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


class StateStyle(NamedTuple):
    """How a health state is drawn.

    Attributes
    ----------
    name : str
        Its name in legends and on axes.
    color : str
        Its colour, any matplotlib colour.
    """

    name: str
    color: str


def state_styles(
    states, *, names: Sequence[str] | None = None, colors: Sequence | None = None
) -> dict:
    """One colour and one name per health state, for every figure.

    Every display of :mod:`skrbal.plotting` draws a state with the style this
    function gives it, so a state has the same colour and name in the EVPI
    surfaces, the labelled-set proportions and the query histograms.

    Parameters
    ----------
    states : DecisionProcess or array-like of shape (n_states,)
        A decision process (its ``classes_`` and ``state_names``) or the
        state labels, in the process's order.
    names : sequence of str, default=None
        Names of the states, in the same order; the process's
        ``state_names`` by default, else ``'state <label>'``.
    colors : sequence of colours, default=None
        Colours of the states, in the same order; by default matplotlib's
        ``tab10`` colours ordered for health: green for the first state,
        blue, orange, red for the fourth, then purple, brown, pink, grey,
        olive and cyan.

    Returns
    -------
    styles : dict
        State label to :class:`StateStyle`, in the states' order.

    Raises
    ------
    ValueError
        If the labels repeat, ``names`` or ``colors`` have another length,
        or there are more than ten states and no ``colors`` (two states
        would share a colour).

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.plotting import state_styles
    >>> styles = state_styles(synthetic_decision_process())
    >>> styles[1]
    StateStyle(name='undamaged', color='#2ca02c')
    >>> styles[4]
    StateStyle(name='failure', color='#d62728')
    >>> state_styles(["a", "b"])["b"].name
    'state b'
    """
    if isinstance(states, DecisionProcess):
        labels = states.classes_.tolist()
        if names is None and states.state_names is not None:
            names = list(states.state_names)
    else:
        labels = np.asarray(states).ravel().tolist()
    if len(set(labels)) != len(labels):
        raise ValueError(f"states has repeated labels: {labels}.")
    if names is None:
        names = [f"state {label}" for label in labels]
    if len(names) != len(labels):
        raise ValueError(f"names has {len(names)} entries for {len(labels)} states.")
    if colors is None:
        if len(labels) > len(_HEALTH_PALETTE):
            raise ValueError(
                f"{len(labels)} states but {len(_HEALTH_PALETTE)} default "
                "colours: pass one colour per state in colors."
            )
        colors = _HEALTH_PALETTE[: len(labels)]
    if len(colors) != len(labels):
        raise ValueError(f"colors has {len(colors)} entries for {len(labels)} states.")
    return {
        label: StateStyle(str(name), color)
        for label, name, color in zip(labels, names, colors)
    }


def _match_states(labels, process=None, state_names=None) -> list[tuple]:
    """``(label, state, style)`` of each of ``labels``, in the states' order.

    ``labels`` may be text read from column names (``proportion_1`` names
    state ``1``): with a process, each is matched to the process's state of
    the same label (as given, then as text) and ordered as the process's
    states; a label the process lacks is an error. Without a process the
    labels are the states, in the order given.
    """
    labels = list(labels)
    if process is None:
        styles = state_styles(labels, names=state_names)
        return [(label, label, styles[label]) for label in labels]
    styles = state_styles(process, names=state_names)
    states = list(styles)
    by_text = {str(state): state for state in states}
    matched = []
    for label in labels:
        state = label if label in styles else by_text.get(str(label))
        if state is None:
            raise ValueError(
                f"{label!r} is not a state of the process; its states are {states}."
            )
        matched.append((label, state, styles[state]))
    return sorted(matched, key=lambda item: states.index(item[1]))
